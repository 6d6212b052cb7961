/* Stage "profile": the communicator's profiler context (the plugin's init,
 * which sets the activation mask). It comes before the data path so the
 * net plugin is opened with the profiler loaded, and goes after it, once
 * the proxy has finished every op that still reports events. */
#include "comm/comm.h"
#include "profile/profile.h"

ncclResult_t comm_profile_stage_init(struct ncclComm* comm) {
  return profile_comm_init(&comm->profile, comm->commHash, comm->commName, comm->nNodes, comm->nRanks, comm->rank);
}

void comm_profile_stage_destroy(struct ncclComm* comm) { profile_comm_fini(&comm->profile); }
