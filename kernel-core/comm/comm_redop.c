/* Reduction operators as the executors see them: Avg becomes a
 * pre-multiplication by 1/nRanks (floating types) or a post-division by
 * nRanks (integers); ncclRedOpCreatePreMulSum's operators carry their scalar. */
#include <string.h>

#include "comm/comm_redop.h"

#include "base/dtype.h"
#include "base/err.h"
#include "comm/comm.h"
#include "device/common/work.h"

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

ncclResult_t comm_redop_resolve(struct ncclComm* comm, const char* fn, ncclRedOp_t op, ncclDataType_t type,
                                int* mkOp, uint64_t* scalar, int* scalarPtr) {
  *scalar = 0;
  *scalarPtr = 0;
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
  if (comm->redOps[slot].residence == ncclScalarDevice) {
    *scalar = (uint64_t)(uintptr_t)comm->redOps[slot].devPtr;
    *scalarPtr = 1;
  } else {
    *scalar = comm->redOps[slot].bits;
  }
  return ncclSuccess;
}

int comm_redop_is_identity(int mkOp, ncclDataType_t type, uint64_t scalar) {
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
