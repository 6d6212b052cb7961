/* The tree algorithm on its own: the double binary tree's shape
 * (device/common/sched_tree.h) for 1..64 positions, and in ranks over a
 * shuffled ring order (sched_tree_ranks), then AllReduce on the
 * host executor with N ranks as threads of one process, every pair wired
 * with in-memory connectors (as the shm transport wires them across
 * processes), each channel on its tree, checked element by element against
 * the exact result (and the rotated trees Broadcast and Reduce use, for
 * every root: shape only here, tests/kernel-core/plan/test_plan_rooted.c
 * runs them): several types and ops (PreMulSum and the integer
 * average's post-division included), counts 0..large, 1..2 channels.
 * Ring AllReduces of many loops are interleaved with the tree ones on the
 * same connections: each switch rounds the step counters up to the other
 * algorithm's chunk, in both directions of a pair, which deadlocks unless
 * receivers hand the skipped steps back. */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "channel/channel.h"
#include "check.h"
#include "device/common/sched_tree.h"
#include "device/common/shape.h"
#include "device/common/work.h"
#include "device/host/host_exec.h"
#include "base/dtype.h"
#include "transport/mkccl_conn_fifo_v1.h"

/* ---- shape ------------------------------------------------------------------------------------ */

/* Each tree spans all n positions: one root, parents and children agree,
 * every position reaches the root; each position is interior in at most
 * one of the two trees (n > 2 even: NCCL's mirror guarantees it). */
static void check_dtree(int n) {
  int interior[64] = {0};
  for (int t = 0; t < MK_TREE_COUNT; t++) {
    int roots = 0;
    for (int p = 0; p < n; p++) {
      int up, d0, d1;
      sched_dtree(n, p, t, &up, &d0, &d1);
      CHECK(up >= -1 && up < n && d0 >= -1 && d0 < n && d1 >= -1 && d1 < n);
      roots += up < 0;
      if (d0 >= 0 || d1 >= 0) interior[p]++;
      int kids[2] = {d0, d1};
      for (int k = 0; k < 2; k++) {
        if (kids[k] < 0) continue;
        int cu, c0, c1;
        sched_dtree(n, kids[k], t, &cu, &c0, &c1);
        CHECK_MSG(cu == p, "n %d tree %d: child %d of %d has parent %d", n, t, kids[k], p, cu);
      }
      if (up >= 0) {
        int pu, p0, p1;
        sched_dtree(n, up, t, &pu, &p0, &p1);
        CHECK_MSG(p0 == p || p1 == p, "n %d tree %d: %d's parent %d does not list it", n, t, p, up);
      }
      int hops = 0;
      for (int q = p; q >= 0 && hops <= n; hops++) {
        int a, b;
        sched_dtree(n, q, t, &q, &a, &b);
      }
      CHECK_MSG(hops <= n, "n %d tree %d: %d never reaches the root", n, t, p);
    }
    CHECK_EQ_INT(roots, 1);
  }
  if (n > 2 && n % 2 == 0)
    for (int p = 0; p < n; p++) CHECK_MSG(interior[p] <= 1, "n %d: position %d interior in both trees", n, p);
}

/* The rooted trees of Broadcast and Reduce: for every root, tree `which`
 * rotated has that root, spans all positions with parents and children
 * agreeing, and is the unrotated tree's shape (the same child counts at
 * the same distance from the root). */
