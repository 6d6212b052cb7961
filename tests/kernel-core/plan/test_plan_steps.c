/* The executors and the proxy must agree on every connector's step count:
 * a receiver that waits for a step its sender never publishes (or a proxy
 * that waits for one the executor never posts) hangs the first collective.
 *
 * The executor side is the shared ring and tree code
 * (device/common/coll_ring.h, coll_tree.h: what the executors run; trees
 * on the tree channel_tree_for gives, as the host executor) over counting
 * primitives that advance steps exactly as the GPU's mk_prims_chunk does
 * (slices_per_chunk * sliceSteps per chunk, a new operation starting at the
 * step rounded up to chunkSteps); the proxy side is what the planner posts
 * (plan/plan_steps.h) started as transport-net's proxy starts an op. Checked
 * over random sequences of every collective (rings, and trees for
 * AllReduce, Broadcast and Reduce, FLAT AllReduce in one step and direct,
 * mixed on the same connections), N =
 * 2..8, 1..4 channels, all element sizes, counts 1/odd/around loop
 * boundaries, every root; and point-to-point parts. */
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "channel/channel_tree.h"
#include "plan/plan_steps.h"

#define MAXR 8
#define MAXC 4

/* Per rank, channel and peer: the executor's and the proxy's step counters
 * of the collective send (to peer) and recv (from peer) connectors. */
typedef struct {
  uint64_t execSend[MAXR][MAXC][MAXR], execRecv[MAXR][MAXC][MAXR];
  uint64_t proxySend[MAXR][MAXC][MAXR], proxyRecv[MAXR][MAXC][MAXR];
} conn_state_t;

typedef struct {
  uint64_t* recv[MAXR]; /* executor step counters of the connectors in use */
  uint64_t* send[MAXR];
  int nRecv, nSend;
  int chunkSteps, sliceSteps;
  int chunks;        /* primitive calls seen */
  /* trees: where MK_PRIMS_BIND finds the counters */
  conn_state_t* st;
  int rank, bid;
} cnt_prims_t;

/* A new operation on these connections: each starts at its step rounded up
 * to chunkSteps (as mk_begin / host_prims_begin). */
static void cnt_attach(cnt_prims_t* p, uint64_t** recv, int nRecv, uint64_t** send, int nSend) {
  CHECK(nRecv < MAXR && nSend < MAXR);
  p->nRecv = nRecv;
  p->nSend = nSend;
  for (int i = 0; i < nRecv; i++) {
    *recv[i] = steps_op_base(*recv[i], p->chunkSteps);
    p->recv[i] = recv[i];
  }
  for (int i = 0; i < nSend; i++) {
    *send[i] = steps_op_base(*send[i], p->chunkSteps);
    p->send[i] = send[i];
  }
}

static int cnt_bind(cnt_prims_t* p, const int* recvPeers, int nRecv, const int* sendPeers, int nSend) {
  uint64_t* recv[MAXR];
  uint64_t* send[MAXR];
  for (int i = 0; i < nRecv; i++) recv[i] = &p->st->execRecv[p->rank][p->bid][recvPeers[i]];
  for (int i = 0; i < nSend; i++) send[i] = &p->st->execSend[p->rank][p->bid][sendPeers[i]];
  cnt_attach(p, recv, nRecv, send, nSend);
  return 0;
}

/* As mk_prims_chunk (device/cuda/kernels.cu) and host_prims_chunk: every
 * slice of the chunk, empty or not, moves sliceSteps on each connection the
 * primitive uses. */
static int cnt_chunk(cnt_prims_t* p, int prim, int64_t nelem) {
  CHECK(nelem >= 0);
  steps_shape_t s = {p->chunkSteps, p->sliceSteps, 64};
  int slices = steps_slices_per_chunk(s);
  for (int i = 0; i < slices; i++) {
    if (mk_prim_recvs(prim)) {
      CHECK_MSG(p->nRecv > 0, "primitive %d receives on an unused connection", prim);
      for (int k = 0; k < p->nRecv; k++) *p->recv[k] += (uint64_t)p->sliceSteps;
    }
    if (mk_prim_sends(prim)) {
      CHECK_MSG(p->nSend > 0, "primitive %d sends on an unused connection", prim);
      for (int k = 0; k < p->nSend; k++) *p->send[k] += (uint64_t)p->sliceSteps;
    }
  }
  p->chunks++;
  return 0;
}

