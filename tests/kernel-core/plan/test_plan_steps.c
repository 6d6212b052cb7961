/* The executors and the proxy must agree on every connector's step count:
 * a receiver that waits for a step its sender never publishes (or a proxy
 * that waits for one the executor never posts) hangs the first collective.
 *
 * The executor side is the shared ring code (device/common/coll_ring.h, the
 * code both the host executor and the GPU kernel run) over counting
 * primitives that advance steps exactly as the GPU's mk_prims_chunk does
 * (slices_per_chunk * sliceSteps per chunk, a new operation starting at the
 * step rounded up to chunkSteps); the proxy side is what the planner posts
 * (plan/plan_steps.h) started as transport-net's proxy starts an op. Checked
 * over random sequences of every collective, N = 2..8, 1..4 channels, all
 * element sizes, counts 1/odd/around loop boundaries, every root; and
 * point-to-point parts. */
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "plan/plan_steps.h"

typedef struct {
  uint64_t* recv; /* executor step counter of the recv connector, NULL when unused */
  uint64_t* send;
  int chunkSteps, sliceSteps;
  int chunks;     /* primitive calls seen */
} cnt_prims_t;

/* As mk_prims_chunk (device/cuda/kernels.cu): every slice of the chunk, empty
 * or not, moves sliceSteps on each connection the primitive uses. */
static int cnt_chunk(cnt_prims_t* p, int prim, int64_t nelem) {
  CHECK(nelem >= 0);
  steps_shape_t s = {p->chunkSteps, p->sliceSteps, 64};
  int slices = steps_slices_per_chunk(s);
  for (int i = 0; i < slices; i++) {
    if (mk_prim_recvs(prim)) {
      CHECK_MSG(p->recv != NULL, "primitive %d receives on an unused connection", prim);
      *p->recv += (uint64_t)p->sliceSteps;
    }
    if (mk_prim_sends(prim)) {
      CHECK_MSG(p->send != NULL, "primitive %d sends on an unused connection", prim);
      *p->send += (uint64_t)p->sliceSteps;
    }
  }
  p->chunks++;
  return 0;
}

#define MK_ALGO_FN static inline
#define MK_PRIMS_T cnt_prims_t
#define MK_PRIMS_CHUNK(p, prim, src, dst, nelem) ((void)(src), (void)(dst), cnt_chunk((p), (prim), (nelem)))
#include "device/common/coll_ring.h"

#define MAXR 8
#define MAXC 4

static uint64_t rng = 88172645463325252ull;
static uint64_t next_rand(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return rng;
}

static uint64_t round_up(uint64_t x, uint64_t m) { return (x + m - 1) / m * m; }

/* Per rank (ring position == rank) and channel: the executor's and the
 * proxy's step counters of the ring send (to next) and recv (from prev). */
typedef struct {
  uint64_t execSend[MAXR][MAXC], execRecv[MAXR][MAXC];
  uint64_t proxySend[MAXR][MAXC], proxyRecv[MAXR][MAXC];
} ring_state_t;

static long nChecked;

