/* Reduction operators as the executors see them: Avg becomes a
 * pre-multiplication by 1/nRanks (floating types) or a post-division by
 * nRanks (integers); ncclRedOpCreatePreMulSum's operators carry their scalar. */
#include <string.h>

#include "base/err.h"
#include "comm/comm.h"
#include "cuda/gpu.h"
#include "device/common/work.h"
#include "device/cuda/gpu_exec.h"
#include "device/host/host_types.h"
#include "plan/task.h"

/* The value v in the bits of `type` (what executors load). */
static uint64_t redop_scalar_bits(ncclDataType_t type, double v) {
  uint64_t bits = 0;
  switch (type) {
    case ncclFloat16: bits = host_float_to_half((float)v); break;
    case ncclBfloat16: bits = host_float_to_bf16((float)v); break;
    case ncclFloat8e4m3: bits = host_float_to_e4m3((float)v); break;
    case ncclFloat8e5m2: bits = host_float_to_e5m2((float)v); break;
    case ncclFloat32: {
      float f = (float)v;
      uint32_t u;
      memcpy(&u, &f, 4);
      bits = u;
      break;
    }
    case ncclFloat64: memcpy(&bits, &v, 8); break;
    default: bits = (uint64_t)(int64_t)v; break;
  }
  return bits;
}

static int redop_is_float(ncclDataType_t type) {
  return type == ncclFloat16 || type == ncclFloat32 || type == ncclFloat64 || type == ncclBfloat16 ||
         type == ncclFloat8e4m3 || type == ncclFloat8e5m2;
}

/* A device-resident scalar, read when the collective is called: on a host
 * communicator it is host memory; on a GPU one it is device memory, which
 * the host cannot load: copied once the work already on the stream is done
 * (NCCL's kernels read it when they run; a stream being captured into a
 * graph cannot be waited for, so there it is refused). The work runs in
 * the communicator's context; the caller's is given back. */
static ncclResult_t redop_gpu_scalar(const char* fn, const void* ptr, size_t ts, void* stream, uint64_t* bits) {
  const cuda_gpu_t* g = cuda_gpu();
  if (!g) return MK_FAIL(ncclInvalidUsage, "%s: a device-resident scalar on a GPU communicator needs the CUDA driver", fn);
  int status = CU_STREAM_CAPTURE_STATUS_NONE;
  CU_CHECK(g->stream_is_capturing((cu_stream_t)stream, &status));
  if (status != CU_STREAM_CAPTURE_STATUS_NONE)
    return MK_FAIL(ncclInvalidUsage, "%s: a device-resident PreMulSum scalar cannot be read in a stream being captured", fn);
  CU_CHECK(g->stream_synchronize((cu_stream_t)stream));
  CU_CHECK(g->memcpy_dtoh(bits, (cu_deviceptr_t)(uintptr_t)ptr, ts));
  return ncclSuccess;
}

static ncclResult_t redop_device_scalar(struct ncclComm* comm, const char* fn, const void* ptr, size_t ts,
                                        void* stream, uint64_t* bits) {
  if (comm->cudaDev < 0) {
    memcpy(bits, ptr, ts);
    return ncclSuccess;
  }
  void* callerCtx = NULL;
  MK_CHECK(gpu_exec_ctx_save(&callerCtx));
  ncclResult_t res = gpu_exec_bind(comm);
  if (res == ncclSuccess) res = redop_gpu_scalar(fn, ptr, ts, stream, bits);
  gpu_exec_ctx_restore(callerCtx);
  return res;
}

ncclResult_t plan_redop_resolve(struct ncclComm* comm, const char* fn, ncclRedOp_t op, ncclDataType_t type,
                                void* stream, int* mkOp, uint64_t* scalar) {
  *scalar = 0;
  switch (op) {
    case ncclSum: *mkOp = MK_OP_SUM; return ncclSuccess;
    case ncclProd: *mkOp = MK_OP_PROD; return ncclSuccess;
    case ncclMax: *mkOp = MK_OP_MAX; return ncclSuccess;
    case ncclMin: *mkOp = MK_OP_MIN; return ncclSuccess;
    case ncclAvg:
      if (redop_is_float(type)) {
        *mkOp = MK_OP_PREMULSUM;
        *scalar = redop_scalar_bits(type, 1.0 / comm->nRanks);
      } else {
        *mkOp = MK_OP_SUMPOSTDIV;
        *scalar = (uint64_t)comm->nRanks;
      }
      return ncclSuccess;
    default: break;
  }
  int slot = (int)op - (int)ncclNumOps;
  if (slot < 0 || slot >= COMM_MAX_REDOPS || !comm->redOps[slot].used)
    return MK_FAIL(ncclInvalidArgument, "%s: invalid reduction operator %d", fn, (int)op);
  if (comm->redOps[slot].type != type)
    return MK_FAIL(ncclInvalidArgument, "%s: reduction operator %d was created for type %d, used with type %d", fn,
                   (int)op, (int)comm->redOps[slot].type, (int)type);
  *mkOp = MK_OP_PREMULSUM;
  uint64_t bits = 0;
  size_t ts = host_type_size(type);
  if (comm->redOps[slot].residence == ncclScalarDevice)
    MK_CHECK(redop_device_scalar(comm, fn, comm->redOps[slot].devPtr, ts, stream, &bits));
  else
    memcpy(&bits, &comm->redOps[slot].bits, ts);
  *scalar = bits;
  return ncclSuccess;
}

int plan_redop_is_identity(int mkOp, ncclDataType_t type, uint64_t scalar) {
  switch (mkOp) {
    case MK_OP_SUM:
    case MK_OP_PROD:
    case MK_OP_MAX:
    case MK_OP_MIN: return 1;
    case MK_OP_SUMPOSTDIV: return scalar == 1;
    case MK_OP_PREMULSUM: return scalar == redop_scalar_bits(type, 1.0);
    default: return 0;
  }
}