#define MK_ALGO_FN static inline
#define MK_PRIMS_T cnt_prims_t
#define MK_PRIMS_CHUNK(p, prim, src, dst, nelem) ((void)(src), (void)(dst), cnt_chunk((p), (prim), (nelem)))
#define MK_PRIMS_BIND(p, ctx, recvPeers, nRecv, sendPeers, nSend) \
  ((void)(ctx), cnt_bind((p), (recvPeers), (nRecv), (sendPeers), (nSend)))
#include "device/common/coll_flat.h"
#include "device/common/coll_ring.h"
#include "device/common/coll_tree.h"

static uint64_t rng = 88172645463325252ull;
static uint64_t next_rand(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return rng;
}

static uint64_t round_up(uint64_t x, uint64_t m) { return (x + m - 1) / m * m; }

static long nChecked;

/* Proxy: plan_proxy_add posts nothing for 0 steps; net_op_start rounds its
 * counter up to chunkSteps and adds nsteps. */
static void proxy_post(uint64_t* counter, uint64_t steps, int chunkSteps) {
  if (steps) *counter = round_up(*counter, (uint64_t)chunkSteps) + steps;
}

/* Ring: ring position == rank; per channel the send to next and the recv
 * from prev. */
static void run_ring(conn_state_t* st, const mk_work_t* w, int N, int ts, int64_t chunkElems, int chunkSteps,
                     int sliceSteps) {
  int ringRanks[MAXR];
  for (int i = 0; i < N; i++) ringRanks[i] = i;
  int64_t nLoops = plan_ring_loops(w->coll, N, (int64_t)w->count, chunkElems, w->nChannels);
  for (int r = 0; r < N; r++) {
    mk_ring_ctx_t c;
    c.nRanks = N;
    c.ringIx = r;
    c.ringRanks = ringRanks;
    c.ts = ts;
    c.align = mk_elem_align(ts);
    c.chunkElems = w->chunkSize / ts; /* as the executors derive it */
    int hop = coll_ring_hops_from(&c, w->root), next = (r + 1) % N, prev = (r + N - 1) % N;
    uint64_t sendSteps, recvSteps;
    plan_ring_conn_steps(w->coll, N, hop, nLoops, &sendSteps, &recvSteps);
    for (int b = 0; b < w->nChannels; b++) {
      c.bid = b;
      int recvs, sends;
      coll_ring_uses(&c, w, &recvs, &sends);
      cnt_prims_t p = {{NULL}, {NULL}, 0, 0, chunkSteps, sliceSteps, 0, st, r, b};
      uint64_t* recv = &st->execRecv[r][b][prev];
      uint64_t* send = &st->execSend[r][b][next];
      cnt_attach(&p, &recv, recvs != 0, &send, sends != 0);
      CHECK(coll_ring_run(&p, w, &c) == 0);
      CHECK_MSG((sendSteps > 0) == (sends != 0) && (recvSteps > 0) == (recvs != 0),
                "coll %d N %d hop %d: planner and executor disagree on which connections are used", w->coll, N, hop);
      proxy_post(&st->proxySend[r][b][next], sendSteps, chunkSteps);
      proxy_post(&st->proxyRecv[r][b][prev], recvSteps, chunkSteps);
    }
  }
}

/* Tree: each channel's tree as the host executor and the planner find it
 * (channel_tree_for), the proxy's steps per tree peer as plan_tree_proxy
 * posts them. */
static void run_tree(conn_state_t* st, const mk_work_t* w, int N, int ts, int64_t chunkElems, int chunkSteps,
                     int sliceSteps) {
  int ringRanks[MAXR];
  for (int i = 0; i < N; i++) ringRanks[i] = i;
  int64_t nLoops = sched_nloops((int64_t)w->count, chunkElems, w->nChannels, 1);
  for (int r = 0; r < N; r++)
    for (int b = 0; b < w->nChannels; b++) {
      channel_t ch;
      memset(&ch, 0, sizeof(ch));
      ch.id = b;
      ch.ring.userRanks = ringRanks;
      ch.ring.index = r;
      channel_tree_t t;
      channel_tree_for(&ch, N, w->coll, w->root, &t);
      if (channel_tree_is_rooted(w->coll)) CHECK_EQ_INT(t.up < 0, r == w->root);
      mk_tree_ctx_t c;
      coll_tree_ctx_init(&c, t.up, t.down, b, w->chunkSize, ts, NULL);
      cnt_prims_t p = {{NULL}, {NULL}, 0, 0, chunkSteps, sliceSteps, 0, st, r, b};
      CHECK(coll_tree_run(&p, w, &c) == 0);
      int peers[1 + MK_TREE_ARITY] = {t.up, t.down[0], t.down[1], t.down[2]};
      for (int i = 0; i < 1 + MK_TREE_ARITY; i++) {
        if (peers[i] < 0) continue;
        uint64_t sendSteps, recvSteps;
        plan_tree_conn_steps(w->coll, i == 0, nLoops, &sendSteps, &recvSteps);
        proxy_post(&st->proxySend[r][b][peers[i]], sendSteps, chunkSteps);
        proxy_post(&st->proxyRecv[r][b][peers[i]], recvSteps, chunkSteps);
      }
    }
}

