/* Planning: each queued task becomes work items for the executor (ring or
 * tree, as plan_tune picks) and proxy ops for the connectors that need a
 * proxy; both sides count steps with the same schedule
 * (device/common/sched_ring.h, sched_tree.h). */
#include <stdlib.h>
#include <string.h>

#include "api/mem_host.h"
#include "api/mem_reg.h"
#include "base/err.h"
#include "base/param.h"
#include "comm/comm.h"
#include "comm/comm_redop.h"
#include "channel/channel_setup.h"
#include "channel/channel_tree.h"
#include "device/common/sched_flat.h"
#include "device/common/sched_ring.h"
#include "device/common/sched_tree.h"
#include "device/common/shape.h"
#include "exec/exec.h"
#include "base/dtype.h"
#include "plan/plan_graph.h"
#include "plan/plan_profile.h"
#include "plan/plan_proxy.h"
#include "plan/plan_tune.h"
#include "plan/plan_steps.h"
#include "plan/plan_symm.h"
#include "plan/plan.h"

/* How many channels a collective of `bytes` uses: enough that each gets
 * MKCCL_CHANNEL_MIN_BYTES (over the network, each gets that much of every
 * rank's share: MKCCL_NET_CHANNEL_MIN_BYTES times the ranks), at most what
 * the communicator has. */
static int plan_channels(struct ncclComm* comm, size_t bytes) {
  int64_t per = comm->dp.par.channelMinBytes;
  if (comm->dp.par.channelBytesPerRank) per *= comm->nRanks;
  int64_t want = per > 0 ? (int64_t)(bytes / (size_t)per) : comm->dp.ch.nChannels;
  if (want < 1) want = 1;
  return want < comm->dp.ch.nChannels ? (int)want : comm->dp.ch.nChannels;
}

/* A host communicator of one: the result is the input (reduced with itself). */
static ncclResult_t plan_local(struct ncclComm* comm, const task_t* t) {
  return comm->dp.exec.ops->reduce_alone(comm->dp.exec.state, t->recvbuff, t->sendbuff, t->count, (int)t->type, t->op,
                                     t->scalar, t->scalarPtr);
}

/* Steps one channel's send and recv ring connectors move for an item
 * (plan/plan_steps.h; the ring order is the same on every channel). */
static void plan_ring_steps(struct ncclComm* comm, const mk_work_t* w, int64_t nLoops, uint64_t* sendSteps,
                            uint64_t* recvSteps) {
  int N = comm->nRanks;
  channel_t* ch = &comm->dp.ch.channels[w->channelLo];
  int hop = 0;
  for (int i = 0; i < N; i++)
    if (ch->ring.userRanks[i] == w->root) hop = sched_mod(ch->ring.index - i, N);
  plan_ring_conn_steps(w->coll, N, hop, nLoops, sendSteps, recvSteps);
}

/* Proxy subs of a ring item: one send and one recv connector per channel. */
static ncclResult_t plan_ring_proxy(struct ncclComm* comm, const mk_work_t* w, int64_t nLoops, int chunkSteps,
                                    int sliceSteps, plan_proxy_t* pp) {
  for (int c = w->channelLo; c < w->channelLo + w->nChannels; c++) {
    channel_t* ch = &comm->dp.ch.channels[c];
    uint64_t sendSteps, recvSteps;
    plan_ring_steps(comm, w, nLoops, &sendSteps, &recvSteps);
    MK_CHECK(plan_proxy_add(pp, &ch->peers[ch->ring.next].send[MK_CONN_COLL], sendSteps, w, chunkSteps, sliceSteps));
    MK_CHECK(plan_proxy_add(pp, &ch->peers[ch->ring.prev].recv[MK_CONN_COLL], recvSteps, w, chunkSteps, sliceSteps));
  }
  return ncclSuccess;
}

/* Proxy subs of a tree item: per tree peer of each channel (the tree the
 * executor runs: channel_tree_for), the steps its phases move each way
 * (plan_tree_conn_steps; a direction with none posts nothing). */
