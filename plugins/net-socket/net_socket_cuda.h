/* Device visibility of the UNPACK queue (unpack mode): on a GPU
 * communicator the consumer's kernels read the handle, the metadata and the
 * bounce buffer, which are host memory of this plugin. A real UNPACK NIC
 * lands its pages in GPU memory; here they are host pages, page-locked and
 * mapped for the device through the process's CUDA driver. The driver is
 * looked up with dlopen(RTLD_NOLOAD): only a process that already loaded it
 * registers anything, and only with a CUDA context current (the core's init
 * thread of a GPU rank); host-only processes never load CUDA. */
#ifndef NET_SOCKET_CUDA_H
#define NET_SOCKET_CUDA_H

#include <stddef.h>

/* 1: registered (unregister later), 0: nothing to do here (no driver or no
 * context), -1: the driver refused (logged). */
int net_socket_cuda_register(void* p, size_t bytes);
void net_socket_cuda_unregister(void* p);

#endif