/* FLAT AllReduce: in one step (one channel), every other rank one step
 * each way; direct beyond a chunk (coll_flat.h), on every channel, what
 * plan_flat_proxy posts. */
static void run_flat(conn_state_t* st, const mk_work_t* w, int N, int ts) {
  int64_t count = (int64_t)w->count;
  int direct = mk_flat_direct(count * ts, w->chunkSize);
  if (!direct && w->nChannels != 1) return; /* the planner gives one step one channel */
  uint64_t steps = 1;
  mk_flat_shape_t shape = {0, 0, 0, 0, 0};
  if (direct) {
    mk_flat_shape(&shape, count, N, w->nChannels, w->chunkSize / ts, mk_elem_align(ts));
    steps = mk_flat_conn_steps(shape.nLoops);
  }
  int peers[MAXR];
  for (int r = 0; r < N; r++)
    for (int b = 0; b < w->nChannels; b++) {
      int n = 0;
      for (int q = 0; q < N; q++)
        if (q != r) peers[n++] = q;
      cnt_prims_t p = {{NULL}, {NULL}, 0, 0, 1, 1, 0, st, r, b};
      if (direct) {
        mk_flat_ctx_t c = {.rank = r, .nRanks = N, .bid = b, .ts = ts, .exec = NULL, .shape = shape};
        CHECK(coll_flat_direct(&p, w, &c) == 0);
      } else {
        /* host_prims_flat: one step to every peer, one from every peer */
        cnt_bind(&p, peers, n, peers, n);
        cnt_chunk(&p, MK_PRIM_RECV_REDUCE_COPY_SEND, count);
      }
      for (int i = 0; i < n; i++) {
        proxy_post(&st->proxySend[r][b][peers[i]], steps, 1);
        proxy_post(&st->proxyRecv[r][b][peers[i]], steps, 1);
      }
    }
}

static int has_tree(int coll) {
  return coll == MK_COLL_ALLREDUCE || coll == MK_COLL_BROADCAST || coll == MK_COLL_REDUCE;
}

/* One collective on every rank and channel; then every counter must agree:
 * executor with proxy, and each sender with its receiver. */
static void run_coll(conn_state_t* st, int N, int nch, int algo, int coll, int ts, int64_t count, int root,
                     int stepSize) {
  int chunkSteps, sliceSteps;
  mk_coll_shape(coll, algo, &chunkSteps, &sliceSteps);
  /* As plan_coll: chunk bytes, elements rounded down to the vector alignment. */
  int64_t align = mk_elem_align(ts);
  int64_t chunkElems = (int64_t)chunkSteps * stepSize / ts / align * align;
  CHECK(chunkElems > 0);
  mk_work_t w;
  memset(&w, 0, sizeof(w));
  w.coll = (uint8_t)coll;
  w.algo = (uint8_t)algo;
  w.type = (uint8_t)(ts == 1 ? 0 : ts == 2 ? 6 : ts == 4 ? 7 : 8);
  w.root = root;
  w.count = (uint64_t)count;
  w.chunkSize = (int32_t)(chunkElems * ts);
  w.nChannels = (uint8_t)nch;
  w.sendbuff = (const void*)(uintptr_t)0x10000000; /* never dereferenced */
  w.recvbuff = (void*)(uintptr_t)0x20000000;
  if (algo == MK_ALGO_TREE) run_tree(st, &w, N, ts, chunkElems, chunkSteps, sliceSteps);
  else if (algo == MK_ALGO_FLAT) run_flat(st, &w, N, ts);
  else run_ring(st, &w, N, ts, chunkElems, chunkSteps, sliceSteps);
  for (int r = 0; r < N; r++)
    for (int b = 0; b < nch; b++)
      for (int q = 0; q < N; q++) {
        CHECK_MSG(st->execSend[r][b][q] == st->proxySend[r][b][q] && st->execRecv[r][b][q] == st->proxyRecv[r][b][q],
                  "%s coll %d N %d nch %d ts %d count %lld root %d: rank %d channel %d peer %d executor send/recv "
                  "steps %llu/%llu, proxy %llu/%llu",
                  algo == MK_ALGO_TREE ? "tree" : algo == MK_ALGO_FLAT ? "flat" : "ring", coll, N, nch, ts, (long long)count, root, r, b, q,
                  (unsigned long long)st->execSend[r][b][q], (unsigned long long)st->execRecv[r][b][q],
                  (unsigned long long)st->proxySend[r][b][q], (unsigned long long)st->proxyRecv[r][b][q]);
        CHECK_MSG(st->execSend[r][b][q] == st->execRecv[q][b][r],
                  "%s coll %d N %d nch %d ts %d count %lld root %d: rank %d sends %llu steps to rank %d which "
                  "receives %llu",
                  algo == MK_ALGO_TREE ? "tree" : algo == MK_ALGO_FLAT ? "flat" : "ring", coll, N, nch, ts, (long long)count, root, r,
                  (unsigned long long)st->execSend[r][b][q], q, (unsigned long long)st->execRecv[q][b][r]);
        nChecked++;
      }
}