/* One collective on every rank and channel; then every counter must agree. */
static void run_coll(ring_state_t* st, int N, int nch, int coll, int ts, int64_t count, int root, int stepSize) {
  int chunkSteps, sliceSteps;
  mk_coll_shape(coll, MK_ALGO_RING, &chunkSteps, &sliceSteps);
  /* As plan_coll: chunk bytes, elements rounded down to the vector alignment. */
  int64_t align = mk_elem_align(ts);
  int64_t chunkElems = (int64_t)chunkSteps * stepSize / ts / align * align;
  CHECK(chunkElems > 0);
  int ringRanks[MAXR];
  for (int i = 0; i < N; i++) ringRanks[i] = i;
  mk_work_t w;
  memset(&w, 0, sizeof(w));
  w.coll = (uint8_t)coll;
  w.type = (uint8_t)(ts == 1 ? 0 : ts == 2 ? 6 : ts == 4 ? 7 : 8);
  w.root = root;
  w.count = (uint64_t)count;
  w.chunkSize = (int32_t)(chunkElems * ts);
  w.nChannels = (uint8_t)nch;
  w.sendbuff = (const void*)(uintptr_t)0x10000000; /* never dereferenced */
  w.recvbuff = (void*)(uintptr_t)0x20000000;
  int64_t nLoops = plan_ring_loops(coll, N, count, chunkElems, nch);
  for (int r = 0; r < N; r++) {
    mk_ring_ctx_t c;
    c.nRanks = N;
    c.ringIx = r;
    c.ringRanks = ringRanks;
    c.ts = ts;
    c.align = align;
    c.chunkElems = w.chunkSize / ts; /* as the executors derive it */
    int hop = coll_ring_hops_from(&c, root);
    uint64_t sendSteps, recvSteps;
    plan_ring_conn_steps(coll, N, hop, nLoops, &sendSteps, &recvSteps);
    for (int b = 0; b < nch; b++) {
      c.bid = b;
      int recvs, sends;
      coll_ring_uses(&c, &w, &recvs, &sends);
      /* Executor: mk_begin on the connections used, then the schedule. */
      cnt_prims_t p = {NULL, NULL, chunkSteps, sliceSteps, 0};
      if (recvs) {
        st->execRecv[r][b] = steps_op_base(st->execRecv[r][b], chunkSteps);
        p.recv = &st->execRecv[r][b];
      }
      if (sends) {
        st->execSend[r][b] = steps_op_base(st->execSend[r][b], chunkSteps);
        p.send = &st->execSend[r][b];
      }
      CHECK(coll_ring_run(&p, &w, &c) == 0);
      /* Proxy: plan_proxy_add posts nothing for 0 steps; net_op_start
       * rounds its counter up to chunkSteps and adds nsteps. */
      CHECK_MSG((sendSteps > 0) == (sends != 0) && (recvSteps > 0) == (recvs != 0),
                "coll %d N %d hop %d: planner and executor disagree on which connections are used", coll, N, hop);
      if (sendSteps) st->proxySend[r][b] = round_up(st->proxySend[r][b], (uint64_t)chunkSteps) + sendSteps;
      if (recvSteps) st->proxyRecv[r][b] = round_up(st->proxyRecv[r][b], (uint64_t)chunkSteps) + recvSteps;
    }
  }
  for (int r = 0; r < N; r++)
    for (int b = 0; b < nch; b++) {
      int next = (r + 1) % N;
      CHECK_MSG(st->execSend[r][b] == st->proxySend[r][b] && st->execRecv[r][b] == st->proxyRecv[r][b],
                "coll %d N %d nch %d ts %d count %lld root %d: rank %d channel %d executor send/recv steps %llu/%llu, "
                "proxy %llu/%llu",
                coll, N, nch, ts, (long long)count, root, r, b, (unsigned long long)st->execSend[r][b],
                (unsigned long long)st->execRecv[r][b], (unsigned long long)st->proxySend[r][b],
                (unsigned long long)st->proxyRecv[r][b]);
      CHECK_MSG(st->execSend[r][b] == st->execRecv[next][b],
                "coll %d N %d nch %d ts %d count %lld root %d: rank %d sends %llu steps to rank %d which receives %llu",
                coll, N, nch, ts, (long long)count, root, r, (unsigned long long)st->execSend[r][b], next,
                (unsigned long long)st->execRecv[next][b]);
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
        ring_state_t st;
        memset(&st, 0, sizeof(st));
        /* Every collective, size and root once, in order... */
        for (int coll = 0; coll < MK_COLL_SENDRECV; coll++)
          for (int t = 0; t < 4; t++) {
            int ts = tss[t];
            int64_t loopElems = (int64_t)4 * stepSize / ts * N * nch;
            int64_t counts[] = {1, 2, 3, 7, 15, 16, 17, 33, 1001, loopElems - 1, loopElems, loopElems + 1,
                                3 * loopElems + 5};
            for (size_t k = 0; k < sizeof(counts) / sizeof(counts[0]); k++)
              for (int root = 0; root < N; root += (N > 3 ? N / 2 : 1))
                if (counts[k] > 0) run_coll(&st, N, nch, coll, ts, counts[k], root, stepSize);
          }
        /* ...then random mixes, so operations of different chunk shapes
         * (rings round to 4 steps, chains to 1) follow each other. */
        for (int i = 0; i < 200; i++) {
          int coll = (int)(next_rand() % MK_COLL_SENDRECV);
          int ts = tss[next_rand() % 4];
          int64_t count = 1 + (int64_t)(next_rand() % (uint64_t)(8 * stepSize * N));
          run_coll(&st, N, nch, coll, ts, count, (int)(next_rand() % (uint64_t)N), stepSize);
        }
      }
  for (int nch = 1; nch <= 8; nch++) {
    const int64_t sizes[] = {0, 1, 15, 16, 17, 4095, 4096, 4097, 65536, 1000003};
    for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) check_p2p(sizes[k], nch, 4096 * 2);
  }
  printf("test_plan_steps: %ld connector checks agree\n", nChecked);
  return 0;
}
