/* mkccl-trace-merge: one Chrome trace of every rank from the per-rank
 * files the trace profiler writes (mkccl-trace-<comm>-r<rank>.json). Each
 * rank already has its own pid and wall-clock timestamps, so merging is
 * concatenating the event lines; the format (one event per line between
 * the header and the "]," line) is the profiler's, not any JSON. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int merge_file(const char* path, FILE* out, int* nOut) {
  FILE* f = fopen(path, "r");
  if (!f) {
    fprintf(stderr, "mkccl-trace-merge: cannot open %s\n", path);
    return -1;
  }
  char* line = NULL;
  size_t cap = 0;
  ssize_t len;
  int lineNo = 0, body = 0, ok = 0;
  while ((len = getline(&line, &cap, f)) > 0) {
    lineNo++;
    while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r')) line[--len] = 0;
    if (lineNo == 1) {
      if (strncmp(line, "{\"traceEvents\":[", 16) != 0) break;
      body = 1;
      continue;
    }
    if (line[0] == ']') {
      ok = body;
      break;
    }
    if (len && line[len - 1] == ',') line[--len] = 0;
    if (!len) continue;
    fputs((*nOut)++ ? ",\n" : "\n", out);
    fputs(line, out);
  }
  free(line);
  fclose(f);
  if (!ok) fprintf(stderr, "mkccl-trace-merge: %s is not a trace written by mkccl's profiler\n", path);
  return ok ? 0 : -1;
}

int main(int argc, char** argv) {
  if (argc < 3 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
    fprintf(argc < 3 ? stderr : stdout,
            "Usage: mkccl-trace-merge OUT.json RANK0.json [RANK1.json ...]\n"
            "Merges the per-rank traces of mkccl's trace profiler into one file Perfetto opens.\n");
    return argc < 3 ? 1 : 0;
  }
  FILE* out = fopen(argv[1], "w");
  if (!out) {
    fprintf(stderr, "mkccl-trace-merge: cannot write %s\n", argv[1]);
    return 1;
  }
  int n = 0, status = 0;
  fputs("{\"traceEvents\":[", out);
  for (int i = 2; i < argc && !status; i++) status = merge_file(argv[i], out, &n) != 0;
  fprintf(out, "\n],\"displayTimeUnit\":\"ns\",\"otherData\":{\"ranks\":%d}}\n", argc - 2);
  if (fclose(out) != 0) status = 1;
  return status;
}