/* Point-to-point: the executors' chunk loop (host_p2p, mk_run_p2p) moves one
 * step per chunk of the channel's part; the planner posts the same. */
static void check_p2p(int64_t bytes, int nch, int64_t chunk) {
  for (int b = 0; b < nch; b++) {
    int64_t off, len;
    int chunks;
    coll_p2p_part(bytes, nch, b, chunk, &off, &len, &chunks);
    uint64_t exec = 0;
    for (int i = 0; i < chunks; i++) {
      int64_t n = coll_clamp(len, (int64_t)i * chunk, chunk);
      CHECK(n >= 0 && n <= chunk);
      exec += 1; /* chunkSteps = sliceSteps = 1 */
    }
    CHECK(chunks >= 1);
    CHECK_EQ_INT(exec, plan_p2p_conn_steps(bytes, nch, b, chunk));
    nChecked++;
  }
}

int main(void) {
  const int tss[] = {1, 2, 4, 8};
  const int stepSizes[] = {64, 256, 4096};
  for (int N = 2; N <= MAXR; N++)
    for (int nch = 1; nch <= MAXC; nch++)
      for (int si = 0; si < 3; si++) {
        int stepSize = stepSizes[si];
        static conn_state_t st;
        memset(&st, 0, sizeof(st));
        /* Every collective and algorithm, size and root once, in order... */
        for (int coll = 0; coll < MK_COLL_SENDRECV; coll++)
          for (int algo = MK_ALGO_TREE; algo <= MK_ALGO_FLAT; algo++) {
            if (algo == MK_ALGO_TREE && !has_tree(coll)) continue;
            if (algo > MK_ALGO_RING && (algo != MK_ALGO_FLAT || coll != MK_COLL_ALLREDUCE)) continue;
            for (int t = 0; t < 4; t++) {
              int ts = tss[t];
              int64_t loopElems = (int64_t)4 * stepSize / ts * N * nch;
              int64_t counts[] = {1, 2, 3, 7, 15, 16, 17, 33, 1001, loopElems - 1, loopElems, loopElems + 1,
                                  3 * loopElems + 5};
              for (size_t k = 0; k < sizeof(counts) / sizeof(counts[0]); k++)
                for (int root = 0; root < N; root += (N > 3 && algo == MK_ALGO_RING ? N / 2 : 1))
                  if (counts[k] > 0) run_coll(&st, N, nch, algo, coll, ts, counts[k], root, stepSize);
            }
          }
        /* ...then random mixes, so operations of different chunk shapes
         * (rings round to 4 steps, chains and trees to 1) follow each other
         * on the same connections. */
        for (int i = 0; i < 300; i++) {
          int coll = (int)(next_rand() % MK_COLL_SENDRECV);
          int algo = has_tree(coll) && next_rand() % 2 ? MK_ALGO_TREE : MK_ALGO_RING;
          if (coll == MK_COLL_ALLREDUCE && next_rand() % 3 == 0) algo = MK_ALGO_FLAT;
          int ts = tss[next_rand() % 4];
          int64_t count = 1 + (int64_t)(next_rand() % (uint64_t)(8 * stepSize * N));
          run_coll(&st, N, nch, algo, coll, ts, count, (int)(next_rand() % (uint64_t)N), stepSize);
        }
      }
  for (int nch = 1; nch <= 8; nch++) {
    const int64_t sizes[] = {0, 1, 15, 16, 17, 4095, 4096, 4097, 65536, 1000003};
    for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) check_p2p(sizes[k], nch, 4096 * 2);
  }
  printf("test_plan_steps: %ld connector checks agree\n", nChecked);
  return 0;
}