static ncclResult_t plan_tree_proxy(struct ncclComm* comm, const mk_work_t* w, int64_t nLoops, int chunkSteps,
                                    int sliceSteps, plan_proxy_t* pp) {
  for (int c = w->channelLo; c < w->channelLo + w->nChannels; c++) {
    channel_t* ch = &comm->dp.ch.channels[c];
    channel_tree_t t;
    channel_tree_for(ch, comm->nRanks, w->coll, w->root, &t);
    int peers[1 + MK_TREE_ARITY] = {t.up};
    for (int d = 0; d < MK_TREE_ARITY; d++) peers[1 + d] = t.down[d];
    for (int i = 0; i < 1 + MK_TREE_ARITY; i++) {
      if (peers[i] < 0) continue;
      uint64_t sendSteps, recvSteps;
      plan_tree_conn_steps(w->coll, i == 0, nLoops, &sendSteps, &recvSteps);
      MK_CHECK(plan_proxy_add(pp, &ch->peers[peers[i]].send[MK_CONN_COLL], sendSteps, w, chunkSteps, sliceSteps));
      MK_CHECK(plan_proxy_add(pp, &ch->peers[peers[i]].recv[MK_CONN_COLL], recvSteps, w, chunkSteps, sliceSteps));
    }
  }
  return ncclSuccess;
}

/* Proxy subs of a flat item, each way with every other rank on each of
 * its channels: one step, or direct's two steps a chunk
 * (device/common/sched_flat.h). */
static ncclResult_t plan_flat_proxy(struct ncclComm* comm, const mk_work_t* w, plan_proxy_t* pp) {
  int64_t ts = (int64_t)host_type_size((ncclDataType_t)w->type);
  uint64_t steps = 1;
  if (mk_flat_direct((int64_t)w->count * ts, w->chunkSize)) {
    mk_flat_shape_t s;
    mk_flat_shape(&s, (int64_t)w->count, comm->nRanks, w->nChannels, w->chunkSize / ts, mk_elem_align((int)ts));
    steps = mk_flat_conn_steps(s.nLoops);
  }
  for (int c = w->channelLo; c < w->channelLo + w->nChannels; c++) {
    channel_t* ch = &comm->dp.ch.channels[c];
    for (int r = 0; r < comm->nRanks; r++) {
      if (r == comm->rank) continue;
      MK_CHECK(plan_proxy_add(pp, &ch->peers[r].send[MK_CONN_COLL], steps, w, 1, 1));
      MK_CHECK(plan_proxy_add(pp, &ch->peers[r].recv[MK_CONN_COLL], steps, w, 1, 1));
    }
  }
  return ncclSuccess;
}

/* The tuner's answer for a collective task, asked once: plan_connected may
 * ask before the launch does. */
static ncclResult_t plan_task_tune(struct ncclComm* comm, task_t* t, int numPipeOps) {
  if (t->tuned) return ncclSuccess;
  if (plan_symm_choose(comm, t, &t->choice)) {
    t->tuned = 1;
    return ncclSuccess;
  }
  size_t totalBytes = t->count * host_type_size(t->type) * (t->coll == MK_COLL_ALLREDUCE ? 1 : (size_t)comm->nRanks);
  MK_CHECK(plan_tune_coll(comm, t, numPipeOps, plan_channels(comm, totalBytes), &t->choice));
  t->tuned = 1;
  return ncclSuccess;
}

/* Collectives planned together in one launch. */
static int plan_num_pipe_ops(const task_list_t* tasks) {
  int n = 0;
  for (const task_t* t = tasks->head; t; t = t->next) n += t->kind == TASK_COLL;
  return n;
}

/* Whether a collective task goes through plan_coll (others are local copies or nothing). */
static int plan_task_runs(const struct ncclComm* comm, const task_t* t) {
  return t->kind == TASK_COLL && t->count > 0 && comm->nRanks > 1;
}

int plan_connected(struct ncclComm* comm, task_list_t* tasks) {
  if (!plan_p2p_connected(comm, tasks)) return 0;
  int numPipeOps = plan_num_pipe_ops(tasks);
  for (task_t* t = tasks->head; t; t = t->next) {
    if (!plan_task_runs(comm, t)) continue;
    if (plan_task_tune(comm, t, numPipeOps) != ncclSuccess) return 0; /* the launch reports it */
    if (t->choice.algo == MK_ALGO_SYMM) continue; /* windows, not connections */
    if (!channel_algo_connected(comm, t->choice.algo, t->coll, t->root)) return 0;
  }
  return 1;
}

/* A host ring AllGather or Broadcast whose buffers lie in shareable host
 * memory or in registrations may hand them on by address
 * (device/host/host_prims_ptr.c). */
