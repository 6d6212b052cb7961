/* The host executor's algorithms on their own: N ranks as threads of one
 * process, each channel's ring wired directly with in-memory connectors (as
 * the shm transport wires them across processes). Every collective, several
 * types and ops, counts 0/1/odd/large, roots, in-place, 1..2 channels, all
 * checked element by element. */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "channel/channel.h"
#include "check.h"
#include "device/common/shape.h"
#include "device/common/work.h"
#include "device/host/host_exec.h"
#include "base/dtype.h"
#include "transport/mkccl_conn_fifo_v1.h"

#define MAXR 8
#define STEP 1024
static int N, NCH;
static channel_t chans[MAXR][2];
static int ringOrder[MAXR];
static volatile uint32_t abortFlag;
/* Each (N, channels) pass writes its send slots one way (host_store.h):
 * cached, streamed, or both measured and mixed; every slice counts. */
static host_store_t stores[MAXR][2];
static int storePolicy;

typedef struct {
  mkcclSendMem_v1 sendMem;
  mkcclRecvMem_v1 recvMem;
  char buff[STEP * MKCCL_STEPS];
} link_t;
static link_t* links; /* [channel][rank]: rank -> next */

static void wire(void) {
  free(links);
  links = calloc((size_t)NCH * N, sizeof(link_t));
  for (int r = 0; r < N; r++) ringOrder[r] = r;
  for (int c = 0; c < NCH; c++)
    for (int r = 0; r < N; r++) {
      channel_t* ch = &chans[r][c];
      free(ch->peers);
      memset(ch, 0, sizeof(*ch));
      ch->id = c;
      ch->ring.userRanks = ringOrder;
      ch->ring.index = r;
      ch->ring.prev = (r + N - 1) % N;
      ch->ring.next = (r + 1) % N;
      ch->peers = calloc((size_t)N, sizeof(channel_peer_t));
    }
  for (int c = 0; c < NCH; c++)
    for (int r = 0; r < N; r++) {
      link_t* l = &links[c * N + r];
      conn_fifo_init(l->recvMem.connFifo);
      int next = (r + 1) % N;
      mkcclConnInfo_v1 info = {{NULL, NULL, l->buff}, {0, 0, STEP}, &l->recvMem.tail, &l->sendMem.head,
                               l->recvMem.connFifo, 0, NULL, NULL, NULL, NULL};
      chans[r][c].peers[next].send[0].info = info;
      chans[next][c].peers[r].recv[0].info = info;
    }
}

typedef struct {
  int rank, channel;
  mk_work_t* w;
  int result;
} chan_job_t;

static void* run_chan(void* arg) {
  chan_job_t* j = arg;
  host_store_t* st = &stores[j->rank][j->channel];
  j->result = host_coll_run(&chans[j->rank][j->channel], j->w, j->rank, N, &abortFlag,
                            storePolicy == HOST_STORE_CACHED ? NULL : st);
  return NULL;
}

/* Small integers, so every partial sum is exact even in fp8 (0..15). */
static int g_type;
static double value(int rank, size_t i) { return (double)((rank * 7 + (int)i * 3) % (g_type == ncclFloat8e4m3 ? 4 : 11)); }

static void store(int type, void* p, size_t i, double v) {
  switch (type) {
    case ncclInt8: ((int8_t*)p)[i] = (int8_t)v; break;
    case ncclInt32: ((int32_t*)p)[i] = (int32_t)v; break;
    case ncclUint64: ((uint64_t*)p)[i] = (uint64_t)v; break;
    case ncclFloat16: ((uint16_t*)p)[i] = host_float_to_half((float)v); break;
    case ncclFloat32: ((float*)p)[i] = (float)v; break;
    case ncclFloat64: ((double*)p)[i] = v; break;
    case ncclBfloat16: ((uint16_t*)p)[i] = host_float_to_bf16((float)v); break;
    default: ((uint8_t*)p)[i] = host_float_to_e4m3((float)v); break;
  }
}
static double load(int type, const void* p, size_t i) {
  switch (type) {
    case ncclInt8: return ((const int8_t*)p)[i];
    case ncclInt32: return ((const int32_t*)p)[i];
    case ncclUint64: return (double)((const uint64_t*)p)[i];
    case ncclFloat16: return host_half_to_float(((const uint16_t*)p)[i]);
    case ncclFloat32: return ((const float*)p)[i];
    case ncclFloat64: return ((const double*)p)[i];
    case ncclBfloat16: return host_bf16_to_float(((const uint16_t*)p)[i]);
    default: return host_e4m3_to_float(((const uint8_t*)p)[i]);
  }
}

