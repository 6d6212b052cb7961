#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
/* Listen/connect/accept, transfers with deadlines and the abort flag, hello;
 * `test_sock_io ipv6`: IPv6 loopback (skipped where there is none). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "sock/sock.h"

static sock_addr_t loopback(int family) {
  sock_addr_t a;
  CHECK(sock_addr_parse(family == AF_INET6 ? "[::1]:0" : "127.0.0.1:0", family, &a) == SOCK_OK);
  return a;
}

/* A connected pair through a real listen socket. */
static void pair(int family, int* c, int* s) {
  sock_addr_t a = loopback(family), bound;
  int l = -1;
  CHECK(sock_listen(&a, 0, &l, &bound) == SOCK_OK);
  CHECK(sock_addr_port(&bound) > 0);
  CHECK(sock_connect(&bound, sock_deadline_ms(5000), NULL, c) == SOCK_OK);
  sock_addr_t peer;
  CHECK(sock_accept(l, sock_deadline_ms(5000), NULL, s, &peer) == SOCK_OK);
  CHECK(peer.sa.sa_family == family);
  sock_close(&l);
  CHECK(l == -1);
}

#define BIG (8u << 20)
struct xfer { int fd; int peerFd; unsigned char* out; unsigned char* in; int rc; };
static void* xfer_run(void* p) {
  struct xfer* x = p;
  x->rc = sock_sendrecv_all(x->fd, x->out, BIG, x->fd, x->in, BIG, sock_deadline_ms(30000), NULL);
  return NULL;
}

static void test_big_both_ways(void) {
  int c, s;
  pair(AF_INET, &c, &s);
  struct xfer a = {c, s, malloc(BIG), malloc(BIG), -9}, b = {s, c, malloc(BIG), malloc(BIG), -9};
  for (unsigned i = 0; i < BIG; i++) a.out[i] = (unsigned char)(i * 7), b.out[i] = (unsigned char)(i * 13 + 1);
  pthread_t t;
  CHECK(pthread_create(&t, NULL, xfer_run, &b) == 0);
  xfer_run(&a);
  pthread_join(t, NULL);
  CHECK(a.rc == SOCK_OK && b.rc == SOCK_OK);
  CHECK(memcmp(a.in, b.out, BIG) == 0 && memcmp(b.in, a.out, BIG) == 0);
  free(a.out), free(a.in), free(b.out), free(b.in);
  sock_close(&c), sock_close(&s);
}

static void test_timeout_and_close(void) {
  int c, s;
  pair(AF_INET, &c, &s);
  char buf[16];
  int64_t t0 = sock_time_ns();
  CHECK(sock_recv_all(s, buf, sizeof(buf), sock_deadline_ms(200), NULL) == SOCK_ETIMEOUT);
  CHECK(sock_time_ns() - t0 >= 150 * 1000000LL);
  CHECK_STR_CONTAINS(sock_error(), "timed out");
  CHECK(sock_send_all(c, "abc", 3, sock_deadline_ms(1000), NULL) == SOCK_OK);
  sock_close(&c);
  CHECK(sock_recv_all(s, buf, sizeof(buf), sock_deadline_ms(1000), NULL) == SOCK_ECLOSED);
  CHECK_STR_CONTAINS(sock_error(), "closed the connection after 3 of 16 bytes");
  sock_close(&s);
}

static volatile uint32_t abortFlag;
static void* raise_abort(void* p) {
  (void)p;
  usleep(100 * 1000);
  __atomic_store_n(&abortFlag, 1, __ATOMIC_RELEASE);
  return NULL;
}

static void test_abort(void) {
  int c, s;
  pair(AF_INET, &c, &s);
  pthread_t t;
  abortFlag = 0;
  CHECK(pthread_create(&t, NULL, raise_abort, NULL) == 0);
  char buf[4];
  CHECK(sock_recv_all(s, buf, sizeof(buf), SOCK_NO_DEADLINE, &abortFlag) == SOCK_EABORT);
  pthread_join(t, NULL);
  /* A raised flag stops accept and connect at once too. */
  sock_addr_t a = loopback(AF_INET), bound;
  int l;
  CHECK(sock_listen(&a, 0, &l, &bound) == SOCK_OK);
  int fd = -1;
  CHECK(sock_accept(l, SOCK_NO_DEADLINE, &abortFlag, &fd, NULL) == SOCK_EABORT && fd == -1);
  sock_close(&l);
  CHECK(sock_connect(&bound, SOCK_NO_DEADLINE, &abortFlag, &fd) == SOCK_EABORT && fd == -1);
  sock_close(&c), sock_close(&s);
}

