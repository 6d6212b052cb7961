/* Single copy over SHM: 3 host ranks, Send/Recv of registered buffers.
 *   cma:   a registered send buffer is read in place by its receiver
 *          (transport-shm's counter of bytes read so grows by exactly the
 *          bytes received from registered senders), no INFO line;
 *   off:   MKCCL_SHM_CMA=0: the counter stays 0, one INFO line;
 *   fault: MKCCL_SHM_CMA_FAULT=1 (EPERM): the counter stays 0, one INFO
 *          line saying process_vm_readv failed.
 * Every mode checks every byte on every rank: the data tell rank, call and
 * element apart. Calls: a ring exchange (out of place), a send and a
 * receive within one registered buffer, every rank to every other, an
 * unregistered sender, an unregistered receiver, a sender whose buffer is
 * a window (ncclCommWindowRegister); sizes from 1 byte to
 * several steps on every channel, odd ones included. Then ring AllGather
 * (NCCL_ALGO=Ring, NCCL_PROTO=Simple) out of place and in place, and
 * Broadcast from every root, on registered buffers (MKCCL_HOST_RING_REG_ADDR=1): each hop reads the
 * previous rank's input or output in place; with the output unregistered
 * only the first hop does.
 * Usage: test_transport_shm_cma cma|off|fault */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "nccl.h"
#include "ranks_id.h"
#include "plugin_check.h"
#include "shm_ring_colls.h"

#define N 3
static const char* mode;

static void* reg(ncclComm_t comm, void* p, size_t n) {
  void* h = NULL;
  CHECK_NCCL(ncclCommRegister(comm, p, n, &h));
  return h;
}

static const size_t sizes[] = {1, 4096 + 3, (3u << 20) + 5, (9u << 20) + 1};
#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))
#define MAXB ((9u << 20) + 1)

/* Registered malloc'ed buffers, for shm_ring_colls. */
static uint8_t* reg_alloc(ncclComm_t comm, size_t n, void** h) {
  uint8_t* p = calloc(1, n);
  CHECK(p);
  *h = reg(comm, p, n);
  return p;
}
static void reg_release(ncclComm_t comm, uint8_t* p, void* h) {
  CHECK_NCCL(ncclCommDeregister(comm, h));
  free(p);
}

