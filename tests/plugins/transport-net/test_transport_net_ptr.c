/* Registered send buffers over transport-net (PTR mode): N host ranks as
 * processes, forced onto the net (NCCL_SHM_DISABLE=1, NCCL_P2P_DISABLE=1),
 * Send/Recv from and into registered, windowed and plain buffers.
 *   ptr:   every byte sent from a registration or a window leaves from the
 *          user's buffer, and every byte received into one lands there:
 *          transport-net's counts of bytes sent and received in place grow
 *          by exactly those bytes, none copied, no INFO line;
 *   off:   MKCCL_NET_PTR=0: nothing counted, no INFO line;
 *   fault: MKCCL_NET_REG_FAULT=1 (regMr of user buffers fails): the same
 *          bytes are counted as copied through staging, none sent or
 *          received in place, and one INFO line names the failed regMr.
 * Every mode checks every byte on every rank (the data tell sender,
 * receiver, call and byte apart) and the guard bytes past each receive;
 * sizes from 1 byte to many steps on every channel, odd ones included. The
 * registrations the transport made with the net plugin of a buffer go when
 * the user deregisters it, and those left when the communicator goes.
 * Usage: test_transport_net_ptr ptr|off|fault N */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "nccl.h"
#include "plugin_check.h"
#include "ranks_id.h"

#define BUFFSIZE 65536 /* NCCL_BUFFSIZE: 8 KB steps, so a megabyte spans many */
#define STEP (BUFFSIZE / 8)
#define GUARD 64
static const char* mode;

/* The n bytes from `from`, then GUARD bytes still 0xa5. */
static void expect_guarded(const uint8_t* p, size_t n, int from, int to, int call) {
  expect(p, n, from, to, call);
  for (size_t i = n; i < n + GUARD; i++)
    CHECK_MSG(p[i] == 0xa5, "rank %d call %d: written past the %zu bytes from rank %d", to, call, n, from);
}

static void clear(uint8_t* p, size_t n) { memset(p, 0xa5, n + GUARD); }

/* transport-net's counters, asked of the plugin the library loaded. */
static uint64_t ptr_bytes(uint64_t* copied, uint64_t* received, int* regs) {
  uint64_t (*fn)(uint64_t*, uint64_t*, int*) =
      (uint64_t(*)(uint64_t*, uint64_t*, int*))plugin_sym("libmkccl-transport-net.so", "mkcclNetPtrBytes");
  return fn(copied, received, regs);
}

static void* reg(ncclComm_t comm, void* p, size_t n) {
  void* h = NULL;
  CHECK_NCCL(ncclCommRegister(comm, p, n, &h));
  return h;
}

static const size_t sizes[] = {1, STEP + 3, 37 * STEP + 5, (1u << 20) + 7};
#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))
#define MAXB ((1u << 20) + 7)

