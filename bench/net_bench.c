/* mkccl-net-bench PLUGIN.so [--dev D] [--min BYTES] [--max BYTES] [--iters N] [--window W]
 *
 * Point-to-point numbers of a net plugin between two processes on this
 * host: ping-pong (one-way latency = half a round trip, as fi_pingpong
 * reports it, and the bandwidth that implies) and a stream with W sends
 * in flight (bandwidth), per power-of-two size. A program, not a test:
 * the numbers go to docs/perf/. Plugins load through the conformance kit's
 * loading function (netcheck_load), the one place that knows how. */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "netcheck.h"

typedef struct {
  netcheck_plugin_t p;
  void *sc, *rc;      /* to and from the peer */
  void *smh, *rmh;
  char *sbuf, *rbuf;
  int ctl;
} bench_t;

static double bench_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void bench_die(const char* what, int res) {
  fprintf(stderr, "mkccl-net-bench: %s failed (%d)\n", what, res);
  exit(1);
}

static void bench_wait(bench_t* b, void* req, int* size) {
  int done = 0;
  double deadline = bench_now() + 60;
  while (!done) {
    ncclResult_t res = b->p.net->test(req, &done, size);
    if (res != ncclSuccess) bench_die("test", res);
    if (!done && bench_now() > deadline) bench_die("a transfer (60 s)", -1);
  }
}

static void* bench_isend(bench_t* b, size_t size, int tag) {
  void* req = NULL;
  while (!req) {
    ncclResult_t res = b->p.net->isend(b->sc, b->sbuf, size, tag, b->smh, NULL, &req);
    if (res != ncclSuccess) bench_die("isend", res);
  }
  return req;
}

static void* bench_irecv(bench_t* b, size_t size, int tag, size_t offset) {
  void* req = NULL;
  void* data = b->rbuf + offset;
  while (!req) {
    ncclResult_t res = b->p.net->irecv(b->rc, 1, &data, &size, &tag, &b->rmh, NULL, &req);
    if (res != ncclSuccess) bench_die("irecv", res);
  }
  return req;
}

/* Both sides listen, swap handles, then connect and accept together. */
static void bench_connect(bench_t* b, int dev) {
  const ncclNet_v12_t* net = b->p.net;
  char mine[NCCL_NET_HANDLE_MAXSIZE], theirs[NCCL_NET_HANDLE_MAXSIZE];
  void* lc = NULL;
  ncclResult_t res = net->listen(b->p.ctx, dev, mine, &lc);
  if (res != ncclSuccess) bench_die("listen", res);
  if (write(b->ctl, mine, sizeof(mine)) != (ssize_t)sizeof(mine) || read(b->ctl, theirs, sizeof(theirs)) != (ssize_t)sizeof(theirs))
    bench_die("handle exchange", -1);
  double deadline = bench_now() + 30;
  while (!b->sc || !b->rc) {
    ncclNetDeviceHandle_v12_t* dh = NULL;
    if (!b->sc && (res = net->connect(b->p.ctx, dev, theirs, &b->sc, &dh)) != ncclSuccess) bench_die("connect", res);
    if (!b->rc && (res = net->accept(lc, &b->rc, &dh)) != ncclSuccess) bench_die("accept", res);
    if (bench_now() > deadline) bench_die("connecting (30 s)", -1);
  }
  net->closeListen(lc);
}

static void bench_sync(bench_t* b) {
  char c = 1;
  if (write(b->ctl, &c, 1) != 1 || read(b->ctl, &c, 1) != 1) bench_die("sync", -1);
}

static int bench_iters(size_t size, int iters) {
  size_t cap = (size_t)256 << 20; /* about this many bytes per measurement */
  size_t n = size ? cap / size : (size_t)iters;
  return (int)(n < (size_t)iters ? (n < 10 ? 10 : n) : (size_t)iters);
}

