/* mkccl-netbench: point-to-point bandwidth of an NCCL net plugin over
 * loopback, next to a plain TCP stream on the same sizes.
 *
 * Two processes (fork): the child receives, the parent sends and times.
 * Plugin: ncclNetPlugin_v<N> loaded by path; up to `window` requests in
 * flight, as a proxy keeps steps in flight; the time of a size is from the
 * first isend to the receiver's "all received", over `iters` messages.
 * TCP: one connection, blocking write()/read() of the same messages.
 * Every message of a size carries the same bytes; the last one received is
 * checked (#wrong). Each size runs `reps` times, net and TCP alternating,
 * and the best time of each is reported: on a shared machine the best run
 * is the one least disturbed. Benchmarks print numbers; they assert nothing. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sched.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "net_any.h"

typedef struct {
  const char* plugin;
  int version;
  int dev;
  size_t minBytes, maxBytes;
  int factor;
  int iters;   /* 0: by size */
  int warmup;
  int window;
  int reps;    /* the best of reps runs is reported, net and TCP alternating */
  int runNet, runTcp;
} bench_opts_t;

static double bench_now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static void bench_die(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "mkccl-netbench [%d]: ", (int)getpid());
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
  exit(1);
}

#define BENCH_NET(call)                                                         \
  do {                                                                          \
    ncclResult_t r_ = (call);                                                   \
    if (r_ != ncclSuccess) bench_die("%s failed: error %d", #call, (int)r_);  \
  } while (0)

static void bench_logger(ncclDebugLogLevel level, unsigned long flags, const char* file, int line, const char* fmt,
                         ...) {
  (void)flags;
  if (level != NCCL_LOG_WARN) return;
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "[%d] WARN %s:%d ", (int)getpid(), file, line);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
}

/* Control channel between the two processes (AF_UNIX). */
static void ctl_write(int fd, const void* buf, size_t len) {
  for (size_t done = 0; done < len;) {
    ssize_t n = write(fd, (const char*)buf + done, len - done);
    if (n <= 0 && errno != EINTR) bench_die("control write: %s", strerror(errno));
    if (n > 0) done += (size_t)n;
  }
}
static void ctl_read(int fd, void* buf, size_t len) {
  for (size_t done = 0; done < len;) {
    ssize_t n = read(fd, (char*)buf + done, len - done);
    if (n == 0) bench_die("control read: peer exited");
    if (n < 0 && errno != EINTR) bench_die("control read: %s", strerror(errno));
    if (n > 0) done += (size_t)n;
  }
}

static int bench_iters(const bench_opts_t* o, size_t size) {
  if (o->iters > 0) return o->iters;
  size_t n = (size_t)(1ull << 30) / size; /* about 1 GB per size and run */
  return n < 8 ? 8 : n > 1000 ? 1000 : (int)n;
}

static uint8_t bench_byte(size_t size, size_t i) { return (uint8_t)(size * 31 + i * 7 + (i >> 12)); }

static long bench_wrong(const uint8_t* buf, size_t size) {
  long wrong = 0;
  for (size_t i = 0; i < size; i++) wrong += buf[i] != bench_byte(size, i);
  return wrong;
}

/* ---- plugin ---------------------------------------------------------------------------------- */

typedef struct {
  net_any_t net;
  void* comm;
  void* mhandle;
} bench_net_t;

/* Moves iters messages of size bytes, window in flight; returns when all done. */
static void net_run(bench_net_t* b, int isSend, uint8_t* buf, size_t size, int iters, int window) {
  void* reqs[NCCL_NET_MAX_REQUESTS] = {0};
  int posted = 0, done = 0, tag = 0;
  while (done < iters) {
    int progressed = 0;
    while (posted < iters && posted - done < window) {
      void** req = &reqs[posted % window];
      if (isSend) BENCH_NET(net_any_isend(&b->net, b->comm, buf, size, tag, b->mhandle, req));
      else BENCH_NET(net_any_irecv(&b->net, b->comm, 1, (void**)&buf, &size, &tag, &b->mhandle, req));
      if (!*req) break; /* plugin busy: test first */
      posted++;
    }
    int flag = 0, got = 0;
    BENCH_NET(net_any_test(&b->net, reqs[done % window], &flag, &got));
    if (flag) {
      if ((size_t)got != size) bench_die("message of %zu bytes completed with %d", size, got);
      done++;
      progressed = 1;
    }
    if (!progressed) sched_yield();
  }
}

static void net_setup(bench_net_t* b, const bench_opts_t* o, int isSend, int ctl) {
  char err[512];
  if (net_any_open(&b->net, o->plugin, o->version, err, sizeof(err)) != 0) bench_die("%s", err);
  BENCH_NET(net_any_init(&b->net, bench_logger));
  char handle[NCCL_NET_HANDLE_MAXSIZE];
  if (!isSend) {
    void* lc = NULL;
    BENCH_NET(net_any_listen(&b->net, o->dev, handle, &lc));
    ctl_write(ctl, handle, sizeof(handle));
    for (b->comm = NULL; !b->comm;) BENCH_NET(net_any_accept(&b->net, lc, &b->comm));
    BENCH_NET(net_any_close_listen(&b->net, lc));
  } else {
    ctl_read(ctl, handle, sizeof(handle));
    for (b->comm = NULL; !b->comm;) BENCH_NET(net_any_connect(&b->net, o->dev, handle, &b->comm));
  }
}