static int rank_main(int rank, int n, void* arg) {
  (void)arg;
  ncclComm_t comm = ranks_comm_init(rank, n);
  int next = (rank + 1) % n, prev = (rank + n - 1) % n;
  uint64_t expected = 0;     /* bytes this rank sent from registered buffers */
  uint64_t expectedRecv = 0; /* and received into them */
  size_t slot = MAXB + GUARD;
  uint8_t* sbuf = malloc(slot * (size_t)n);
  uint8_t* rbuf = malloc(slot * (size_t)n);
  uint8_t* plain = malloc(2 * slot);
  uint8_t* wbuf = malloc(slot);
  uint8_t* tmp = malloc(slot);
  CHECK(sbuf && rbuf && plain && wbuf && tmp);
  ncclWindow_t win;
  CHECK_NCCL(ncclCommWindowRegister(comm, wbuf, MAXB, &win, NCCL_WIN_DEFAULT));
  void* hs = reg(comm, sbuf, slot * (size_t)n);
  void* hr = reg(comm, rbuf, slot * (size_t)n);
  int call = 0;
  for (size_t k = 0; k < NSIZES; k++) {
    size_t b = sizes[k];
    /* Ring: registered to registered. */
    call++;
    fill(sbuf, b, rank, next, call);
    clear(rbuf, b);
    CHECK_NCCL(ncclGroupStart());
    CHECK_NCCL(ncclSend(sbuf, b, ncclUint8, next, comm, NULL));
    CHECK_NCCL(ncclRecv(rbuf, b, ncclUint8, prev, comm, NULL));
    CHECK_NCCL(ncclGroupEnd());
    expect_guarded(rbuf, b, prev, rank, call);
    expected += b;
    expectedRecv += b;
    /* Every rank to every other, from parts of one registration. */
    call++;
    CHECK_NCCL(ncclGroupStart());
    for (int p = 0; p < n; p++) {
      if (p == rank) continue;
      fill(sbuf + (size_t)p * slot, b, rank, p, call);
      clear(rbuf + (size_t)p * slot, b);
      CHECK_NCCL(ncclSend(sbuf + (size_t)p * slot, b, ncclUint8, p, comm, NULL));
      CHECK_NCCL(ncclRecv(rbuf + (size_t)p * slot, b, ncclUint8, p, comm, NULL));
      expected += b;
      expectedRecv += b;
    }
    CHECK_NCCL(ncclGroupEnd());
    for (int p = 0; p < n; p++)
      if (p != rank) expect_guarded(rbuf + (size_t)p * slot, b, p, rank, call);
    /* Rank 0 sends from a plain buffer (copied by its executor) to a
     * registered one, and receives into a plain one from a registered one. */
    call++;
    uint8_t* src = rank == 0 ? plain : sbuf;
    uint8_t* dst = rank == 0 ? plain + slot : rbuf;
    fill(src, b, rank, next, call);
    clear(dst, b);
    CHECK_NCCL(ncclGroupStart());
    CHECK_NCCL(ncclSend(src, b, ncclUint8, next, comm, NULL));
    CHECK_NCCL(ncclRecv(dst, b, ncclUint8, prev, comm, NULL));
    CHECK_NCCL(ncclGroupEnd());
    expect_guarded(dst, b, prev, rank, call);
    if (rank != 0) expected += b;
    if (rank != 0) expectedRecv += b;
    /* From a window. */
    call++;
    fill(wbuf, b, rank, prev, call);
    clear(rbuf, b);
    CHECK_NCCL(ncclGroupStart());
    CHECK_NCCL(ncclSend(wbuf, b, ncclUint8, prev, comm, NULL));
    CHECK_NCCL(ncclRecv(rbuf, b, ncclUint8, next, comm, NULL));
    CHECK_NCCL(ncclGroupEnd());
    expect_guarded(rbuf, b, next, rank, call);
    expected += b;
    expectedRecv += b;
    /* A registration made for one call, then gone: the next call from the
     * same buffer is a plain one. */
    void* ht = reg(comm, tmp, b);
    for (int again = 0; again < 2; again++) {
      call++;
      fill(tmp, b, rank, next, call);
      clear(rbuf, b);
      CHECK_NCCL(ncclGroupStart());
      CHECK_NCCL(ncclSend(tmp, b, ncclUint8, next, comm, NULL));
      CHECK_NCCL(ncclRecv(rbuf, b, ncclUint8, prev, comm, NULL));
      CHECK_NCCL(ncclGroupEnd());
      expect_guarded(rbuf, b, prev, rank, call);
      expectedRecv += b;
      if (again == 0) {
        expected += b;
        CHECK_NCCL(ncclCommDeregister(comm, ht));
      }
    }
  }
  /* Every rank done with its receives before any leaves (a rank whose
   * sends completed may otherwise depart while a peer still receives). */
  int* one = malloc(sizeof(int));
  CHECK(one);
  *one = 1;
  CHECK_NCCL(ncclAllReduce(one, one, 1, ncclInt32, ncclSum, comm, NULL));
  CHECK_EQ_INT(*one, n);
  free(one);
  uint64_t copied = 0, received = 0;
  int regs = 0;
  uint64_t inPlace = ptr_bytes(&copied, &received, &regs);
  printf("rank %d: %s: %llu bytes sent in place, %llu copied, %llu received in place, %d registrations with the net "
         "plugin\n",
         rank, mode, (unsigned long long)inPlace, (unsigned long long)copied, (unsigned long long)received, regs);
  if (!strcmp(mode, "ptr")) {
    CHECK_MSG(inPlace == expected && copied == 0, "rank %d sent %llu bytes in place and copied %llu, expected %llu in place",
              rank, (unsigned long long)inPlace, (unsigned long long)copied, (unsigned long long)expected);
    CHECK_MSG(received == expectedRecv, "rank %d received %llu bytes in place, expected %llu", rank,
              (unsigned long long)received, (unsigned long long)expectedRecv);
    CHECK_MSG(regs > 0, "rank %d holds no registration with the net plugin", rank);
  } else if (!strcmp(mode, "fault")) {
    CHECK_MSG(inPlace == 0 && copied == expected, "rank %d sent %llu bytes in place and copied %llu, expected %llu copied",
              rank, (unsigned long long)inPlace, (unsigned long long)copied, (unsigned long long)expected);
    CHECK_MSG(received == 0, "rank %d received %llu bytes in place with regMr failing", rank, (unsigned long long)received);
    CHECK_EQ_INT(regs, 0);
  } else {
    CHECK_MSG(inPlace == 0 && copied == 0 && received == 0, "rank %d counted %llu/%llu/%llu PTR bytes with MKCCL_NET_PTR=0",
              rank, (unsigned long long)inPlace, (unsigned long long)copied, (unsigned long long)received);
  }
  /* Deregistration drops what the transport registered of those buffers;
   * the receive buffer stays registered until the communicator goes. */
  CHECK_NCCL(ncclCommWindowDeregister(comm, win));
  CHECK_NCCL(ncclCommDeregister(comm, hs));
  int left = 0;
  ptr_bytes(NULL, NULL, &left);
  if (!strcmp(mode, "ptr"))
    CHECK_MSG(left > 0 && left < regs, "rank %d: %d registrations with the net plugin, %d after deregistering the send "
              "buffers", rank, regs, left);
  CHECK_NCCL(ncclCommDestroy(comm));
  ptr_bytes(NULL, NULL, &left);
  CHECK_MSG(left == 0, "rank %d: %d registrations with the net plugin outlive their communicator", rank, left);
  (void)hr; /* left registered through the destroy on purpose */
  int said = plugin_log_lines("goes through staging: the net plugin's regMr");
  CHECK_EQ_INT(said, !strcmp(mode, "fault"));
  CHECK_EQ_INT(plugin_log_lines("goes through staging"), said);
  free(tmp), free(wbuf), free(plain), free(rbuf), free(sbuf);
  return 0;
}

int main(int argc, char** argv) {
  mode = argc > 1 ? argv[1] : "ptr";
  int n = argc > 2 ? atoi(argv[2]) : 2;
  CHECK_MSG(!strcmp(mode, "ptr") || !strcmp(mode, "off") || !strcmp(mode, "fault"), "unknown mode %s", mode);
  CHECK(n >= 2);
  setenv("NCCL_SHM_DISABLE", "1", 1);
  setenv("NCCL_P2P_DISABLE", "1", 1);
  setenv("MKCCL_NET_PTR", strcmp(mode, "off") ? "1" : "0", 1);
  if (!strcmp(mode, "fault")) setenv("MKCCL_NET_REG_FAULT", "1", 1);
  char v[32];
  snprintf(v, sizeof(v), "%d", BUFFSIZE);
  setenv("NCCL_BUFFSIZE", v, 1);
  setenv("MKCCL_P2P_NCHANNELS", "2", 1);
  setenv("MKCCL_HOST_NCHANNELS", "2", 1);
  plugin_log_start("INIT,NET");
  plugin_log_end(ranks_run(n, rank_main, NULL, 300));
  printf("test_transport_net_ptr %s %d: ok\n", mode, n);
  return 0;
}
