/* mkccl-tcp-exchange SIZE ITERS: two processes exchange SIZE bytes each way
 * per iteration over loopback TCP, each with a blocking sender thread and a
 * blocking receiver thread. A 2-rank ring AllReduce of SIZE bytes moves as
 * much each way, so this is what plain sockets give such an AllReduce on
 * this machine (docs/perf/host-net.md, "Plain TCP"). Prints; asserts nothing. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

typedef struct {
  int fd;
  char* buf;
  size_t size;
  int iters;
  int sending; /* write SIZE bytes each iteration, else read them */
  int failed;
} stream_t;

static void* stream_run(void* arg) {
  stream_t* s = arg;
  for (int i = 0; i < s->iters && !s->failed; i++)
    for (size_t done = 0; done < s->size;) {
      ssize_t n = s->sending ? write(s->fd, s->buf + done, s->size - done) : read(s->fd, s->buf + done, s->size - done);
      if (n <= 0) {
        s->failed = 1;
        break;
      }
      done += (size_t)n;
    }
  return NULL;
}

static int dial(const struct sockaddr_in* addr) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0 || connect(fd, (const struct sockaddr*)addr, sizeof(*addr)) != 0) return -1;
  return fd;
}

/* This process's outgoing and incoming sockets: the child dials twice, the
 * parent accepts twice; the child's first socket is the parent's incoming. */
static int connect_pair(int* out, int* in, pid_t* child) {
  struct sockaddr_in addr;
  memset(&addr, 0, sizeof(addr));
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  int ls = socket(AF_INET, SOCK_STREAM, 0);
  if (ls < 0 || bind(ls, (struct sockaddr*)&addr, sizeof(addr)) != 0 ||
      getsockname(ls, (struct sockaddr*)&addr, &len) != 0 || listen(ls, 2) != 0)
    return -1;
  *child = fork();
  if (*child < 0) return -1;
  if (*child == 0) {
    *out = dial(&addr);
    *in = dial(&addr);
  } else {
    *in = accept(ls, NULL, NULL);
    *out = accept(ls, NULL, NULL);
  }
  close(ls);
  int one = 1;
  if (*out < 0 || *in < 0) return -1;
  setsockopt(*out, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  setsockopt(*in, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  return 0;
}

int main(int argc, char** argv) {
  if (argc != 3 || atol(argv[1]) <= 0 || atoi(argv[2]) <= 0) {
    fprintf(stderr, "usage: mkccl-tcp-exchange SIZE_BYTES ITERS\n");
    return 2;
  }
  size_t size = (size_t)atol(argv[1]);
  int iters = atoi(argv[2]);
  int out, in;
  pid_t child;
  if (connect_pair(&out, &in, &child) != 0) {
    perror("mkccl-tcp-exchange: loopback connection");
    return 1;
  }
  stream_t tx = {out, malloc(size), size, iters, 1, 0}, rx = {in, malloc(size), size, iters, 0, 0};
  if (!tx.buf || !rx.buf) return 1;
  memset(tx.buf, 1, size);
  memset(rx.buf, 0, size); /* touched before the clock starts */
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  pthread_t ts, tr;
  pthread_create(&ts, NULL, stream_run, &tx);
  pthread_create(&tr, NULL, stream_run, &rx);
  pthread_join(ts, NULL);
  pthread_join(tr, NULL);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  if (child == 0) return tx.failed || rx.failed;
  int status = 0;
  waitpid(child, &status, 0);
  double us = ((double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec)) / 1e3 / iters;
  printf("%zu B each way: %.1f us per exchange, %.2f GB/s each way\n", size, us, (double)size / us / 1e3);
  return tx.failed || rx.failed || !WIFEXITED(status) || WEXITSTATUS(status) != 0;
}