/* rank 0 measures and prints; rank 1 mirrors. */
static void bench_size(bench_t* b, int rank, size_t size, int iters, int window) {
  int n = bench_iters(size, iters);
  int warm = n / 10 < 5 ? 5 : n / 10;
  double t0 = 0;
  for (int i = -warm; i < n; i++) {
    if (i == 0) t0 = bench_now();
    if (rank == 0) {
      void* r = bench_irecv(b, size, 1, 0);
      bench_wait(b, bench_isend(b, size, 1), NULL);
      bench_wait(b, r, NULL);
    } else {
      void* r = bench_irecv(b, size, 1, 0);
      bench_wait(b, r, NULL);
      bench_wait(b, bench_isend(b, size, 1), NULL);
    }
  }
  double lat = (bench_now() - t0) / n / 2;
  bench_sync(b);
  /* stream: rank 0 sends with `window` in flight; rank 1 answers at the end */
  int m = n < window * 4 ? window * 4 : n;
  void* reqs[NCCL_NET_MAX_REQUESTS];
  double s0 = bench_now();
  if (rank == 0) {
    for (int i = 0; i < m; i++) {
      if (i >= window) bench_wait(b, reqs[i % window], NULL);
      reqs[i % window] = bench_isend(b, size, 2);
    }
    for (int i = m - window; i < m; i++) bench_wait(b, reqs[i % window], NULL);
    bench_wait(b, bench_irecv(b, 1, 3, 0), NULL);
  } else {
    for (int i = 0; i < m; i++) {
      if (i >= window) bench_wait(b, reqs[i % window], NULL);
      reqs[i % window] = bench_irecv(b, size, 2, 0);
    }
    for (int i = m - window; i < m; i++) bench_wait(b, reqs[i % window], NULL);
    bench_wait(b, bench_isend(b, 1, 3), NULL);
  }
  double st = bench_now() - s0;
  if (rank == 0)
    printf("%12zu %8d %12.2f %12.2f %12.3f\n", size, n, lat * 1e6, size ? (double)size / lat / 1e6 : 0.0,
           (double)size * m / st / 1e9);
  bench_sync(b);
}

int main(int argc, char** argv) {
  const char* path = NULL;
  int dev = 0, iters = 1000, window = 16;
  size_t minSize = 8, maxSize = (size_t)16 << 20;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--dev") && i + 1 < argc) dev = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--min") && i + 1 < argc) minSize = strtoull(argv[++i], NULL, 0);
    else if (!strcmp(argv[i], "--max") && i + 1 < argc) maxSize = strtoull(argv[++i], NULL, 0);
    else if (!strcmp(argv[i], "--iters") && i + 1 < argc) iters = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--window") && i + 1 < argc) window = atoi(argv[++i]);
    else path = argv[i];
  }
  if (!path || window < 1 || window > NCCL_NET_MAX_REQUESTS || iters < 1) {
    fprintf(stderr, "usage: mkccl-net-bench PLUGIN.so [--dev D] [--min B] [--max B] [--iters N] [--window W<=32]\n");
    return 2;
  }
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) return 1;
  fflush(stdout);
  pid_t pid = fork(); /* before the plugin loads: each process has its own */
  int rank = pid == 0 ? 1 : 0;
  bench_t b;
  memset(&b, 0, sizeof(b));
  b.ctl = sv[rank];
  close(sv[1 - rank]);
  char why[512];
  if (netcheck_load(path, 0, &b.p, why, sizeof(why)) != 0) {
    fprintf(stderr, "mkccl-net-bench: %s\n", why);
    return 1;
  }
  bench_connect(&b, dev);
  b.sbuf = aligned_alloc(4096, (maxSize + 4095) / 4096 * 4096);
  b.rbuf = aligned_alloc(4096, (maxSize + 4095) / 4096 * 4096);
  memset(b.sbuf, 1, maxSize);
  memset(b.rbuf, 0, maxSize);
  ncclResult_t res = b.p.net->regMr(b.sc, b.sbuf, maxSize, NCCL_PTR_HOST, &b.smh);
  if (res == ncclSuccess) res = b.p.net->regMr(b.rc, b.rbuf, maxSize, NCCL_PTR_HOST, &b.rmh);
  if (res != ncclSuccess) bench_die("regMr", res);
  if (rank == 0) {
    printf("# mkccl-net-bench %s (\"%s\", ncclNetPlugin_v%d), device %d, stream window %d\n", path, b.p.name, b.p.abi,
           dev, window);
    printf("%12s %8s %12s %12s %12s\n", "bytes", "iters", "pp_lat_us", "pp_MB/s", "stream_GB/s");
  }
  for (size_t s = minSize; s <= maxSize; s *= 2) bench_size(&b, rank, s, iters, window);
  b.p.net->deregMr(b.sc, b.smh);
  b.p.net->deregMr(b.rc, b.rmh);
  b.p.net->closeSend(b.sc);
  b.p.net->closeRecv(b.rc);
  netcheck_unload(&b.p);
  if (rank == 1) _exit(0);
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}