static int rank_main(int rank, int n, void* arg) {
  (void)arg;
  ncclComm_t comm = ranks_comm_init(rank, n);
  int next = (rank + 1) % N, prev = (rank + N - 1) % N;
  uint64_t expected = 0; /* bytes this rank should read in place */
  int cma = strcmp(mode, "cma") == 0;
  uint8_t* sbuf = malloc(MAXB * N);
  uint8_t* rbuf = malloc(MAXB * N);
  uint8_t* both = malloc(2 * (size_t)MAXB);
  uint8_t* plain = malloc(MAXB);
  uint8_t* wbuf = malloc(MAXB);
  CHECK(sbuf && rbuf && both && plain && wbuf);
  ncclWindow_t win;
  CHECK_NCCL(ncclCommWindowRegister(comm, wbuf, MAXB, &win, NCCL_WIN_DEFAULT));
  void* hs = reg(comm, sbuf, MAXB * N);
  void* hr = reg(comm, rbuf, MAXB * N);
  void* hb = reg(comm, both, 2 * (size_t)MAXB);
  int call = 0;
  for (size_t k = 0; k < NSIZES; k++) {
    size_t b = sizes[k];
    /* Ring, out of place, both registered. */
    call++;
    fill(sbuf, b, rank, next, call);
    memset(rbuf, 0, b);
    CHECK_NCCL(ncclGroupStart());
    CHECK_NCCL(ncclSend(sbuf, b, ncclUint8, next, comm, NULL));
    CHECK_NCCL(ncclRecv(rbuf, b, ncclUint8, prev, comm, NULL));
    CHECK_NCCL(ncclGroupEnd());
    expect(rbuf, b, prev, rank, call);
    expected += b;
    /* In one registered buffer: send its first half, receive into its second. */
    call++;
    fill(both, b, rank, prev, call);
    memset(both + b, 0, b);
    CHECK_NCCL(ncclGroupStart());
    CHECK_NCCL(ncclSend(both, b, ncclUint8, prev, comm, NULL));
    CHECK_NCCL(ncclRecv(both + b, b, ncclUint8, next, comm, NULL));
    CHECK_NCCL(ncclGroupEnd());
    expect(both + b, b, next, rank, call);
    expect(both, b, rank, prev, call); /* the sent half is left as it was */
    expected += b;
    /* Every rank to every other, from and into parts of the registrations. */
    call++;
    memset(rbuf, 0, MAXB * N);
    CHECK_NCCL(ncclGroupStart());
    for (int p = 0; p < N; p++) {
      if (p == rank) continue;
      fill(sbuf + (size_t)p * b, b, rank, p, call);
      CHECK_NCCL(ncclSend(sbuf + (size_t)p * b, b, ncclUint8, p, comm, NULL));
      CHECK_NCCL(ncclRecv(rbuf + (size_t)p * b, b, ncclUint8, p, comm, NULL));
      expected += b;
    }
    CHECK_NCCL(ncclGroupEnd());
    for (int p = 0; p < N; p++)
      if (p != rank) expect(rbuf + (size_t)p * b, b, p, rank, call);
    /* Rank 0 sends from an unregistered buffer (copied), rank 1 receives
     * into one (read in place all the same: the receiver's own memory). */
    call++;
    uint8_t* src = rank == 0 ? plain : sbuf;
    uint8_t* dst = rank == 1 ? plain : rbuf;
    fill(src, b, rank, next, call);
    CHECK_NCCL(ncclGroupStart());
    CHECK_NCCL(ncclSend(src, b, ncclUint8, next, comm, NULL));
    CHECK_NCCL(ncclRecv(dst, b, ncclUint8, prev, comm, NULL));
    CHECK_NCCL(ncclGroupEnd());
    expect(dst, b, prev, rank, call);
    if (prev != 0) expected += b;
    /* From a window, into an unregistered buffer. */
    call++;
    fill(wbuf, b, rank, prev, call);
    memset(plain, 0, b);
    CHECK_NCCL(ncclGroupStart());
    CHECK_NCCL(ncclSend(wbuf, b, ncclUint8, prev, comm, NULL));
    CHECK_NCCL(ncclRecv(plain, b, ncclUint8, next, comm, NULL));
    CHECK_NCCL(ncclGroupEnd());
    expect(plain, b, next, rank, call);
    expected += b;
  }
  const shm_buf_kind_t kind = {reg_alloc, reg_release};
  shm_ring_colls(comm, rank, N, call, &kind, &expected);
  uint64_t got = plugin_counter("libmkccl-transport-shm.so", "mkcclShmCmaBytes");
  if (cma)
    CHECK_MSG(got == expected, "rank %d read %llu bytes in place, expected %llu", rank, (unsigned long long)got,
              (unsigned long long)expected);
  else
    CHECK_MSG(got == 0, "rank %d read %llu bytes in place with mode %s", rank, (unsigned long long)got, mode);
  CHECK_NCCL(ncclCommWindowDeregister(comm, win));
  CHECK_NCCL(ncclCommDeregister(comm, hb));
  CHECK_NCCL(ncclCommDeregister(comm, hr));
  CHECK_NCCL(ncclCommDeregister(comm, hs));
  CHECK_NCCL(ncclCommDestroy(comm));
  int off = plugin_log_lines("single copy off"), failed = plugin_log_lines("process_vm_readv from rank");
  CHECK_EQ_INT(off, strcmp(mode, "off") == 0);
  CHECK_EQ_INT(failed, strcmp(mode, "fault") == 0);
  free(wbuf), free(plain), free(both), free(rbuf), free(sbuf);
  printf("rank %d: %s: %llu bytes read in place: ok\n", rank, mode, (unsigned long long)got);
  return 0;
}

int main(int argc, char** argv) {
  mode = argc > 1 ? argv[1] : "cma";
  CHECK_MSG(!strcmp(mode, "cma") || !strcmp(mode, "off") || !strcmp(mode, "fault"), "unknown mode %s", mode);
  setenv("MKCCL_SHM_CMA", strcmp(mode, "off") ? "1" : "0", 1);
  setenv("NCCL_ALGO", "Ring", 1);
  setenv("NCCL_PROTO", "Simple", 1);
  setenv("MKCCL_HOST_RING_REG_ADDR", "1", 1);
  if (!strcmp(mode, "fault")) setenv("MKCCL_SHM_CMA_FAULT", "1", 1);
  plugin_log_start("INIT,SHM");
  int rc = ranks_run(N, rank_main, NULL, 120);
  plugin_log_end(rc);
  printf("test_transport_shm_cma %s: ok\n", mode);
  return 0;
}
