/* Teams of the device API, on the host: the world, the LSA team (the ranks
 * whose memory a rank reaches by load and store) and the rail (the ranks in
 * the same place of every LSA team). mkccl maps no peer's memory into a rank
 * yet (the device communicator is not implemented), so a rank's LSA team is
 * itself alone and its rail is the world. As in NCCL, a bad communicator
 * gives an empty team (or -1), the error coming from the next call that can
 * return one. */
#include "api/api.h"
#include "api/device_api.h"
#include "base/err.h"
#include "comm/comm.h"

/* LSA teams are consecutive world ranks, so rails are strided. */
int api_team_lsa_size(const struct ncclComm* comm) {
  (void)comm;
  return 1;
}

static int team_comm_ok(ncclComm_t comm, const char* fn) { return comm_check(comm, fn) == ncclSuccess; }

MK_API(ncclTeam_t, TeamWorld, ncclComm_t comm) {
  if (!team_comm_ok(comm, "ncclTeamWorld")) return (ncclTeam_t){0, 0, 0};
  return (ncclTeam_t){comm->nRanks, comm->rank, 1};
}

MK_API(ncclTeam_t, TeamLsa, ncclComm_t comm) {
  if (!team_comm_ok(comm, "ncclTeamLsa")) return (ncclTeam_t){0, 0, 0};
  int lsa = api_team_lsa_size(comm);
  return (ncclTeam_t){lsa, comm->rank % lsa, 1};
}

MK_API(ncclTeam_t, TeamRail, ncclComm_t comm) {
  if (!team_comm_ok(comm, "ncclTeamRail")) return (ncclTeam_t){0, 0, 0};
  int lsa = api_team_lsa_size(comm);
  return (ncclTeam_t){comm->nRanks / lsa, comm->rank / lsa, lsa};
}

/* A team member's world rank, seen from this rank's place in the team. */
MK_API(int, TeamRankToWorld, ncclComm_t comm, ncclTeam_t team, int rank) {
  if (!team_comm_ok(comm, "ncclTeamRankToWorld")) return -1;
  return comm->rank + (rank - team.rank) * team.stride;
}

MK_API(int, TeamRankToLsa, ncclComm_t comm, ncclTeam_t team, int rank) {
  if (!team_comm_ok(comm, "ncclTeamRankToLsa")) return -1;
  return comm->rank % api_team_lsa_size(comm) + (rank - team.rank) * team.stride;
}