static void plan_coll_hostmem(const struct ncclComm* comm, const task_t* t, mk_work_t* w) {
  int gather = t->coll == MK_COLL_ALLGATHER;
  if (comm->cudaDev >= 0 || (!gather && t->coll != MK_COLL_BROADCAST) || t->choice.algo != MK_ALGO_RING ||
      t->choice.proto != MK_PROTO_SIMPLE || t->count == 0)
    return;
  size_t bytes = t->count * host_type_size(t->type), out = gather ? bytes * (size_t)comm->nRanks : bytes;
  if (t->sendbuff && mem_host_covers(t->sendbuff, bytes)) w->flags |= MK_WORK_SEND_HOSTMEM;
  if (t->recvbuff && mem_host_covers(t->recvbuff, out)) w->flags |= MK_WORK_RECV_HOSTMEM;
  /* Registered ones go by CMA, whose cost per call and page is in every
   * slice: ahead of the copy path on some machines, behind on others. */
  if (!comm->dp.par.ringRegByAddr) return;
  if (t->sendbuff && mem_reg_covers(comm, t->sendbuff, bytes)) w->flags |= MK_WORK_SEND_REG;
  if (t->recvbuff && mem_reg_covers(comm, t->recvbuff, out)) w->flags |= MK_WORK_RECV_REG;
}

void plan_coll_work(struct ncclComm* comm, const task_t* t, mk_work_t* w) {
  const task_choice_t choice = t->choice;
  memset(w, 0, sizeof(*w));
  w->coll = (uint8_t)t->coll;
  w->algo = (uint8_t)choice.algo;
  w->proto = (uint8_t)choice.proto;
  w->type = (uint8_t)t->type;
  w->op = (uint8_t)t->op;
  w->scalar = t->scalar;
  if (t->scalarPtr) w->flags |= MK_WORK_SCALAR_PTR;
  w->root = t->root;
  w->count = t->count;
  w->sendbuff = t->sendbuff;
  w->recvbuff = t->recvbuff;
  w->chunkSize = (int32_t)choice.chunkBytes;
  w->opCount = comm->dp.opCount++;
  w->channelLo = 0;
  w->nChannels = (uint8_t)choice.nChannels;
  comm->dp.algoCount[choice.algo]++;
  plan_coll_hostmem(comm, t, w);
}

static ncclResult_t plan_coll(struct ncclComm* comm, task_t* t, int numPipeOps, mk_work_t* w, plan_proxy_t* pp) {
  size_t ts = host_type_size(t->type);
  int N = comm->nRanks;
  MK_CHECK(plan_task_tune(comm, t, numPipeOps));
  if (t->choice.algo == MK_ALGO_SYMM) {
    /* Loads and stores of the peers' windows: no connection, no proxy. */
    plan_coll_work(comm, t, w);
    plan_profile_coll_start(comm, pp->profGroup, t, w);
    return plan_symm_work(comm, t, w);
  }
  MK_CHECK(channel_connect_algo(comm, t->choice.algo, t->coll, t->root));
  if (t->choice.algo == MK_ALGO_FLAT && comm->cudaDev >= 0 && !comm->dp.ch.flatLL) {
    /* Some pair has no LL lines (every rank learnt it when FLAT connected):
     * no GPU FLAT on this communicator, this call included. */
    comm->dp.par.flatMaxBytes = 0;
    t->tuned = 0;
    MK_CHECK(plan_task_tune(comm, t, numPipeOps));
    MK_CHECK(channel_connect_algo(comm, t->choice.algo, t->coll, t->root));
  }
  const task_choice_t choice = t->choice;
  int algo = choice.algo;
  int chunkSteps, sliceSteps;
  mk_coll_shape_proto(t->coll, algo, choice.proto, &chunkSteps, &sliceSteps);
  int64_t chunkElems = choice.chunkBytes / (int64_t)ts;
  int blocks = t->coll == MK_COLL_ALLREDUCE && algo == MK_ALGO_RING ? N : 1;
  plan_coll_work(comm, t, w);
  plan_profile_coll_start(comm, pp->profGroup, t, w);
  if (algo == MK_ALGO_FLAT) return plan_flat_proxy(comm, w, pp);
  if (algo == MK_ALGO_COLLNET_DIRECT) return plan_collnet_proxy(comm, w, pp);
  /* A 64-bit division: only where the loops are counted (not FLAT's one step). */
  int64_t nLoops = sched_nloops((int64_t)t->count, chunkElems, w->nChannels, blocks);
  if (algo == MK_ALGO_TREE) return plan_tree_proxy(comm, w, nLoops, chunkSteps, sliceSteps, pp);
  return plan_ring_proxy(comm, w, nLoops, chunkSteps, sliceSteps, pp);
}

