/* GPUDirect RDMA for net connections: whether a side's step buffers live in
 * GPU memory the net plugin reads or writes directly, and whether a receive
 * into them needs an iflush before the executor may read it. Pure
 * functions of what the plugin, the executor and the parameters say, so
 * tests check every branch without a GPU. */
#ifndef TRANSPORT_NET_GDR_H
#define TRANSPORT_NET_GDR_H

typedef struct {
  int deviceMem;  /* the executor is a GPU (mkcclConnSetup_v1.deviceMem) */
  int ptrSupport; /* the net device's NCCL_PTR_* bits */
  int offload;    /* a net device type other than HOST: it lands data in its own buffers */
  int isSend;
  int gdrLevel;   /* NCCL_NET_GDR_LEVEL as a path type, -1 unset */
  int gdrRead;    /* NCCL_NET_GDR_READ: 1, 0, -1 unset */
  int sm;         /* the GPU's compute capability x10 */
  int path;       /* path type from the GPU to the net device, -1 unknown */
} transport_net_gdr_in_t;

/* 1: this side's step buffers go in GPU memory, registered with
 * NCCL_PTR_CUDA. 0: host memory, and why (len bytes) says why. */
int transport_net_gdr_decide(const transport_net_gdr_in_t* in, char* why, int len);

/* Whether a receive that landed in GPU memory needs an iflush before the
 * executor reads it: GPUs before Hopper (sm_90) may see the completion
 * before the data (NCCL flushes there), and a plugin's forceFlush property
 * or MKCCL_NET_FORCE_FLUSH ask for it anyway. */
int transport_net_gdr_needs_flush(int sm, int forceFlushProp, int forceFlushParam);

#endif
