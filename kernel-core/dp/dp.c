/* Bringing a communicator's data path up and down. */
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/log.h"
#include "base/param.h"
#include "channel/channel_setup.h"
#include "collnet/collnet.h"
#include "dp/dp_topo.h"
#include "comm/comm.h"
#include "exec/exec.h"
#include "netdev/netdev.h"
#include "dp/dp.h"
#include "proxy/proxy_replay.h"
#include "dp/dp_net.h"

static ncclResult_t dp_peers_fill(struct ncclComm* comm) {
  dp_state_t* dp = &comm->dp;
  dp->tr.peers = calloc((size_t)comm->nRanks, sizeof(mkcclPeer_v1));
  if (!dp->tr.peers) return MK_FAIL(ncclSystemError, "out of memory for %d peers", comm->nRanks);
  for (int r = 0; r < comm->nRanks; r++) {
    const comm_peer_info_t* pi = &comm->peerInfo[r];
    mkcclPeer_v1* p = &dp->tr.peers[r];
    p->rank = r;
    p->hostHash = pi->hostHash;
    p->pidHash = pi->pidHash;
    p->pid = pi->pid;
    p->cudaDev = pi->cudaDev;
    p->busId = pi->busId;
    p->pathType = pi->hostHash == comm->peerInfo[comm->rank].hostHash ? 9 /* PATH_SYS */ : 10 /* PATH_NET */;
    p->netDev = 0;
  }
  return ncclSuccess;
}

/* MKCCL_GPU_NCHANNELS=0: 64 channels where every rank has a GPU of its own
 * on this host and P2P may join them: a CTA's stores to a peer over NVLink
 * top out per SM, so the link fills only with many CTAs. Else 16: staged SHM and NET
 * copies gain nothing from more, and each channel holds an NCCL_BUFFSIZE
 * buffer per ring peer. */
static int64_t dp_gpu_channels_auto(struct ncclComm* comm) {
  if (param_NCCL_P2P_DISABLE() == 1) return 16;
  const comm_peer_info_t* me = &comm->peerInfo[comm->rank];
  for (int r = 0; r < comm->nRanks; r++) {
    const comm_peer_info_t* pi = &comm->peerInfo[r];
    if (pi->hostHash != me->hostHash) return 16;
    for (int q = 0; q < r; q++)
      if (comm->peerInfo[q].busId == pi->busId) return 16; /* ranks sharing a GPU */
  }
  return 64;
}

/* Whether host rings cross the network: several hosts, or ranks of one
 * host joined by a transport the proxy progresses (no transport moves
 * their data directly: shared memory switched off or not loaded). Decided
 * from what every rank knows alike (the same transports and switches, the
 * next rank on the same host), so all ranks size their channels the same. */
static int dp_host_net(const struct ncclComm* comm) {
  if (comm->cudaDev >= 0) return 0;
  if (comm->nNodes > 1) return 1;
  if (comm->nRanks < 2 || !comm->dp.tr.ready) return 0;
  const transport_entry_t* e = NULL;
  const dp_state_t* dp = &comm->dp;
  if (transport_pick(&dp->tr.set, &dp->tr.peers[comm->rank], &dp->tr.peers[(comm->rank + 1) % comm->nRanks], &e) !=
      ncclSuccess)
    return 0;
  return e && transport_entry_uses_proxy(e);
}

/* Host auto: a channel is an executor thread that copies and reduces, so
 * each rank gets the CPUs of its host shared by the ranks there (a process's
 * affinity mask) over the CPUs a channel needs, at most
 * MK_HOST_AUTO_CHANNELS.
 * Over shared memory a channel's thread gets two CPUs: its waits spin, and
 * one descheduled thread stalls its ring on every rank, so a thread on every
 * CPU makes most iterations several times slower than the fastest.
 * Over the network the executors make the net calls themselves (one flow
 * per peer asked of the net plugin, dp_net.c; each channel in its proxy
 * lane), so a channel is one thread: every CPU of a rank's share but one,
 * left to its proxy thread. */
#define MK_HOST_AUTO_CHANNELS 8