/* The channels a set of items spans (a GPU launch has one CTA per channel). */
static int plan_channels_used(const mk_work_t* works, int n) {
  int hi = 1;
  for (int i = 0; i < n; i++)
    if (works[i].channelLo + works[i].nChannels > hi) hi = works[i].channelLo + works[i].nChannels;
  return hi;
}

/* Items of one GPU launch from works[0]: at most `batch`, and a symmetric
 * item alone. Within a launch only the same channel of two items is
 * ordered; a symmetric item reaches into the peers' buffers, which a later
 * item on another channel may already be rewriting. Kernel boundaries
 * order all of it. */
static int plan_batch_len(const mk_work_t* works, int n, int batch) {
  if (works[0].algo == MK_ALGO_SYMM) return 1;
  int m = 1;
  while (m < n && m < batch && works[m].algo != MK_ALGO_SYMM) m++;
  return m;
}

/* Items to the executor: host threads (complete on return) or GPU kernels
 * on the stream (queued on return; launched in FIFO-sized batches). */
static ncclResult_t plan_execute(struct ncclComm* comm, const mk_work_t* works, int n, void* stream, int captured) {
  if (comm->cudaDev < 0) return comm->dp.exec.ops->launch(comm->dp.exec.state, works, n, comm->dp.ch.nChannels, stream, captured);
  int batch = comm->dp.par.workBatch;
  for (int i = 0, m; i < n; i += m) {
    m = plan_batch_len(works + i, n - i, batch);
    MK_INFO(NCCL_COLL, "Rank %d: launching %d item(s) (first: coll %d count %llu) on %d channel(s), stream %p",
            comm->rank, m, works[i].coll, (unsigned long long)works[i].count, plan_channels_used(works + i, m), stream);
    MK_CHECK(comm->dp.exec.ops->launch(comm->dp.exec.state, works + i, m, plan_channels_used(works + i, m), stream, captured));
  }
  return ncclSuccess;
}

ncclResult_t plan_exec_failed(struct ncclComm* comm, ncclResult_t res) {
  char why[WATCH_TEXT_MAX];
  ncclResult_t proxyRes = proxy_client_error(&comm->dp.proxy);
  /* A transport's error may be a death the watch is about to name; an abort
   * or the watch's own failure needs no wait. */
  if (watch_failure_wait(comm, why, sizeof(why), proxyRes != ncclSuccess ? WATCH_CAUSE_WAIT_MS : 0) != WATCH_FAIL_NONE)
    return MK_FAIL(ncclRemoteError, "Rank %d: collective failed: %s", comm->rank, why);
  if (proxyRes != ncclSuccess) {
    char name[160];
    int peer = proxy_client_error_peer(&comm->dp.proxy);
    return MK_FAIL(proxyRes, "Rank %d: collective failed: the network connection to %s failed (%s; the net "
                   "plugin's WARN above says why; NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=NET for more)", comm->rank,
                   peer >= 0 ? watch_rank_name(comm, peer, name, sizeof(name)) : "a peer", ncclGetErrorString(proxyRes));
  }
  return MK_FAIL(res, "Rank %d: collective failed: aborted (ncclCommAbort, a failed peer, or MKCCL_TIMEOUT)",
                 comm->rank);
}

/* A group's tasks may come on several streams, as in NCCL: the first task's
 * stream runs the group's work, after what every other stream holds, and
 * every other stream's later work waits for it (GPU; a host communicator
 * runs the work on return). `after`: the second join, once launched. */
static ncclResult_t plan_streams_join(struct ncclComm* comm, task_list_t* tasks, void* launch, int after) {
  for (task_t* t = tasks->head; t; t = t->next) {
    if (t->stream == launch) continue;
    int seen = 0;
    for (task_t* u = tasks->head; u != t && !seen; u = u->next) seen = u->stream == t->stream;
    if (seen) continue;
    if (after) MK_CHECK(comm->dp.exec.ops->stream_join(comm->dp.exec.state, t->stream, launch));
    else MK_CHECK(comm->dp.exec.ops->stream_join(comm->dp.exec.state, launch, t->stream));
  }
  return ncclSuccess;
}

