/* The Open MPI anchor for host Send/Recv: every rank sends to rank+1 and
 * receives from rank-1 at once (MPI_Sendrecv), as mkccl-perf sendrecv does
 * with ncclSend/ncclRecv, timed the same way and printed in the same
 * columns (busbw = algbw for Send/Recv). Over vader, Open MPI's single copy
 * is picked with --mca btl_vader_single_copy_mechanism cma|none. Built only
 * where an MPI compiler wrapper exists.
 *
 *   mpirun --allow-run-as-root -np 2 --mca btl vader,self mkccl-mpi-shm -b 1M -e 256M -f 2 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static size_t parse_size(const char* s) {
  char* end;
  double v = strtod(s, &end);
  if (*end == 'K' || *end == 'k') v *= 1024;
  if (*end == 'M' || *end == 'm') v *= 1024 * 1024;
  if (*end == 'G' || *end == 'g') v *= 1024.0 * 1024 * 1024;
  return (size_t)v;
}

static void exchange(const char* s, char* r, size_t bytes, int next, int prev) {
  MPI_Sendrecv(s, (int)bytes, MPI_BYTE, next, 0, r, (int)bytes, MPI_BYTE, prev, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, n;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  size_t minB = 1 << 20, maxB = 256 << 20;
  double factor = 2;
  int iters = 20, warmup = 5;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "-b")) minB = parse_size(argv[i + 1]);
    else if (!strcmp(argv[i], "-e")) maxB = parse_size(argv[i + 1]);
    else if (!strcmp(argv[i], "-f")) factor = atof(argv[i + 1]);
    else if (!strcmp(argv[i], "-n")) iters = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "-w")) warmup = atoi(argv[i + 1]);
  }
  if (maxB > (size_t)1 << 30 || factor < 1.01) {
    if (rank == 0) fprintf(stderr, "mkccl-mpi-shm: -e at most 1G (an int count), -f above 1\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  char* s = calloc(maxB, 1);
  char* r = calloc(maxB, 1);
  if (!s || !r) MPI_Abort(MPI_COMM_WORLD, 1);
  memset(s, rank + 1, maxB);
  int next = (rank + 1) % n, prev = (rank + n - 1) % n;
  if (rank == 0) {
    printf("# MPI_Sendrecv to rank+1 from rank-1: %d ranks\n", n);
    printf("#%11s  %12s  %8s  %8s  %6s  %6s\n", "size(B)", "count", "type", "time(us)", "algbw", "busbw");
  }
  size_t ends[2] = {maxB, minB};
  for (int e = 0; e < 2; e++)
    for (int w = 0; w < warmup; w++) exchange(s, r, ends[e], next, prev);
  for (size_t b = minB; b <= maxB; b = (size_t)(b * factor)) {
    for (int w = 0; w < warmup; w++) exchange(s, r, b, next, prev);
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int it = 0; it < iters; it++) exchange(s, r, b, next, prev);
    double us = (MPI_Wtime() - t0) * 1e6 / iters;
    double alg = (double)b / us / 1e3;
    if (r[b - 1] != (char)(prev + 1)) {
      fprintf(stderr, "mkccl-mpi-shm: rank %d: wrong data at %zu bytes\n", rank, b);
      MPI_Abort(MPI_COMM_WORLD, 3);
    }
    if (rank == 0) printf("%12zu  %12zu  %8s  %8.2f  %6.2f  %6.2f\n", b, b, "int8", us, alg, alg);
  }
  free(s);
  free(r);
  MPI_Finalize();
  return 0;
}