static void check_rooted(int n) {
  for (int t = 0; t < MK_TREE_COUNT; t++)
    for (int root = 0; root < n; root++) {
      int shift = sched_dtree_root(n, t) - root;
      for (int p = 0; p < n; p++) {
        int up, d0, d1, u, a, b;
        sched_dtree_rooted(n, p, root, t, &up, &d0, &d1);
        sched_dtree(n, sched_mod(p + shift, n), t, &u, &a, &b);
        CHECK_MSG((up < 0) == (p == root), "n %d tree %d root %d: position %d up %d", n, t, root, p, up);
        CHECK((u < 0) == (up < 0) && (a < 0) == (d0 < 0) && (b < 0) == (d1 < 0));
        int kids[2] = {d0, d1};
        for (int k = 0; k < 2; k++) {
          if (kids[k] < 0) continue;
          int cu, c0, c1;
          sched_dtree_rooted(n, kids[k], root, t, &cu, &c0, &c1);
          CHECK_MSG(cu == p, "n %d tree %d root %d: child %d of %d has parent %d", n, t, root, kids[k], p, cu);
        }
      }
    }
}

/* sched_tree_ranks, what the planner and both executors ask, over a ring
 * order that is not the identity: for every channel and collective (and
 * every root of the rooted ones), ranks' parents and children agree, the
 * one root is the collective's root (rooted) or the tree's root position's
 * rank (AllReduce), and every rank is position-for-position the tree of
 * sched_dtree / sched_dtree_rooted mapped through the order. */
static void check_ranks(int n) {
  int order[64], posOf[64];
  for (int i = 0; i < n; i++) order[i] = (i * 7 + 3) % n; /* a permutation when gcd(7, n) == 1 */
  if (n % 7 == 0)
    for (int i = 0; i < n; i++) order[i] = n - 1 - i;
  for (int i = 0; i < n; i++) posOf[order[i]] = i;
  const int colls[] = {MK_COLL_ALLREDUCE, MK_COLL_BROADCAST, MK_COLL_REDUCE};
  for (int ch = 0; ch < 2 * MK_TREE_COUNT; ch++)
    for (int ci = 0; ci < 3; ci++)
      for (int root = 0; root < (sched_tree_is_rooted(colls[ci]) ? n : 1); root++) {
        int roots = 0;
        for (int r = 0; r < n; r++) {
          int up, down[MK_TREE_MAX_DOWN], u, a, b;
          sched_tree_ranks(n, order, posOf[r], ch, colls[ci], root, &up, down);
          if (sched_tree_is_rooted(colls[ci]))
            sched_dtree_rooted(n, posOf[r], posOf[root], sched_tree_of_channel(ch), &u, &a, &b);
          else
            sched_dtree(n, posOf[r], sched_tree_of_channel(ch), &u, &a, &b);
          CHECK(up == (u < 0 ? -1 : order[u]) && down[0] == (a < 0 ? -1 : order[a]) &&
                down[1] == (b < 0 ? -1 : order[b]));
          if (up < 0) {
            roots++;
            int want = sched_tree_is_rooted(colls[ci]) ? root : order[sched_dtree_root(n, sched_tree_of_channel(ch))];
            CHECK_MSG(r == want, "n %d channel %d coll %d root %d: the tree's root is rank %d", n, ch, colls[ci], root,
                      r);
            continue;
          }
          int pu, pd[MK_TREE_MAX_DOWN];
          sched_tree_ranks(n, order, posOf[up], ch, colls[ci], root, &pu, pd);
          CHECK_MSG(pd[0] == r || pd[1] == r, "n %d channel %d coll %d: rank %d's parent %d does not list it", n, ch,
                    colls[ci], r, up);
        }
        CHECK_EQ_INT(roots, 1);
      }
}

/* ---- AllReduce on the executor ---------------------------------------------------------------- */

#define MAXR 8
#define MAXCH 2
#define STEP 1024
static int N, NCH;
static channel_t chans[MAXR][MAXCH];
static int ringOrder[MAXR];

typedef struct {
  mkcclSendMem_v1 sendMem;
  mkcclRecvMem_v1 recvMem;
  char buff[STEP * MKCCL_STEPS];
} link_t;
static link_t links[MAXCH][MAXR][MAXR]; /* [channel][from][to] */