int64_t dp_host_channels_for(int64_t cpus, int hostRanks, int net) {
  int64_t share = hostRanks > 0 ? cpus / hostRanks : 0;
  int64_t n = net ? share - 1 : share / 2;
  return n < 1 ? 1 : n > MK_HOST_AUTO_CHANNELS ? MK_HOST_AUTO_CHANNELS : n;
}

/* Every rank takes the minimum over all ranks, so all agree even where
 * hosts differ. */
static int64_t dp_host_channels_auto(const struct ncclComm* comm) {
  int net = dp_host_net(comm);
  int64_t best = MK_HOST_AUTO_CHANNELS;
  for (int r = 0; r < comm->nRanks; r++) {
    int64_t n = dp_host_channels_for(comm->peerInfo[r].cpus, comm_peer_host_ranks(comm, r), net);
    if (n < best) best = n;
  }
  MK_INFO(NCCL_INIT, "%lld host channel(s): MKCCL_HOST_NCHANNELS=0, the fewest CPUs per rank of any host, %s",
          (long long)best, net ? "a CPU a channel and one for the proxy (network)" : "2 CPUs a channel (shared memory)");
  return best;
}

static int dp_channel_count(struct ncclComm* comm) {
  int64_t n = comm->cudaDev >= 0 ? param_MKCCL_GPU_NCHANNELS() : param_MKCCL_HOST_NCHANNELS();
  if (n == 0) n = comm->cudaDev >= 0 ? dp_gpu_channels_auto(comm) : dp_host_channels_auto(comm);
  /* ncclConfig_t's minCTAs/maxCTAs (NCCL_MIN_CTAS/NCCL_MAX_CTAS), then the older NCCL_[MIN|MAX]_NCHANNELS. */
  if (comm->config.minCTAs != NCCL_CONFIG_UNDEF_INT && n < comm->config.minCTAs) n = comm->config.minCTAs;
  if (comm->config.maxCTAs != NCCL_CONFIG_UNDEF_INT && n > comm->config.maxCTAs) n = comm->config.maxCTAs;
  int64_t lo = param_NCCL_MIN_NCHANNELS(), hi = param_NCCL_MAX_NCHANNELS();
  if (lo > 0 && n < lo) n = lo;
  if (hi > 0 && n > hi) n = hi;
  if (n < 1) n = 1;
  if (n > MK_MAX_CHANNELS) n = MK_MAX_CHANNELS;
  return (int)n;
}

/* GPU auto: a point-to-point transfer fills NVLink only with many CTAs, as
 * collectives do (dp_gpu_channels_auto), so up to 4 ranks take 64: a peer's
 * connections are made on first use, and 3 peers of 64 channels hold 768 MB
 * of buffers at most. More peers each hold 16. */
int dp_gpu_p2p_channels_for(int nRanks) { return nRanks <= 4 ? 64 : 16; }

/* Host point-to-point over the network: a peer's channels share one net
 * comm that the proxy thread progresses, so a second channel only contends
 * for it. */
int dp_p2p_channels_for(int64_t p2p, int userSet, int gpu, int hostNet, int nRanks, int nChannels) {
  if (gpu && p2p == 0) p2p = dp_gpu_p2p_channels_for(nRanks);
  if (!gpu && hostNet && !userSet) p2p = 1;
  if (p2p < 1) p2p = 1;
  return p2p < nChannels ? (int)p2p : nChannels;
}