/* A port nobody listens on: refused, retried, then a timeout that says why. */
static int free_port(void) {
  sock_addr_t a = loopback(AF_INET), bound;
  int l;
  CHECK(sock_listen(&a, 0, &l, &bound) == SOCK_OK);
  sock_close(&l);
  return sock_addr_port(&bound);
}

static sock_addr_t late_addr;
static void* late_listen(void* p) {
  usleep(150 * 1000);
  int l;
  CHECK(sock_listen(&late_addr, 0, &l, NULL) == SOCK_OK);
  int fd;
  *(int*)p = sock_accept(l, sock_deadline_ms(5000), NULL, &fd, NULL);
  sock_close(&fd);
  sock_close(&l);
  return NULL;
}

static void test_connect_retry(void) {
  sock_addr_t a = loopback(AF_INET);
  sock_addr_set_port(&a, free_port());
  int fd = -1;
  CHECK(sock_connect(&a, sock_deadline_ms(300), NULL, &fd) == SOCK_ETIMEOUT && fd == -1);
  CHECK_STR_CONTAINS(sock_error(), "Connection refused");
  /* The listener comes up while we retry. */
  late_addr = a;
  int acc = -9;
  pthread_t t;
  CHECK(pthread_create(&t, NULL, late_listen, &acc) == 0);
  CHECK(sock_connect(&a, sock_deadline_ms(5000), NULL, &fd) == SOCK_OK);
  pthread_join(t, NULL);
  CHECK(acc == SOCK_OK);
  sock_close(&fd);
}

static void test_hello_and_some(void) {
  int c, s;
  pair(AF_INET, &c, &s);
  CHECK(sock_hello_send(c, 0x1234, 7, 1, 42, sock_deadline_ms(1000), NULL) == SOCK_OK);
  sock_hello_t h;
  size_t done = 0;
  for (int i = 0; i < 1000 && done < sizeof(h); i++) {
    CHECK(sock_recv_some(s, &h, sizeof(h), &done) == SOCK_OK);
    if (done < sizeof(h)) usleep(1000);
  }
  CHECK(done == sizeof(h));
  CHECK(sock_hello_check(&h, 0x1234, 7, 1) == SOCK_OK && h.arg == 42);
  CHECK(sock_hello_check(&h, 0x1235, 7, 1) == SOCK_EPROTO);
  CHECK_STR_CONTAINS(sock_error(), "wrong magic");
  CHECK(sock_hello_check(&h, 0x1234, 8, 1) == SOCK_EPROTO);
  CHECK(sock_hello_check(&h, 0x1234, 7, 2) == SOCK_EPROTO);
  /* Nothing pending: OK, nothing moved. */
  done = 0;
  CHECK(sock_recv_some(s, &h, sizeof(h), &done) == SOCK_OK && done == 0);
  int fd;
  sock_addr_t a = loopback(AF_INET), bound;
  int l;
  CHECK(sock_listen(&a, 0, &l, &bound) == SOCK_OK);
  CHECK(sock_accept_try(l, &fd, NULL) == SOCK_OK && fd == -1);
  sock_close(&l);
  sock_close(&c), sock_close(&s);
}

static void test_ipv6(void) {
  sock_addr_t a = loopback(AF_INET6), bound;
  int l;
  if (sock_listen(&a, 0, &l, &bound) != SOCK_OK) SKIP("IPv6 loopback not available (%s)", sock_error());
  sock_close(&l);
  int c, s;
  pair(AF_INET6, &c, &s);
  CHECK(sock_send_all(c, "v6!", 4, sock_deadline_ms(1000), NULL) == SOCK_OK);
  char buf[4];
  CHECK(sock_recv_all(s, buf, 4, sock_deadline_ms(1000), NULL) == SOCK_OK && strcmp(buf, "v6!") == 0);
  sock_close(&c), sock_close(&s);
  printf("IPv6 loopback ok\n");
}

int main(int argc, char** argv) {
  if (argc > 1 && strcmp(argv[1], "ipv6") == 0) {
    test_ipv6();
    return 0;
  }
  test_big_both_ways();
  test_timeout_and_close();
  test_abort();
  test_connect_retry();
  test_hello_and_some();
  printf("ok\n");
  return 0;
}