static void wire(void) {
  memset(links, 0, sizeof(links));
  for (int c = 0; c < NCH; c++)
    for (int r = 0; r < N; r++) {
      channel_t* ch = &chans[r][c];
      free(ch->peers);
      memset(ch, 0, sizeof(*ch));
      ch->id = c;
      ringOrder[r] = r;
      ch->ring.userRanks = ringOrder;
      ch->ring.index = r;
      ch->ring.prev = (r + N - 1) % N;
      ch->ring.next = (r + 1) % N;
      ch->peers = calloc((size_t)N, sizeof(channel_peer_t));
    }
  for (int c = 0; c < NCH; c++)
    for (int r = 0; r < N; r++)
      for (int s = 0; s < N; s++) {
        link_t* l = &links[c][r][s];
        conn_fifo_init(l->recvMem.connFifo);
        mkcclConnInfo_v1 info = {{NULL, NULL, l->buff}, {0, 0, STEP}, &l->recvMem.tail, &l->sendMem.head,
                                 l->recvMem.connFifo, 0, NULL, NULL, NULL, NULL};
        chans[r][c].peers[s].send[MK_CONN_COLL].info = info;
        chans[s][c].peers[r].recv[MK_CONN_COLL].info = info;
      }
}

typedef struct {
  int rank, ch;
  const mk_work_t* w;
  ncclResult_t result;
} chan_job_t;

static volatile uint32_t abortFlag;

static void* run_chan(void* arg) {
  chan_job_t* j = arg;
  j->result = host_coll_run(&chans[j->rank][j->ch], j->w, j->rank, N, &abortFlag, NULL);
  return NULL;
}

/* Inputs 0..3 (sums of 8 stay exact in every type); for products 2 on at
 * most three ranks, 1 elsewhere (the product fits a byte). */
static int64_t value(int op, int rank, size_t i) {
  if (op == MK_OP_PROD) return rank < 3 && (i + (size_t)rank) % 2 ? 2 : 1;
  return (int64_t)((i * 7 + (size_t)rank * 3) % 4);
}

static void store(int type, void* p, size_t i, double v) {
  switch (type) {
    case ncclInt32: ((int32_t*)p)[i] = (int32_t)v; break;
    case ncclUint8: ((uint8_t*)p)[i] = (uint8_t)v; break;
    case ncclFloat32: ((float*)p)[i] = (float)v; break;
    case ncclFloat64: ((double*)p)[i] = v; break;
    case ncclFloat16: ((uint16_t*)p)[i] = host_float_to_half((float)v); break;
    default: ((uint16_t*)p)[i] = host_float_to_bf16((float)v); break;
  }
}

static double load(int type, const void* p, size_t i) {
  switch (type) {
    case ncclInt32: return ((const int32_t*)p)[i];
    case ncclUint8: return ((const uint8_t*)p)[i];
    case ncclFloat32: return ((const float*)p)[i];
    case ncclFloat64: return ((const double*)p)[i];
    case ncclFloat16: return host_half_to_float(((const uint16_t*)p)[i]);
    default: return host_bf16_to_float(((const uint16_t*)p)[i]);
  }
}

static double expect(int op, size_t i) {
  double e = (double)value(op, 0, i);
  for (int r = 1; r < N; r++) {
    double v = (double)value(op, r, i);
    e = op == MK_OP_MAX ? (v > e ? v : e) : op == MK_OP_MIN ? (v < e ? v : e) : op == MK_OP_PROD ? e * v : e + v;
  }
  if (op == MK_OP_PREMULSUM) e *= 2;
  if (op == MK_OP_SUMPOSTDIV) e = (double)((int64_t)e / N);
  return e;
}