static void dp_read_plan_params(struct ncclComm* comm) {
  dp_state_t* dp = &comm->dp;
  int gpu = comm->cudaDev >= 0, hostNet = dp_host_net(comm);
  param_id_t p2pId = gpu ? PARAM_ID_MKCCL_GPU_P2P_NCHANNELS : PARAM_ID_MKCCL_P2P_NCHANNELS;
  dp->par.p2pChannels = dp_p2p_channels_for(param_core_int(p2pId), param_core_source(p2pId, NULL) != PARAM_FROM_DEFAULT, gpu,
                                        hostNet, comm->nRanks, dp->ch.nChannels);
  /* Host rings over the network count a channel's bytes per rank (what one
   * ring step moves). */
  dp->par.channelMinBytes = gpu       ? param_MKCCL_GPU_CHANNEL_MIN_BYTES()
                        : hostNet ? param_MKCCL_NET_CHANNEL_MIN_BYTES()
                                  : param_MKCCL_CHANNEL_MIN_BYTES();
  dp->par.channelBytesPerRank = !gpu && hostNet;
  dp->par.gpuLLChannelBytes = param_MKCCL_GPU_LL_CHANNEL_BYTES();
  /* FLAT is no NCCL algorithm: where NCCL_ALGO or NCCL_PROTO says what may run, it does not. */
  const char* algo = param_NCCL_ALGO();
  const char* proto = param_NCCL_PROTO();
  int userChoice = (algo && algo[0]) || (proto && proto[0]);
  dp->par.flatMaxBytes = userChoice ? 0
                     : !gpu     ? param_MKCCL_FLAT_MAX_BYTES()
                     : dp->ch.ringLL ? param_MKCCL_GPU_FLAT_MAX_BYTES()
                                  : 0;
  dp->par.netFlatMaxBytes = hostNet && !userChoice ? param_MKCCL_NET_FLAT_MAX_BYTES() : 0;
  dp->par.netFlatChunk = param_MKCCL_NET_FLAT_CHUNK_BYTES();
  dp->par.netFlatMaxRanks = (int)param_MKCCL_NET_FLAT_MAX_RANKS();
  dp->par.ringRegByAddr = param_MKCCL_HOST_RING_REG_ADDR() != 0;
  dp->par.gpuLLMaxBytes = gpu && !userChoice && dp->ch.ringLL ? param_MKCCL_GPU_LL_MAX_BYTES() : 0;
  /* Symmetric kernels are no NCCL algorithm either. */
  dp->par.symmMaxBytes = gpu && !userChoice ? param_MKCCL_SYMM_MAX_BYTES() : 0;
  dp->par.symmOneShotMaxBytes = param_MKCCL_SYMM_ONESHOT_MAX_BYTES();
  dp->par.symmChannelBytes = param_MKCCL_SYMM_CHANNEL_BYTES();
  int64_t batch = param_NCCL_WORK_FIFO_BYTES() / 2 / (int64_t)sizeof(mk_work_t);
  dp->par.workBatch = batch < 1 ? 1 : (int)batch;
}

/* Whether this rank's ring connections all have LL lines (a transport gives
 * them at setup where it offers them). */
static int dp_my_rings_have_ll(const struct ncclComm* comm) {
  const dp_state_t* dp = &comm->dp;
  if (comm->cudaDev < 0 || dp->ch.llBuffSize <= 0 || comm->nRanks < 2) return 0;
  for (int c = 0; c < dp->ch.nChannels; c++) {
    const channel_t* ch = &dp->ch.channels[c];
    const connector_t* s = &ch->peers[ch->ring.next].send[MK_CONN_COLL];
    const connector_t* r = &ch->peers[ch->ring.prev].recv[MK_CONN_COLL];
    if (!s->connected || !r->connected || !s->info.buffs[MKCCL_PROTO_LL] || !r->info.buffs[MKCCL_PROTO_LL]) return 0;
  }
  return 1;
}

/* The GPU kernels run LL on rings only where every rank's ring connections
 * have LL lines: a protocol is chosen per collective on each rank alone, and
 * ranks of one ring running different protocols would wait on each other for
 * ever (8 GPUs on 2 hosts: the ranks next to the NET hop have none). */
static ncclResult_t dp_rings_ll_agree(struct ncclComm* comm) {
  dp_state_t* dp = &comm->dp;
  dp->ch.ringLL = 0;
  if (comm->nRanks < 2) return ncclSuccess; /* every rank takes part, host ranks with a 0 */
  return comm_all_agree(comm, dp_my_rings_have_ll(comm), &dp->ch.ringLL, "whether rings have LL lines");
}

/* Host rings over shared memory on one channel (a host with few CPUs for
 * its ranks) move each rank's whole piece through one
 * pair of connections. Smaller steps there let the reader start on a slice
 * sooner and keep a slice within a core's L2. Not where ranks outnumber a host's
 * CPUs: a writer then runs ahead while its reader is off the CPU. With more
 * channels each channel's pieces are small already, and over sockets bigger
 * messages do better, so only there; NCCL_BUFFSIZE set by the user
 * (environment or manifest) always wins. */
