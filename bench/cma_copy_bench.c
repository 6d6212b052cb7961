/* process_vm_readv against memcpy: a forked child holds a buffer of SIZE MB;
 * the parent reads it through CMA in PIECE KB reads, then copies its own
 * copy with memcpy in the same pieces; three rounds of 5 passes each (the
 * first CMA round also pays the first touch of the child's pages). THP 1:
 * both buffers asked for transparent huge pages. What single copy over SHM
 * (plugins/transport-shm) is up against on a machine.
 *
 *   mkccl-cma-bench 64 512 0 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static char* buffer(size_t n, int thp, int fill) {
  char* p = aligned_alloc((size_t)2 << 20, n);
  if (!p) return NULL;
  if (thp) madvise(p, n, MADV_HUGEPAGE);
  memset(p, fill, n);
  return p;
}

int main(int argc, char** argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: mkccl-cma-bench SIZE_MB PIECE_KB THP\n");
    return 2;
  }
  size_t n = (size_t)atol(argv[1]) << 20, piece = (size_t)atol(argv[2]) << 10;
  int thp = atoi(argv[3]);
  if (n == 0 || piece == 0 || n % piece || n % ((size_t)2 << 20)) {
    fprintf(stderr, "mkccl-cma-bench: SIZE a multiple of 2 MB and of PIECE\n");
    return 2;
  }
  char* src = buffer(n, thp, 1);
  char* dst = buffer(n, thp, 2);
  if (!src || !dst) return 1;
  pid_t child = fork();
  if (child < 0) return 1;
  if (child == 0) {
    pause();
    _exit(0);
  }
  int rc = 0;
  for (int round = 0; round < 3 && rc == 0; round++) {
    double t = now_s();
    for (int pass = 0; pass < 5 && rc == 0; pass++)
      for (size_t o = 0; o < n; o += piece) {
        struct iovec l = {dst + o, piece}, r = {src + o, piece};
        if (process_vm_readv(child, &l, 1, &r, 1, 0) != (ssize_t)piece) {
          perror("process_vm_readv");
          rc = 1;
          break;
        }
      }
    double cma = (now_s() - t) / 5;
    t = now_s();
    for (int pass = 0; pass < 5; pass++)
      for (size_t o = 0; o < n; o += piece) memcpy(dst + o, src + o, piece);
    double mc = (now_s() - t) / 5;
    if (rc == 0)
      printf("%zu MB in %zu KB pieces, thp %d: process_vm_readv %.2f GB/s, memcpy %.2f GB/s\n", n >> 20, piece >> 10,
             thp, (double)n / cma / 1e9, (double)n / mc / 1e9);
  }
  kill(child, SIGKILL);
  waitpid(child, NULL, 0);
  free(dst);
  free(src);
  return rc;
}