static void run(int algo, int type, int op, size_t count, int inPlace) {
  size_t ts = host_type_size((ncclDataType_t)type);
  char* in[MAXR];
  char* out[MAXR];
  mk_work_t w[MAXR];
  int chunkSteps, sliceSteps;
  mk_coll_shape(MK_COLL_ALLREDUCE, algo, &chunkSteps, &sliceSteps);
  if (algo == MK_ALGO_TREE) CHECK(chunkSteps == 1 && sliceSteps == 1);
  for (int r = 0; r < N; r++) {
    out[r] = calloc(count + 1, ts);
    in[r] = inPlace ? out[r] : calloc(count + 1, ts);
    for (size_t i = 0; i < count; i++) store(type, in[r], i, (double)value(op, r, i));
    memset(&w[r], 0, sizeof(w[r]));
    w[r].coll = MK_COLL_ALLREDUCE;
    w[r].algo = (uint8_t)algo;
    w[r].proto = MK_PROTO_SIMPLE;
    w[r].type = (uint8_t)type;
    w[r].op = (uint8_t)op;
    if (op == MK_OP_SUMPOSTDIV) w[r].scalar = (uint64_t)N;
    if (op == MK_OP_PREMULSUM) { /* scalar 2 in the element type */
      unsigned char two[8] = {0};
      store(type, two, 0, 2.0);
      memcpy(&w[r].scalar, two, ts);
    }
    w[r].count = count;
    w[r].sendbuff = in[r];
    w[r].recvbuff = out[r];
    w[r].nChannels = (uint8_t)NCH;
    w[r].chunkSize = (int32_t)(chunkSteps * STEP);
  }
  pthread_t th[MAXR * MAXCH];
  chan_job_t jobs[MAXR * MAXCH];
  for (int r = 0; r < N; r++)
    for (int c = 0; c < NCH; c++) {
      jobs[r * NCH + c] = (chan_job_t){r, c, &w[r], ncclInternalError};
      CHECK(pthread_create(&th[r * NCH + c], NULL, run_chan, &jobs[r * NCH + c]) == 0);
    }
  for (int k = 0; k < N * NCH; k++) {
    pthread_join(th[k], NULL);
    CHECK_EQ_INT(jobs[k].result, ncclSuccess);
  }
  for (int r = 0; r < N; r++)
    for (size_t i = 0; i < count; i++) {
      double e = expect(op, i);
      CHECK_MSG(load(type, out[r], i) == e, "%s N %d nch %d type %d op %d count %zu: rank %d [%zu] = %g, expected %g",
                algo == MK_ALGO_TREE ? "tree" : "ring", N, NCH, type, op, count, r, i, load(type, out[r], i), e);
    }
  for (int r = 0; r < N; r++) {
    if (!inPlace) free(in[r]);
    free(out[r]);
  }
}

int main(void) {
  for (int n = 1; n <= 64; n++) {
    check_dtree(n);
    check_rooted(n);
    check_ranks(n);
  }
  const int types[] = {ncclInt32, ncclUint8, ncclFloat32, ncclFloat64, ncclFloat16, ncclBfloat16};
  const size_t counts[] = {0, 1, 7, 1000, 20011};
  for (N = 2; N <= MAXR; N++)
    for (NCH = 1; NCH <= MAXCH; NCH++) {
      wire();
      for (size_t ci = 0; ci < sizeof(counts) / sizeof(counts[0]); ci++)
        for (int ti = 0; ti < 6; ti++) {
          int op = (int)((ci + (size_t)ti) % 4); /* sum, prod, max, min */
          run(MK_ALGO_TREE, types[ti], op, counts[ci], (int)(ci & 1));
          if (types[ti] == ncclInt32) run(MK_ALGO_TREE, types[ti], MK_OP_SUMPOSTDIV, counts[ci], 0);
          if (types[ti] == ncclFloat32) run(MK_ALGO_TREE, types[ti], MK_OP_PREMULSUM, counts[ci], 1);
          if (ti == 0 || ti == 2) run(MK_ALGO_RING, types[ti], op, counts[ci], 0);
        }
    }
  printf("test_host_tree: OK\n");
  return 0;
}