int64_t dp_host_buffsize_for(int64_t ncclBuff, int userSet, int host, int net, int nChannels, int oversubscribed,
                             int64_t oneChannelShm) {
  return !userSet && host && !net && nChannels == 1 && !oversubscribed && oneChannelShm > 0 ? oneChannelShm : ncclBuff;
}

/* Whether some host has more ranks than CPUs they may keep busy (the same
 * answer on every rank). */
static int dp_hosts_oversubscribed(const struct ncclComm* comm) {
  for (int r = 0; r < comm->nRanks; r++)
    if (comm_peer_host_ranks(comm, r) > comm->peerInfo[r].cpus) return 1;
  return 0;
}

static ncclResult_t dp_buffsize_check(const char* name, int64_t buff) {
  if (buff < 64 * MKCCL_STEPS || buff > (1 << 30))
    return MK_FAIL(ncclInvalidArgument, "%s=%lld out of range (%d to %d)", name, (long long)buff, 64 * MKCCL_STEPS,
                   1 << 30);
  return ncclSuccess;
}

ncclResult_t dp_init(struct ncclComm* comm) {
  dp_state_t* dp = &comm->dp;
  ncclResult_t res = ncclSuccess;
  int64_t buff = param_NCCL_BUFFSIZE();
  int64_t oneChannelShm = param_MKCCL_HOST_SHM_BUFFSIZE();
  MK_CHECK(dp_buffsize_check("NCCL_BUFFSIZE", buff));
  if (oneChannelShm != 0) MK_CHECK(dp_buffsize_check("MKCCL_HOST_SHM_BUFFSIZE", oneChannelShm));
  int64_t ll = param_NCCL_LL_BUFFSIZE();
  if (ll < 0 || ll > (1 << 30)) return MK_FAIL(ncclInvalidArgument, "NCCL_LL_BUFFSIZE=%lld out of range", (long long)ll);
  dp->ch.llBuffSize = (int)(ll / (16 * MKCCL_STEPS) * (16 * MKCCL_STEPS));
  /* A GPU rank's init thread works in its device's context. */
  dp->exec.ops = exec_for(comm);
  MK_CHECK(dp->exec.ops->bind(comm));
  MK_CHECK(dp_peers_fill(comm));
  MK_CHECK_GOTO(dp_net_open(comm), res, fail_peers);
  MK_CHECK_GOTO(dp_topo_open(comm), res, fail_net);
  MK_CHECK_GOTO(netdev_comm_open(comm), res, fail_net);
  MK_CHECK_GOTO(transport_set_init(comm, &dp->tr.set), res, fail_net);
  dp->tr.ready = 1;
  MK_CHECK_GOTO(proxy_client_attach(&dp->proxy, comm->abortFlag, comm->rank), res, fail_transports);
  dp->proxyAttached = 1;
  dp->proxy.profile = &comm->profile;
  dp->proxy.timeoutSec = param_MKCCL_TIMEOUT(); /* bounds the flush of finalize and destroy */
  int nChannels = dp_channel_count(comm);
  int host = comm->cudaDev < 0;
  /* The oversubscription scan is O(ranks^2): host communicators only. */
  int oversubscribed = host && dp_hosts_oversubscribed(comm), net = dp_host_net(comm);
  dp->par.hostShmCores = host && !net && !oversubscribed;
  buff = dp_host_buffsize_for(buff, param_core_source(PARAM_ID_NCCL_BUFFSIZE, NULL) != PARAM_FROM_DEFAULT, host, net, nChannels,
                              oversubscribed, oneChannelShm);
  dp->ch.buffSize = (int)(buff / (16 * MKCCL_STEPS) * (16 * MKCCL_STEPS));
  MK_CHECK_GOTO(channel_setup(comm, nChannels), res, fail_proxy);
  MK_CHECK_GOTO(channel_connect_rings(comm), res, fail_channels);
  MK_CHECK_GOTO(dp_rings_ll_agree(comm), res, fail_channels);
  dp_read_plan_params(comm);
  /* GPU FLAT's connections are made here, with every rank present, not at
   * the first small AllReduce: making them has all ranks agree on LL lines,
   * and a rank stuck before that call (never calling it) would hold the
   * others in that exchange instead of in the kernel, whose waits end in
   * ncclRemoteError after MKCCL_TIMEOUT. */
  if (comm->cudaDev >= 0 && dp->par.flatMaxBytes > 0 && comm->nRanks > 1)
    MK_CHECK_GOTO(channel_connect_algo(comm, MK_ALGO_FLAT, MK_COLL_ALLREDUCE, -1), res, fail_channels);
  MK_CHECK_GOTO(collnet_comm_open(comm), res, fail_channels);
  MK_CHECK_GOTO(dp->exec.ops->create(comm, &dp->exec.state), res, fail_collnet);
  MK_INFO(NCCL_INIT, "Rank %d: data path ready, %d channel(s), %d-byte buffers, net %s", comm->rank, dp->ch.nChannels,
          dp->ch.buffSize, dp->net.api ? "present" : "none");
  return ncclSuccess;
fail_collnet:
  collnet_comm_close(comm);
fail_channels:
  channel_free_all(comm);
fail_proxy:
  proxy_client_detach(&dp->proxy);
  dp->proxyAttached = 0;
fail_transports:
  transport_set_fini(&dp->tr.set);
  dp->tr.ready = 0;
fail_net:
  netdev_comm_close(comm);
  dp_net_close(comm);
fail_peers:
  free(dp->tr.peers);
  dp->tr.peers = NULL;
  if (comm->cudaDev >= 0) transport_services_gpu_release(comm);
  dp->exec.ops->unbind(comm);
  return res;
}

