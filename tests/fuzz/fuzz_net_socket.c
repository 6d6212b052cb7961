/* Fuzz target: what the net-socket plugin accepts from the network. A
 * listener (one data socket, one helper thread) runs in this process; each
 * input is the bytes of one connector: its data socket and its control
 * socket, each starting with a 32-byte hello (net_socket_wire.h), then the
 * control stream (message headers, inline payloads) and the data socket's
 * chunks. accept() is called until the connection is returned or has been
 * dropped; then a fixed set of receives is posted and tested until each
 * completes or fails (the harness closed its end: nothing waits long).
 *
 * Input: flags, hello[data], hello[control], u16 control length, control
 * bytes, data-socket bytes (missing parts are zero). flags bit 0: the hellos
 * are made valid (proto, version, magic, nSocks, connId, index) so the
 * message checks are reached; bit 1: only the listener's magic is put in.
 * Oracle beyond crashes: completed receives never report more bytes than
 * the input sent (a header may not make up data). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fuzz_setup.h"
#include "net_socket_api.h"
#include "net_socket_handle.h"
#include "net_socket_recv.h"
#include "net_socket_setup.h"
#include "net_socket_test.h"
#include "net_socket_wire.h"
#include "sock/sock.h"

#define FUZZ_SOCKS 2 /* one data socket, then the control socket */

static int fuzz_ready = -1;

static int fuzz_init(void) {
  if (fuzz_ready >= 0) return fuzz_ready;
  setenv("NCCL_SOCKET_IFNAME", "lo", 1);
  setenv("NCCL_SOCKET_NTHREADS", "1", 1);
  setenv("NCCL_NSOCKS_PERTHREAD", "1", 1);
  setenv("NCCL_SOCKET_MIN_TASKSIZE", "1024", 1);
  fuzz_ready = net_socket_init(NULL) == ncclSuccess;
  return fuzz_ready;
}

static size_t fuzz_take(const uint8_t** data, size_t* size, void* out, size_t want) {
  size_t n = *size < want ? *size : want;
  if (out) {
    memset(out, 0, want);
    memcpy(out, *data, n);
  }
  *data += n;
  *size -= n;
  return n;
}

static char fuzz_buf0[256], fuzz_buf1[64], fuzz_buf2[8192], fuzz_buf3[16];

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (!fuzz_init()) fuzz_setup_failed("fuzz_net_socket", "net_socket_init on lo");
  net_socket_handle_t h;
  char opaque[NCCL_NET_HANDLE_MAXSIZE];
  void* listenComm = NULL;
  if (net_socket_listen(0, opaque, &listenComm, NCCL_NET_TRAFFIC_CLASS_UNDEF, 0) != ncclSuccess)
    fuzz_setup_failed("fuzz_net_socket", "net_socket_listen on lo");
  memcpy(&h, opaque, sizeof(h));

  uint8_t flags = 0;
  fuzz_take(&data, &size, &flags, 1);
  net_socket_hello_t hello[FUZZ_SOCKS];
  for (int i = 0; i < FUZZ_SOCKS; i++) {
    fuzz_take(&data, &size, &hello[i], sizeof(hello[i]));
    if (flags & 1) hello[i] = (net_socket_hello_t){NET_SOCKET_WIRE_PROTO, NET_SOCKET_WIRE_VERSION, h.magic, 0x6675, (uint32_t)i,
                                                   (uint32_t)h.nSocks};
    else if (flags & 2) hello[i].magic = h.magic;
  }
  uint16_t ctrlLen = 0;
  fuzz_take(&data, &size, &ctrlLen, sizeof(ctrlLen));
  const uint8_t* ctrl = data;
  size_t nCtrl = fuzz_take(&data, &size, NULL, ctrlLen);
  const uint8_t* rest = data;
  size_t nRest = size > 16384 ? 16384 : size;

  int fds[FUZZ_SOCKS] = {-1, -1};
  for (int i = 0; i < FUZZ_SOCKS; i++) {
    if (sock_connect(&h.addr, sock_deadline_ms(200), NULL, &fds[i]) != SOCK_OK)
      fuzz_setup_failed("fuzz_net_socket", sock_error()); /* the listener is ours, on lo */
    (void)sock_send_all(fds[i], &hello[i], sizeof(hello[i]), sock_deadline_ms(200), NULL);
    if (i == FUZZ_SOCKS - 1 && nCtrl) (void)sock_send_all(fds[i], ctrl, nCtrl, sock_deadline_ms(200), NULL);
    if (i == 0 && nRest) (void)sock_send_all(fds[i], rest, nRest, sock_deadline_ms(200), NULL);
    shutdown(fds[i], SHUT_WR);
  }

  void* recvComm = NULL;
  for (int tries = 0; tries < 20 && !recvComm; tries++) {
    if (net_socket_accept(listenComm, &recvComm) != ncclSuccess) break;
    if (!recvComm) usleep(100);
  }
  if (recvComm) {
    /* Receives of the kinds the core posts: single, grouped, zero-byte, large. */
    void* d0[1] = {fuzz_buf0};
    size_t s0[1] = {sizeof(fuzz_buf0)};
    int t0[1] = {0};
    void* d1[2] = {fuzz_buf1, fuzz_buf2};
    size_t s1[2] = {sizeof(fuzz_buf1), sizeof(fuzz_buf2)};
    int t1[2] = {1, 2};
    void* d2[1] = {fuzz_buf3};
    size_t s2[1] = {0};
    int t2[1] = {3};
    void* req[3] = {NULL, NULL, NULL};
    int live = 0;
    if (net_socket_irecv(recvComm, 1, d0, s0, t0, &req[0]) == ncclSuccess && req[0]) live++;
    if (net_socket_irecv(recvComm, 2, d1, s1, t1, &req[1]) == ncclSuccess && req[1]) live++;
    if (net_socket_irecv(recvComm, 1, d2, s2, t2, &req[2]) == ncclSuccess && req[2]) live++;
    net_socket_request_t* posted[3] = {req[0], req[1], req[2]};
    int64_t deadline = sock_deadline_ms(200);
    while (live && sock_time_ns() < deadline) {
      for (int r = 0; r < 3; r++) {
        if (!req[r]) continue;
        int done = 0, sizes[2];
        if (net_socket_test(req[r], &done, sizes) != ncclSuccess) {
          live = 0; /* the comm is dead */
          break;
        }
        if (done) {
          for (int i = 0; i < (r == 1 ? 2 : 1); i++)
            if (sizes[i] < 0 || (size_t)sizes[i] > nCtrl + nRest) __builtin_trap();
          req[r] = NULL;
          live--;
        }
      }
      /* A header no posted receive matches waits for one that never comes. */
      if (((net_socket_comm_t*)recvComm)->rxState == NET_SOCKET_RX_MATCH) break;
    }
    /* Whatever the order of the tests: the receives the comm counts as
     * complete never hold more bytes than arrived. */
    size_t got = 0;
    for (int r = 0; r < 3; r++) {
      net_socket_request_t* q = posted[r];
      for (int i = 0; q && i < q->n; i++)
        if (q->subs[i].matched && atomic_load(&q->subs[i].pending) == 0) got += q->subs[i].received;
    }
    if (got > nCtrl + nRest) __builtin_trap();
    net_socket_close_comm(recvComm);
  }
  for (int i = 0; i < FUZZ_SOCKS; i++) sock_close(&fds[i]);
  net_socket_close_listen(listenComm);
  return 0;
}