/* ---- plain TCP ------------------------------------------------------------------------------- */

static int tcp_setup(int isSend, int ctl) {
  int one = 1, fd;
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  socklen_t len = sizeof(a);
  if (!isSend) {
    int l = socket(AF_INET, SOCK_STREAM, 0);
    if (l < 0 || bind(l, (struct sockaddr*)&a, sizeof(a)) != 0 || listen(l, 1) != 0 ||
        getsockname(l, (struct sockaddr*)&a, &len) != 0)
      bench_die("tcp listen: %s", strerror(errno));
    ctl_write(ctl, &a.sin_port, sizeof(a.sin_port));
    fd = accept(l, NULL, NULL);
    close(l);
  } else {
    ctl_read(ctl, &a.sin_port, sizeof(a.sin_port));
    fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd >= 0 && connect(fd, (struct sockaddr*)&a, sizeof(a)) != 0) fd = -1;
  }
  if (fd < 0) bench_die("tcp connect: %s", strerror(errno));
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)); /* as the plugin's sockets */
  return fd;
}

static void tcp_run(int fd, int isSend, uint8_t* buf, size_t size, int iters) {
  for (int i = 0; i < iters; i++)
    for (size_t done = 0; done < size;) {
      ssize_t n = isSend ? write(fd, buf + done, size - done) : read(fd, buf + done, size - done);
      if (n <= 0 && !(n < 0 && errno == EINTR)) bench_die("tcp %s: %s", isSend ? "write" : "read", n ? strerror(errno) : "closed");
      if (n > 0) done += (size_t)n;
    }
}

/* ---- both ------------------------------------------------------------------------------------ */

enum { MODE_NET = 0, MODE_TCP = 1 };

/* One size, one mode: warm up, sync, time (sender), confirm (receiver). */
static double bench_size(const bench_opts_t* o, int mode, int isSend, int ctl, bench_net_t* net, int tcp,
                         uint8_t* buf, size_t size, long* wrong) {
  int iters = bench_iters(o, size);
  for (int pass = 0; pass < 2; pass++) {
    int n = pass == 0 ? o->warmup : iters;
    char go = 'g';
    if (isSend) ctl_read(ctl, &go, 1); /* the receiver is ready */
    else ctl_write(ctl, &go, 1);
    double t0 = bench_now_us();
    if (mode == MODE_NET) net_run(net, isSend, buf, size, n, o->window);
    else tcp_run(tcp, isSend, buf, size, n);
    long bad = 0;
    if (!isSend) {
      bad = bench_wrong(buf, size);
      ctl_write(ctl, &bad, sizeof(bad)); /* all received */
    } else {
      ctl_read(ctl, &bad, sizeof(bad));
    }
    if (pass == 1) {
      *wrong = bad;
      return (bench_now_us() - t0) / n;
    }
  }
  return 0;
}

static void bench_usage(const char* argv0) {
  fprintf(stderr,
          "usage: %s [-p plugin.so] [-v version] [-d dev] [-b minbytes] [-e maxbytes] [-f factor]\n"
          "          [-n iters] [-w warmup] [-W window] [-r reps] [-N (plugin only)] [-T (TCP only)]\n"
          "Sizes take K/M/G suffixes. Defaults: the net-socket plugin next to this program, v11,\n"
          "1K..256M, factor 2, window 8, best of 5 runs, NCCL_SOCKET_IFNAME=lo unless set.\n",
          argv0);
  exit(2);
}

static size_t bench_parse_size(const char* s) {
  char* end;
  double v = strtod(s, &end);
  if (*end == 'K' || *end == 'k') v *= 1024;
  else if (*end == 'M' || *end == 'm') v *= 1024 * 1024;
  else if (*end == 'G' || *end == 'g') v *= 1024.0 * 1024 * 1024;
  return (size_t)v;
}