static void run(int coll, int type, int op, size_t count, int root, int inPlace, int nch) {
  size_t ts = host_type_size((ncclDataType_t)type);
  g_type = type;
  size_t inElems = coll == MK_COLL_REDUCESCATTER ? count * N : count;
  size_t outElems = coll == MK_COLL_ALLGATHER ? count * N : count;
  char* in[MAXR];
  char* out[MAXR];
  mk_work_t w[MAXR];
  int chunkSteps, sliceSteps;
  mk_coll_shape(coll, MK_ALGO_RING, &chunkSteps, &sliceSteps);
  for (int r = 0; r < N; r++) {
    out[r] = calloc(outElems + 1, ts);
    in[r] = inPlace ? (coll == MK_COLL_ALLGATHER ? out[r] + r * count * ts : out[r]) : calloc(inElems + 1, ts);
    if (inPlace && coll == MK_COLL_REDUCESCATTER) {
      free(out[r]); /* in place: the output is a block of the input */
      in[r] = calloc(inElems + 1, ts);
      out[r] = in[r] + r * count * ts;
    }
    for (size_t i = 0; i < inElems; i++) store(type, in[r], i, value(r, i));
    memset(&w[r], 0, sizeof(w[r]));
    w[r].coll = (uint8_t)coll;
    w[r].algo = MK_ALGO_RING;
    w[r].type = (uint8_t)type;
    w[r].op = (uint8_t)op;
    w[r].scalar = op == MK_OP_SUMPOSTDIV ? (uint64_t)N : 0;
    w[r].root = root;
    w[r].count = count;
    w[r].sendbuff = in[r];
    w[r].recvbuff = out[r];
    w[r].nChannels = (uint8_t)nch;
    w[r].chunkSize = (int32_t)(chunkSteps * STEP);
  }
  pthread_t th[MAXR * 2];
  chan_job_t jobs[MAXR * 2];
  for (int r = 0; r < N; r++)
    for (int c = 0; c < nch; c++) {
      jobs[r * nch + c] = (chan_job_t){r, c, &w[r], 0};
      pthread_create(&th[r * nch + c], NULL, run_chan, &jobs[r * nch + c]);
    }
  for (int k = 0; k < N * nch; k++) {
    pthread_join(th[k], NULL);
    CHECK_EQ_INT(jobs[k].result, ncclSuccess);
  }
  for (int r = 0; r < N; r++) {
    for (size_t i = 0; i < outElems; i++) {
      double e = 0;
      if (coll == MK_COLL_ALLGATHER) e = value((int)(i / count), i % count);
      else if (coll == MK_COLL_BROADCAST) e = value(root, i);
      else {
        if (coll == MK_COLL_REDUCE && r != root) continue;
        size_t src = coll == MK_COLL_REDUCESCATTER ? r * count + i : i;
        e = value(0, src);
        for (int k = 1; k < N; k++) {
          double v = value(k, src);
          e = op == MK_OP_MAX ? (v > e ? v : e) : op == MK_OP_MIN ? (v < e ? v : e) : e + v;
        }
        if (op == MK_OP_SUMPOSTDIV) e = (double)((int64_t)e / N);
      }
      unsigned char rounded[8];
      store(type, rounded, 0, e);
      CHECK_MSG(load(type, out[r], i) == load(type, rounded, 0),
                "coll %d type %d op %d count %zu root %d inplace %d nch %d: rank %d elem %zu = %g, expected %g", coll,
                type, op, count, root, inPlace, nch, r, i, load(type, out[r], i), e);
    }
  }
  for (int r = 0; r < N; r++) free(coll == MK_COLL_REDUCESCATTER && inPlace ? in[r] : out[r]);
  for (int r = 0; r < N; r++)
    if (!inPlace) free(in[r]);
}

int main(void) {
  const int types[] = {ncclInt8, ncclInt32, ncclUint64, ncclFloat16, ncclFloat32, ncclFloat64, ncclBfloat16, ncclFloat8e4m3};
  const size_t counts[] = {1, 7, 100, 1000, 12345};
  for (N = 2; N <= 5; N++) {
    for (NCH = 1; NCH <= 2; NCH++) {
      wire();
      storePolicy = (N + NCH) % 3 == 2 ? HOST_STORE_AUTO : (N + NCH) % 3;
      for (int r = 0; r < MAXR; r++)
        for (int c = 0; c < 2; c++) host_store_init(&stores[r][c], storePolicy, 0);
      for (int coll = 0; coll < MK_COLL_SENDRECV; coll++)
        for (size_t ci = 0; ci < sizeof(counts) / sizeof(counts[0]); ci++)
          for (int ti = 0; ti < 8; ti++) {
            int op = (coll == MK_COLL_ALLGATHER || coll == MK_COLL_BROADCAST) ? MK_OP_SUM : (int)((ci + ti) % 3 == 2 ? MK_OP_MAX : MK_OP_SUM);
            if (types[ti] == ncclInt32 && coll == MK_COLL_ALLREDUCE) op = MK_OP_SUMPOSTDIV;
            int root = (int)(ci % N);
            run(coll, types[ti], op, counts[ci], root, (int)(ci & 1), NCH);
          }
    }
  }
  for (int r = 0; r < MAXR; r++)
    for (int c = 0; c < 2; c++) free(chans[r][c].peers);
  free(links);
  return 0;
}