void dp_fini(struct ncclComm* comm) {
  dp_state_t* dp = &comm->dp;
  if (dp->exec.ops && dp->exec.ops->bind(comm) == ncclSuccess) dp->exec.ops->destroy(dp->exec.state);
  dp->exec.state = NULL;
  /* Ops still queued complete (or are dropped when aborting) before the
   * connectors they use go away. */
  if (dp->proxyAttached) proxy_client_detach(&dp->proxy);
  dp->proxyAttached = 0;
  proxy_replay_free_all(&dp->graphOps);
  collnet_comm_close(comm);
  channel_free_all(comm);
  if (dp->tr.ready) transport_set_fini(&dp->tr.set);
  dp->tr.ready = 0;
  netdev_comm_close(comm);
  dp_net_close(comm);
  free(dp->tr.peers);
  dp->tr.peers = NULL;
  if (comm->cudaDev >= 0) transport_services_gpu_release(comm);
  if (dp->exec.ops) dp->exec.ops->unbind(comm);
}

/* ---- the communicator stage -------------------------------------------------------------------- */
ncclResult_t comm_dp_stage_init(struct ncclComm* comm) { return dp_init(comm); }

/* Flush: every op posted to the proxy is done, or dropped (an abort, or no
 * progress for MKCCL_TIMEOUT: proxy_client_flush decides and warns). An
 * error becomes the communicator's async error and the caller's result. */
ncclResult_t comm_dp_stage_finalize(struct ncclComm* comm) {
  if (!comm->dp.proxyAttached) return ncclSuccess;
  ncclResult_t res = proxy_client_flush(&comm->dp.proxy, "flush of ncclCommFinalize/ncclCommDestroy");
  if (res != ncclSuccess) comm_async_error_set(comm, res);
  /* Work the flush dropped because the peer watch failed the communicator
   * (a peer died): that failure is the answer. Nothing dropped: nothing lost. */
  char why[WATCH_TEXT_MAX];
  if (res == ncclSuccess && proxy_client_dropped(&comm->dp.proxy) &&
      watch_failure(comm, why, sizeof(why)) != WATCH_FAIL_NONE)
    res = MK_FAIL(ncclRemoteError, "Rank %d: queued work was dropped, the communicator failed: %s", comm->rank, why);
  return res;
}

void comm_dp_stage_destroy(struct ncclComm* comm) { dp_fini(comm); }