static const char* bench_default_plugin(void) {
  static char path[PATH_MAX + 64];
  char exe[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  if (n <= 0) return "libmkccl-net-socket.so";
  exe[n] = '\0';
  char* slash = strrchr(exe, '/');
  if (slash) *slash = '\0';
  snprintf(path, sizeof(path), "%s/../lib/mkccl/libmkccl-net-socket.so", exe);
  return path;
}

int main(int argc, char** argv) {
  bench_opts_t o = {NULL, 11, 0, 1024, 256u << 20, 2, 0, 2, 8, 5, 1, 1};
  for (int c; (c = getopt(argc, argv, "p:v:d:b:e:f:n:w:W:r:NTh")) != -1;) {
    switch (c) {
      case 'p': o.plugin = optarg; break;
      case 'v': o.version = atoi(optarg); break;
      case 'd': o.dev = atoi(optarg); break;
      case 'b': o.minBytes = bench_parse_size(optarg); break;
      case 'e': o.maxBytes = bench_parse_size(optarg); break;
      case 'f': o.factor = atoi(optarg); break;
      case 'n': o.iters = atoi(optarg); break;
      case 'w': o.warmup = atoi(optarg); break;
      case 'W': o.window = atoi(optarg); break;
      case 'r': o.reps = atoi(optarg); break;
      case 'N': o.runTcp = 0; break;
      case 'T': o.runNet = 0; break;
      default: bench_usage(argv[0]);
    }
  }
  if (!o.plugin) o.plugin = bench_default_plugin();
  if (o.factor < 2 || o.minBytes < 1 || o.maxBytes < o.minBytes || o.window < 1 ||
      o.window > NCCL_NET_MAX_REQUESTS || o.maxBytes > INT_MAX || o.reps < 1)
    bench_usage(argv[0]);
  setenv("NCCL_SOCKET_IFNAME", "lo", 0); /* loopback unless the caller chose */

  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) bench_die("socketpair: %s", strerror(errno));
  fflush(stdout);
  pid_t child = fork();
  if (child < 0) bench_die("fork: %s", strerror(errno));
  int isSend = child != 0, ctl = isSend ? sv[0] : sv[1];
  close(isSend ? sv[1] : sv[0]);

  bench_net_t net;
  memset(&net, 0, sizeof(net));
  int tcp = -1;
  if (o.runNet) net_setup(&net, &o, isSend, ctl);
  if (o.runTcp) tcp = tcp_setup(isSend, ctl);
  uint8_t* buf = malloc(o.maxBytes);
  if (!buf) bench_die("out of memory for %zu bytes", o.maxBytes);
  if (o.runNet) BENCH_NET(net_any_reg_mr(&net.net, net.comm, buf, o.maxBytes, NCCL_PTR_HOST, &net.mhandle));

  if (isSend) {
    ncclNetProperties_v12_t props;
    memset(&props, 0, sizeof(props));
    if (o.runNet) BENCH_NET(net_any_props(&net.net, o.dev, &props));
    printf("# mkccl-netbench: one sender, one receiver (two processes), loopback\n");
    if (o.runNet)
      printf("# net: %s, ncclNetPlugin_v%d \"%s\", device %d (%s), %d requests in flight\n", o.plugin, o.version,
             net_any_name(&net.net), o.dev, props.name, o.window);
    if (o.runTcp) printf("# tcp: one stream on 127.0.0.1, blocking write()/read(), TCP_NODELAY\n");
    printf("# time: per message, from the first send to the receiver having all, best of %d runs;"
           " algbw = size / time\n#\n", o.reps);
    printf("# %10s %6s %12s %12s %12s %12s %8s %7s\n", "size(B)", "iters", "net(us)", "net(GB/s)", "tcp(us)",
           "tcp(GB/s)", "net/tcp", "#wrong");
  }
  for (size_t size = o.minBytes; size <= o.maxBytes; size *= (size_t)o.factor) {
    if (isSend)
      for (size_t i = 0; i < size; i++) buf[i] = bench_byte(size, i);
    double tNet = 0, tTcp = 0;
    long wNet = 0, wTcp = 0;
    for (int r = 0; r < o.reps; r++) {
      long w = 0;
      double t;
      if (o.runNet) {
        t = bench_size(&o, MODE_NET, isSend, ctl, &net, tcp, buf, size, &w);
        tNet = r == 0 || t < tNet ? t : tNet;
        wNet += w;
      }
      if (o.runTcp) {
        t = bench_size(&o, MODE_TCP, isSend, ctl, &net, tcp, buf, size, &w);
        tTcp = r == 0 || t < tTcp ? t : tTcp;
        wTcp += w;
      }
    }
    if (isSend) {
      double bwNet = tNet > 0 ? size / tNet / 1e3 : 0, bwTcp = tTcp > 0 ? size / tTcp / 1e3 : 0;
      printf("  %10zu %6d", size, bench_iters(&o, size));
      if (o.runNet) printf(" %12.2f %12.3f", tNet, bwNet);
      else printf(" %12s %12s", "-", "-");
      if (o.runTcp) printf(" %12.2f %12.3f", tTcp, bwTcp);
      else printf(" %12s %12s", "-", "-");
      if (o.runNet && o.runTcp) printf(" %7.0f%%", 100.0 * bwNet / bwTcp);
      else printf(" %8s", "-");
      printf(" %7ld\n", wNet + wTcp);
      fflush(stdout);
    }
    if (size > o.maxBytes / (size_t)o.factor) break;
  }
  if (o.runNet) {
    BENCH_NET(net_any_dereg_mr(&net.net, net.comm, net.mhandle));
    BENCH_NET(isSend ? net_any_close_send(&net.net, net.comm) : net_any_close_recv(&net.net, net.comm));
    net_any_close(&net.net);
  }
  if (tcp >= 0) close(tcp);
  free(buf);
  close(ctl);
  if (isSend) {
    int status = 0;
    waitpid(child, &status, 0);
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
  }
  return 0;
}
