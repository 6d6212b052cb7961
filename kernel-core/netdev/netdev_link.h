/* Linking a net-device plugin's device code with the core's at run time
 * (docs/UNPACK.md): nvJitLink, opened with dlopen (never a link-time
 * dependency), links the two into a cubin for the device's arch: LTO-IR
 * with -lto (the call-site kernel), or relocatable code (the collective
 * kernels: an LTO link would run ptxas over all of them at first init);
 * the result is cached on disk under a key hashed from every input, the
 * arch and the nvJitLink version, so only the first init pays. Loading the
 * cubin needs a GPU and is the GPU executor's business. */
#ifndef MKCCL_NETDEV_LINK_H
#define MKCCL_NETDEV_LINK_H

#include <stddef.h>
#include <stdint.h>

#include "nccl.h"

typedef struct {
  const void* data; /* LTO-IR, or a fatbin holding it */
  size_t size;
  const char* name; /* for nvJitLink's messages */
} netdev_link_input_t;

typedef enum { NETDEV_LINK_LINKED = 0, NETDEV_LINK_CACHED = 1 } netdev_link_source_t;
typedef enum { NETDEV_LINK_RELOCATABLE = 0, NETDEV_LINK_LTO = 1 } netdev_link_mode_t;

/* *cubin (malloc'd) for arch ("sm_90"); *source says whether nvJitLink ran.
 * ncclSystemError with a last-error text when nvJitLink cannot be opened,
 * ncclInvalidUsage when it refuses the inputs (its error log quoted). */
ncclResult_t netdev_link(const netdev_link_input_t* inputs, int n, const char* arch, netdev_link_mode_t mode,
                         void** cubin, size_t* size, netdev_link_source_t* source);

/* The core's side of the link: LTO-IR of the unpack call site
 * (device/cuda/netdev_unpack.cu); NULL when built without nvcc. */
const void* netdev_core_ltoir(size_t* size);
/* The core's collective kernels built to call a net-device plugin's unpack:
 * relocatable sm_90 code (device/cuda/kernels.cu, MKCCL_KERNEL_UNPACK); NULL
 * when built without nvcc. */
const void* netdev_core_kernels(size_t* size);

/* ---- the parts (netdev_jitlink.c, netdev_cache.c) ---- */

/* nvJitLink opened from MKCCL_NVJITLINK_LIBRARY; *version = major*1000+minor. */
ncclResult_t netdev_jitlink_version(int* version);
ncclResult_t netdev_jitlink_run(const netdev_link_input_t* inputs, int n, const char* arch, netdev_link_mode_t mode,
                                void** cubin, size_t* size);

/* FNV-1a 64 over every input (size and bytes), the arch, the mode and the linker version. */
uint64_t netdev_cache_key(const netdev_link_input_t* inputs, int n, const char* arch, netdev_link_mode_t mode,
                          int linkerVersion);
/* The cache folder ("" when caching is off), created if missing. */
void netdev_cache_dir(char* dir, size_t size);
/* 0 and *data (malloc'd) when a valid entry of the key is there. */
int netdev_cache_load(const char* dir, uint64_t key, const char* arch, void** data, size_t* size);
/* Written to a temporary file then renamed: readers never see half a file. */
ncclResult_t netdev_cache_store(const char* dir, uint64_t key, const char* arch, const void* data, size_t size);

#endif
