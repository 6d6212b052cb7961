/* What a device communicator's requirements ask for: refused where mkccl
 * does not build it, and the resource window's layout. */
#include <stdint.h>
#include <string.h>

#include "api/devcomm.h"
#include "base/err.h"

static size_t reqs_align_up(size_t x, size_t a) { return (x + a - 1) / a * a; }

/* What the requirements ask that mkccl does not build, or NULL. */
const char* api_devcomm_refusal(const ncclDevCommRequirements_t* reqs) {
  if (reqs->lsaMultimem) return "lsaMultimem: mkccl never creates NVLink multicast objects (multimem, NVLS)";
  for (const ncclTeamRequirements_t* t = reqs->teamRequirementsList; t; t = t->next)
    if (t->multimem) return "a team requirement asks for multimem: mkccl never creates NVLink multicast objects";
  return NULL;
}

ncclResult_t api_devcomm_gin_ids(ncclDevResourceRequirements_t* head, int nSignals, int nCounters, int* totalSignals,
                                 int* totalCounters, const char* fn) {
  for (int assign = 0; assign < 2; assign++) {
    int64_t sig = nSignals, cnt = nCounters;
    if (sig < 0 || cnt < 0)
      return MK_FAIL(ncclInvalidArgument, "%s: %d GIN signals and %d counters asked", fn, nSignals, nCounters);
    for (ncclDevResourceRequirements_t* r = head; r; r = r->next) {
      if (r->ginSignalCount < 0 || r->ginCounterCount < 0)
        return MK_FAIL(ncclInvalidArgument, "%s: a resource requirement asks for %d GIN signals and %d counters", fn,
                       r->ginSignalCount, r->ginCounterCount);
      if (assign && r->outGinSignalStart) *r->outGinSignalStart = (ncclGinSignal_t)sig;
      if (assign && r->outGinCounterStart) *r->outGinCounterStart = (ncclGinCounter_t)cnt;
      sig += r->ginSignalCount;
      cnt += r->ginCounterCount;
      /* GIN descriptors carry 16-bit signal and counter ids. */
      if (sig > 0xffff || cnt > 0xffff)
        return MK_FAIL(ncclInvalidArgument, "%s: more than 65535 GIN signals or counters in all", fn);
    }
    if (assign) *totalSignals = (int)sig, *totalCounters = (int)cnt;
  }
  return ncclSuccess;
}

/* Handles assigned in list order, each buffer on its alignment (at least
 * 128 bytes, the handle's unit); the total. Checked in a first pass, so
 * no handle is written when the list is refused. */
ncclResult_t api_devcomm_layout(ncclDevResourceRequirements_t* head, size_t* total, const char* fn) {
  for (int assign = 0; assign < 2; assign++) {
    size_t at = 0;
    for (ncclDevResourceRequirements_t* r = head; r; r = r->next) {
      size_t align = r->bufferAlign > MK_RESOURCE_UNIT ? r->bufferAlign : MK_RESOURCE_UNIT;
      if (align & (align - 1))
        return MK_FAIL(ncclInvalidArgument, "%s: bufferAlign %zu is not a power of two", fn, r->bufferAlign);
      at = reqs_align_up(at, align);
      if ((uint64_t)at / MK_RESOURCE_UNIT > UINT32_MAX || r->bufferSize > SIZE_MAX / 2 - at)
        return MK_FAIL(ncclInvalidArgument, "%s: resource buffers beyond what a handle reaches", fn);
      if (assign && r->outBufferHandle) *r->outBufferHandle = (ncclDevResourceHandle_t)(at / MK_RESOURCE_UNIT);
      at += r->bufferSize;
    }
    if (assign) *total = reqs_align_up(at, MK_RESOURCE_UNIT);
  }
  return ncclSuccess;
}

/* NCCL's rail GIN barrier as it lays it out: one epoch per barrier and GIN
 * context, its signals from signal0 (none are allocated without GIN, and
 * a rail team of one never signals). */
void api_devcomm_rail_barrier(int nBarriers, int signal0, ncclGinBarrierHandle_t* outHandle,
                              ncclDevResourceRequirements_t* outReq) {
  memset(outReq, 0, sizeof(*outReq));
  outReq->bufferSize = (size_t)nBarriers * MK_GIN_MAX_CONTEXTS * sizeof(uint32_t);
  outReq->bufferAlign = sizeof(uint32_t);
  outReq->outBufferHandle = &outHandle->bufHandle;
  outHandle->signal0 = (ncclGinSignal_t)signal0;
}
