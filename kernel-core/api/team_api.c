/* Teams of the device API, on the host: the world, the LSA team (the ranks
 * whose memory a rank reaches by load and store: the GPU ranks of its host)
 * and the rail (the ranks in the same place of every LSA team). A host
 * communicator maps no peer's memory, so its LSA team is each rank alone.
 * As in NCCL, a bad communicator gives an empty team (or -1), the error
 * coming from the next call that can return one. */
#include "api/api.h"
#include "api/device_api.h"
#include "base/err.h"
#include "comm/comm.h"

static int team_gcd(int a, int b) {
  while (b) {
    int t = a % b;
    a = b;
    b = t;
  }
  return a;
}

/* LSA teams are consecutive world ranks of one host, all of one size, so
 * rails are strided: the greatest common divisor of the runs of ranks that
 * share a host (NCCL's rule; the same on every rank). */
int api_team_lsa_size(const struct ncclComm* comm) {
  if (comm->cudaDev < 0 || !comm->peerInfo || comm->nRanks < 1) return 1;
  int size = 0, run = 1;
  for (int r = 1; r <= comm->nRanks; r++) {
    if (r < comm->nRanks && comm->peerInfo[r].hostHash == comm->peerInfo[r - 1].hostHash) {
      run++;
      continue;
    }
    size = team_gcd(size, run);
    run = 1;
  }
  return size > 0 ? size : 1;
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
