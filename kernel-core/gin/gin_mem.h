/* The engine's memory ops (gin.h): a GPU communicator's, through the CUDA
 * driver loaded at run time, and plain host memory's. */
#ifndef MKCCL_GIN_GIN_MEM_H
#define MKCCL_GIN_GIN_MEM_H

#include "gin/gin.h"

/* Host memory: malloc'd, copies are memcpy (host communicators; tests). */
void gin_mem_host(gin_mem_ops_t* out);

/* The GPU whose context is `gpuCtx` (a CUcontext, current on the calling
 * thread): host memory it maps, its device memory, copies on a stream of
 * the engine's own that waits for no other. gin_mem_cuda_close frees it. */
ncclResult_t gin_mem_cuda_open(void* gpuCtx, gin_mem_ops_t* out);
void gin_mem_cuda_close(gin_mem_ops_t* ops);

#endif
