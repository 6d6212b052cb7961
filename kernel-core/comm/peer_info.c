/* Stage "peer-info": every rank learns every rank's host, process, device
 * and net devices; from that, which ranks share a node. A host is the
 * hostname plus the boot id plus the network namespace, so ranks in
 * different network namespaces (containers, `ip netns` in tests) count as
 * different hosts; NCCL_HOSTID replaces all three. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/err.h"
#include "base/param.h"
#include "comm/comm.h"
#include "mkccl_cpus.h"

/* FNV-1a, 64 bit. */
uint64_t comm_hash_bytes(uint64_t seed, const void* data, size_t len) {
  uint64_t h = seed ? seed : 0xcbf29ce484222325ull;
  const unsigned char* p = data;
  for (size_t i = 0; i < len; i++) {
    h ^= p[i];
    h *= 0x100000001b3ull;
  }
  return h;
}

static uint64_t comm_hash_str(uint64_t seed, const char* s) { return comm_hash_bytes(seed, s, strlen(s) + 1); }

static void comm_file_line(const char* path, char* buf, size_t len) {
  buf[0] = '\0';
  FILE* f = fopen(path, "r");
  if (!f) return;
  if (!fgets(buf, (int)len, f)) buf[0] = '\0';
  fclose(f);
  buf[strcspn(buf, "\n")] = '\0';
}

/* "net:[4026531840]": names the namespace. */
static void comm_ns_link(const char* path, char* buf, size_t len) {
  ssize_t n = readlink(path, buf, len - 1);
  buf[n > 0 ? n : 0] = '\0';
}

uint64_t comm_host_hash(void) {
  const char* hostId = param_NCCL_HOSTID();
  if (hostId && *hostId) return comm_hash_str(0, hostId);
  char host[256] = "", boot[128], netns[128];
  gethostname(host, sizeof(host) - 1);
  comm_file_line("/proc/sys/kernel/random/boot_id", boot, sizeof(boot));
  comm_ns_link("/proc/self/ns/net", netns, sizeof(netns));
  return comm_hash_str(comm_hash_str(comm_hash_str(0, host), boot), netns);
}

uint64_t comm_pid_hash(void) {
  char pidns[128];
  comm_ns_link("/proc/self/ns/pid", pidns, sizeof(pidns));
  int pid = (int)getpid();
  return comm_hash_bytes(comm_hash_str(comm_host_hash(), pidns), &pid, sizeof(pid));
}

int comm_peer_same_host(const struct ncclComm* comm, int a, int b) {
  return comm->peerInfo[a].hostHash == comm->peerInfo[b].hostHash;
}

int comm_peer_host_ranks(const struct ncclComm* comm, int r) {
  int same = 0;
  for (int q = 0; q < comm->nRanks; q++) same += comm_peer_same_host(comm, r, q);
  return same;
}

int comm_peer_same_process(const struct ncclComm* comm, int a, int b) {
  return comm->peerInfo[a].pidHash == comm->peerInfo[b].pidHash;
}

static void comm_peer_info_fill(struct ncclComm* comm, comm_peer_info_t* me) {
  memset(me, 0, sizeof(*me));
  me->rank = comm->rank;
  me->cudaDev = comm->cudaDev;
  me->busId = comm->busId;
  me->pid = (int32_t)getpid();
  me->hostHash = comm_host_hash();
  me->pidHash = comm_pid_hash();
  gethostname(me->hostname, sizeof(me->hostname) - 1);
  me->nNetDevs = comm->nNetDevs < COMM_NET_DEVS_MAX ? comm->nNetDevs : COMM_NET_DEVS_MAX;
  memcpy(me->netDevs, comm->netDevs, sizeof(int) * (size_t)me->nNetDevs);
  me->cpus = mkccl_cpus_usable(); /* what host executors and helper threads share */
  me->watchPort = comm->watch.port;
}

/* Nodes in order of their first rank; this rank's local ranks. */
static ncclResult_t comm_nodes_compute(struct ncclComm* comm) {
  int n = comm->nRanks;
  uint64_t* hosts = malloc(sizeof(uint64_t) * (size_t)n);
  comm->localRankToRank = malloc(sizeof(int) * (size_t)n);
  if (!hosts || !comm->localRankToRank) {
    free(hosts);
    return MK_FAIL(ncclSystemError, "out of memory for %d ranks", n);
  }
  int nNodes = 0;
  for (int r = 0; r < n; r++) {
    int node = 0;
    while (node < nNodes && hosts[node] != comm->peerInfo[r].hostHash) node++;
    if (node == nNodes) hosts[nNodes++] = comm->peerInfo[r].hostHash;
    if (r == comm->rank) comm->node = node;
  }
  comm->nNodes = nNodes;
  comm->localRanks = 0;
  for (int r = 0; r < n; r++) {
    if (!comm_peer_same_host(comm, r, comm->rank)) continue;
    if (r == comm->rank) comm->localRank = comm->localRanks;
    comm->localRankToRank[comm->localRanks++] = r;
  }
  free(hosts);
  return ncclSuccess;
}

ncclResult_t comm_peer_info_stage_init(struct ncclComm* comm) {
  comm->peerInfo = calloc((size_t)comm->nRanks, sizeof(comm_peer_info_t));
  if (!comm->peerInfo) return MK_FAIL(ncclSystemError, "out of memory for peer info");
  ncclResult_t res = ncclSuccess;
  comm_peer_info_fill(comm, &comm->peerInfo[comm->rank]);
  MK_CHECK_GOTO(bootstrap_allgather(comm->bootstrap, comm->peerInfo, sizeof(comm_peer_info_t)), res, fail);
  for (int r = 0; r < comm->nRanks; r++) {
    const comm_peer_info_t* p = &comm->peerInfo[r];
    if (p->rank != r) {
      res = MK_FAIL(ncclInternalError, "peer info of rank %d says rank %d", r, p->rank);
      goto fail;
    }
    /* Two ranks on one GPU is a usage error, as in NCCL (MKCCL_ALLOW_SAME_GPU
     * permits it, to test GPU transports on a machine with one GPU). */
    if (r != comm->rank && p->busId >= 0 && p->hostHash == comm->peerInfo[comm->rank].hostHash &&
        p->busId == comm->busId && !param_MKCCL_ALLOW_SAME_GPU()) {
      res = MK_FAIL(ncclInvalidUsage, "Duplicate GPU detected: rank %d and rank %d both on busId %llx", comm->rank, r,
                    (unsigned long long)p->busId);
      goto fail;
    }
  }
  MK_CHECK_GOTO(comm_nodes_compute(comm), res, fail);
  return ncclSuccess;
fail:
  comm_peer_info_stage_destroy(comm);
  return res;
}

void comm_peer_info_stage_destroy(struct ncclComm* comm) {
  free(comm->peerInfo);
  free(comm->localRankToRank);
  comm->peerInfo = NULL;
  comm->localRankToRank = NULL;
}
