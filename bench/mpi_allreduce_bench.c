/* The anchor for host benchmarks: MPI_Allreduce (float sum) timed the way
 * mkccl-perf times ncclAllReduce, printing the same columns, so both go in
 * one table. Built only where an MPI compiler wrapper exists.
 *
 *   mpirun --allow-run-as-root -np 4 --mca btl tcp,self mkccl-mpi-allreduce -b 1K -e 256M -f 2 */
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

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, n;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  size_t minB = 8, maxB = 64 << 20;
  double factor = 2;
  int iters = 20, warmup = 5;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "-b")) minB = parse_size(argv[i + 1]);
    else if (!strcmp(argv[i], "-e")) maxB = parse_size(argv[i + 1]);
    else if (!strcmp(argv[i], "-f")) factor = atof(argv[i + 1]);
    else if (!strcmp(argv[i], "-n")) iters = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "-w")) warmup = atoi(argv[i + 1]);
  }
  float* s = calloc(maxB / 4 + 4, 4);
  float* r = calloc(maxB / 4 + 4, 4);
  if (rank == 0) {
    printf("# MPI_Allreduce float sum: %d ranks\n", n);
    printf("#%11s  %12s  %8s  %8s  %6s  %6s\n", "size(B)", "count", "type", "time(us)", "algbw", "busbw");
  }
  /* As mkccl-perf (and nccl-tests): the largest, then the smallest size first. */
  size_t ends[2] = {maxB, minB};
  for (int e = 0; e < 2; e++)
    for (int w = 0; w < warmup; w++) MPI_Allreduce(s, r, (int)(ends[e] / 4), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  for (size_t b = minB; b <= maxB; b = (size_t)(b * factor)) {
    int count = (int)(b / 4);
    for (int w = 0; w < warmup; w++) MPI_Allreduce(s, r, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int it = 0; it < iters; it++) MPI_Allreduce(s, r, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    double us = (MPI_Wtime() - t0) * 1e6 / iters;
    double alg = (double)count * 4 / us / 1e3, bus = alg * 2.0 * (n - 1) / n;
    if (rank == 0) printf("%12zu  %12d  %8s  %8.2f  %6.2f  %6.2f\n", (size_t)count * 4, count, "float", us, alg, bus);
  }
  free(s);
  free(r);
  MPI_Finalize();
  return 0;
}