ncclResult_t plan_launch(struct ncclComm* comm, task_list_t* tasks) {
  ncclResult_t res = ncclSuccess;
  plan_proxy_t pp;
  plan_proxy_init(&pp, comm);
  mk_work_t local[8];
  mk_work_t* works = NULL;
  int nWorks = 0, gpu = comm->cudaDev >= 0;
  void* stream = tasks->head ? tasks->head->stream : NULL;
  /* GPU: work in the comm's device context, and give the caller's back. */
  void* callerCtx = NULL;
  if (gpu) {
    MK_CHECK(comm->dp.exec.ops->ctx_save(&callerCtx));
    MK_CHECK(comm->dp.exec.ops->bind(comm));
  }
  /* Captured into a CUDA graph: only the launches go into it; set-up below
   * runs now, in relaxed capture mode, on the executor's own stream. */
  int captureMode = -1;
  int capturing = gpu && comm->dp.exec.ops->capture_begin(stream, &captureMode);
  pp.captured = capturing;
  /* Point-to-point first needs its connections. */
  MK_CHECK_GOTO(plan_p2p_connect(comm, tasks), res, out);
  if (gpu) MK_CHECK_GOTO(plan_streams_join(comm, tasks, stream, 0), res, out);
  pp.profGroup = plan_profile_group_start(comm);
  /* Few items (the usual case) are planned on the stack. */
  size_t nMax = (size_t)tasks->n + (size_t)comm->nRanks + 1;
  works = nMax <= sizeof(local) / sizeof(local[0]) ? local : calloc(nMax, sizeof(mk_work_t));
  if (!works) {
    res = MK_FAIL(ncclSystemError, "out of memory planning %d operations", tasks->n);
    goto out;
  }
  int numPipeOps = plan_num_pipe_ops(tasks);
  for (task_t* t = tasks->head; t; t = t->next) {
    if (t->kind != TASK_COLL || t->count == 0) continue;
    if (gpu && ((t->recvbuff && !comm->dp.exec.ops->pointer_ok(t->recvbuff)) || (t->sendbuff && !comm->dp.exec.ops->pointer_ok(t->sendbuff)))) {
      res = MK_FAIL(ncclInvalidArgument, "Rank %d: a GPU communicator needs device (or registered host) buffers",
                    comm->rank);
      goto out;
    }
    if (comm->nRanks == 1 && !gpu) {
      MK_CHECK_GOTO(plan_local(comm, t), res, out);
      continue;
    }
    /* One GPU rank: a copy on the stream (nothing in place), as NCCL does,
     * unless a PreMulSum scalar has to be applied by the kernel. */
    if (comm->nRanks == 1 && !t->scalarPtr && comm_redop_is_identity(t->op, t->type, t->scalar)) {
      if (t->sendbuff != t->recvbuff)
        MK_CHECK_GOTO(comm->dp.exec.ops->copy(comm->dp.exec.state, t->recvbuff, t->sendbuff, t->count * host_type_size(t->type),
                                    stream), res, out);
      continue;
    }
    MK_CHECK_GOTO(plan_coll(comm, t, numPipeOps, &works[nWorks++], &pp), res, out);
  }
  int nColl = nWorks;
  MK_CHECK_GOTO(plan_p2p(comm, tasks, works + nColl, &nWorks, &pp), res, out);
  nWorks += nColl;
  if (nWorks == 0) goto out;
  /* The device's copy of every connection, those planning just made (a
   * first tree, a new peer) included. */
  if (gpu) MK_CHECK_GOTO(comm->dp.exec.ops->sync_conns(comm->dp.exec.state, comm, stream, capturing), res, out);
  /* Captured: the graph's host node posts the proxy ops at every replay. */
  if (capturing && pp.nOps > 0) MK_CHECK_GOTO(plan_graph_capture_ops(comm, &pp, stream), res, out);
  plan_proxy_post(&pp);
  void* launch = plan_profile_launch_start(comm, stream);
  res = plan_execute(comm, works, nWorks, stream, capturing);
  profile_event_stop(&comm->profile, launch);
  if (res != ncclSuccess) res = plan_exec_failed(comm, res);
out:
  watch_ops_done(comm); /* completed (host), launched (GPU), or failed: this rank is out of them */
  /* The other streams wait for whatever went on the launch stream (copies of
   * a one-rank communicator too). */
  if (gpu && res == ncclSuccess) res = plan_streams_join(comm, tasks, stream, 1);
  plan_profile_stop(comm, works, nWorks, pp.profGroup);
  plan_proxy_discard(&pp);
  if (works != local) free(works);
  if (capturing) comm->dp.exec.ops->capture_end(captureMode);
  if (gpu) comm->dp.exec.ops->ctx_restore(callerCtx);
  return res;
}
