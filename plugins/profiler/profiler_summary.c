/* The text summary: per collective (and Send/Recv) the count, bytes, time
 * from start to the end of its last proxy work, and bus bandwidth (NCCL
 * tests' definition). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profiler.h"

size_t profiler_type_size(const char* dt) {
  static const struct { const char* name; size_t size; } sizes[] = {
      {"ncclInt8", 1},    {"ncclUint8", 1},   {"ncclInt32", 4},    {"ncclUint32", 4},
      {"ncclInt64", 8},   {"ncclUint64", 8},  {"ncclFloat16", 2},  {"ncclFloat32", 4},
      {"ncclFloat64", 8}, {"ncclBfloat16", 2}, {"ncclFloat8e4m3", 1}, {"ncclFloat8e5m2", 1}};
  for (unsigned i = 0; dt && i < sizeof(sizes) / sizeof(sizes[0]); i++)
    if (strcmp(dt, sizes[i].name) == 0) return sizes[i].size;
  return 1;
}

#define SUMMARY_MAX 16

typedef struct {
  const char* func;
  uint64_t count, bytes;
  double us, busBytes;
} summary_row_t;

/* Bytes a collective moves as NCCL tests count them, and its bus factor. */
static void summary_bytes(const profiler_event_t* e, int n, uint64_t* bytes, double* factor) {
  const char* f = e->coll.func ? e->coll.func : "";
  uint64_t b = (uint64_t)e->coll.count * profiler_type_size(e->coll.datatype);
  *factor = 1.0;
  if (strcmp(f, "AllReduce") == 0) *factor = n > 1 ? 2.0 * (n - 1) / n : 1.0;
  if (strcmp(f, "AllGather") == 0 || strcmp(f, "ReduceScatter") == 0) {
    b *= (uint64_t)n;
    *factor = n > 1 ? (double)(n - 1) / n : 1.0;
  }
  *bytes = b;
}

int profiler_summary_write(profiler_ctx_t* ctx, const char* path) {
  uint64_t n = profiler_event_count(ctx);
  uint64_t* ends = profiler_ends_compute(ctx);
  if (!ends) return -1;
  summary_row_t rows[SUMMARY_MAX];
  int nRows = 0;
  for (uint64_t i = 0; i < n; i++) {
    profiler_event_t* e = profiler_event_at(ctx, i);
    if (!e || (e->type != ncclProfileColl && e->type != ncclProfileP2p)) continue;
    const char* func = e->coll.func ? e->coll.func : "?";
    int r = 0;
    while (r < nRows && strcmp(rows[r].func, func) != 0) r++;
    if (r == nRows) {
      if (nRows == SUMMARY_MAX) continue;
      rows[nRows++] = (summary_row_t){func, 0, 0, 0, 0};
    }
    uint64_t bytes;
    double factor;
    summary_bytes(e, ctx->nRanks, &bytes, &factor);
    rows[r].count++;
    rows[r].bytes += bytes;
    rows[r].busBytes += (double)bytes * factor;
    rows[r].us += (double)(ends[i] - e->start) / 1e3;
  }
  free(ends);
  FILE* f = fopen(path, "w");
  if (!f) return -1;
  fprintf(f, "# mkccl trace summary: rank %d of %d, comm %s (%016llx)\n", ctx->rank, ctx->nRanks, ctx->commName,
          (unsigned long long)ctx->commId);
  fprintf(f, "# %-14s %8s %16s %14s %12s %12s\n", "operation", "count", "bytes", "time(us)", "avg(us)", "busbw(GB/s)");
  for (int r = 0; r < nRows; r++)
    fprintf(f, "%-16s %8llu %16llu %14.1f %12.2f %12.3f\n", rows[r].func, (unsigned long long)rows[r].count,
            (unsigned long long)rows[r].bytes, rows[r].us, rows[r].us / (double)rows[r].count,
            rows[r].us > 0 ? rows[r].busBytes / (rows[r].us * 1e3) : 0.0);
  fprintf(f, "# events %llu, dropped %llu\n", (unsigned long long)n, (unsigned long long)atomic_load(&ctx->dropped));
  return fclose(f) == 0 ? 0 : -1;
}
