/* User reduction operators (ncclRedOpCreatePreMulSum / ncclRedOpDestroy). */
#include <string.h>

#include "api/api.h"
#include "base/err.h"
#include "comm/comm.h"
#include "base/dtype.h"

MK_API(ncclResult_t, RedOpCreatePreMulSum, ncclRedOp_t* op, void* scalar, ncclDataType_t datatype,
       ncclScalarResidence_t residence, ncclComm_t comm) {
  const char* fn = "ncclRedOpCreatePreMulSum";
  MK_CHECK(comm_check_usable(comm, fn));
  if (!op) return MK_FAIL(ncclInvalidArgument, "%s: op is NULL", fn);
  if (!scalar) return MK_FAIL(ncclInvalidArgument, "%s: scalar is NULL", fn);
  if ((int)datatype < 0 || datatype >= ncclNumTypes)
    return MK_FAIL(ncclInvalidArgument, "%s: invalid data type %d", fn, (int)datatype);
  if (residence != ncclScalarDevice && residence != ncclScalarHostImmediate)
    return MK_FAIL(ncclInvalidArgument, "%s: invalid scalar residence %d", fn, (int)residence);
  for (int i = 0; i < COMM_MAX_REDOPS; i++) {
    comm_redop_t* r = &comm->redOps[i];
    if (r->used) continue;
    memset(r, 0, sizeof(*r));
    r->used = 1;
    r->type = datatype;
    r->residence = residence;
    if (residence == ncclScalarHostImmediate) memcpy(&r->bits, scalar, host_type_size(datatype));
    else r->devPtr = scalar;
    *op = (ncclRedOp_t)(ncclNumOps + i);
    return ncclSuccess;
  }
  return MK_FAIL(ncclInvalidUsage, "%s: all %d user operators of this communicator are in use", fn, COMM_MAX_REDOPS);
}

MK_API(ncclResult_t, RedOpDestroy, ncclRedOp_t op, ncclComm_t comm) {
  const char* fn = "ncclRedOpDestroy";
  MK_CHECK(comm_check_usable(comm, fn));
  int slot = (int)op - (int)ncclNumOps;
  if ((int)op < (int)ncclNumOps)
    return MK_FAIL(ncclInvalidArgument, "%s: operator %d is built in and cannot be destroyed", fn, (int)op);
  if (slot >= COMM_MAX_REDOPS || !comm->redOps[slot].used)
    return MK_FAIL(ncclInvalidArgument, "%s: operator %d was not created on this communicator", fn, (int)op);
  comm->redOps[slot].used = 0;
  return ncclSuccess;
}
