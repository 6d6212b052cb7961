/* The symmetric collectives' resources of a GPU communicator: one internal
 * window of barrier flags (device/common/symm.h), mapped into every LSA
 * peer like any window. Made when the first NCCL_WIN_COLL_SYMMETRIC window
 * is registered (a collective call on every rank, with flags every rank
 * agreed on, so all make it together) and freed with the last. */
#include "api/device_api.h"
#include "api/window.h"
#include "base/err.h"
#include "comm/comm.h"
#include "device/common/symm.h"

/* Whether w counts for the symmetric kernels: a mapped window with the
 * flag, on a communicator of 2+ GPU ranks that all share one LSA team. */
static int window_symm_counts(const struct ncclComm* comm, const api_window_t* w) {
  return w->mapped && !w->internal && (w->flags & NCCL_WIN_COLL_SYMMETRIC) && comm->cudaDev >= 0 &&
         comm->nRanks >= 2 && api_team_lsa_size(comm) == comm->nRanks;
}

ncclResult_t api_window_symm_added(struct ncclComm* comm, const api_window_t* w) {
  if (!window_symm_counts(comm, w)) return ncclSuccess;
  if (!comm->symmRes) {
    api_window_t* res;
    MK_CHECK(api_window_create(comm, NULL, (size_t)mk_symm_res_bytes(comm->nRanks), 0, 0, &res));
    res->internal = 1;
    comm->symmRes = res;
    MK_INFO(NCCL_INIT, "Rank %d: symmetric collectives' barrier flags mapped (%llu bytes per rank)", comm->rank,
            (unsigned long long)mk_symm_res_bytes(comm->nRanks));
  }
  comm->symmWindows++;
  return ncclSuccess;
}

void api_window_symm_removing(struct ncclComm* comm, const api_window_t* w) {
  if (!window_symm_counts(comm, w) || comm->symmWindows <= 0) return;
  if (--comm->symmWindows > 0 || !comm->symmRes) return;
  api_window_destroy(comm->symmRes);
  comm->symmRes = NULL;
}

int api_window_symm_res(const struct ncclComm* comm, api_window_span_t* out) {
  const api_window_t* r = comm->symmRes;
  if (!r) return 0;
  *out = (api_window_span_t){(const char*)r->userPtr, r->size, r->flags, r->exec.lsaFlatBase,
                             (uint64_t)r->exec.stride4G << 32};
  return 1;
}
