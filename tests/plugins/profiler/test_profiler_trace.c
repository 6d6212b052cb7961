/* The trace profiler loaded through the loader, two ranks of one
 * communicator in this process: after the synthetic run each rank's trace
 * is valid JSON (python3's parser) with the expected number of events per
 * category, the merge holds both ranks, and the summary has a line per
 * collective. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "check.h"
#include "profile/profile.h"
#include "profile_drive.h"

/* Runs python3 on `script` with `arg`; the first output line into out. */
static void python_run(const char* script, const char* arg, char* out, size_t size) {
  char cmd[4096];
  snprintf(cmd, sizeof(cmd), "%s -c \"%s\" '%s' 2>&1", PYTHON3, script, arg);
  FILE* p = popen(cmd, "r");
  CHECK(p);
  out[0] = 0;
  if (!fgets(out, (int)size, p)) out[0] = 0;
  size_t n = strlen(out);
  if (n && out[n - 1] == '\n') out[n - 1] = 0;
  CHECK_MSG(pclose(p) == 0, "python3 failed on %s: %s", arg, out);
}

/* Complete events per category, sorted: "coll=5 group=1 ...". */
static const char* count_script =
    "import json,sys,collections;"
    "d=json.load(open(sys.argv[1]));"
    "c=collections.Counter((e['pid'],e['cat']) for e in d['traceEvents'] if e['ph']=='X');"
    "print(' '.join('%d:%s=%d'%(k[0],k[1],v) for k,v in sorted(c.items())))";

static void expect_counts(const char* path, const char* ranks) {
  char got[4096], want[4096] = "";
  python_run(count_script, path, got, sizeof(got));
  int steps = 12 * NSTEPS / SLICE;
  for (const char* r = ranks; *r; r++) {
    char part[512];
    snprintf(part, sizeof(part),
             "%s%c:coll=5 %c:collapi=5 %c:group=1 %c:groupapi=1 %c:kernelch=5 %c:kernellaunch=1 %c:net=%d "
             "%c:p2p=2 %c:p2papi=2 %c:proxyop=12 %c:proxystep=%d %c:state=%d",
             want[0] ? " " : "", *r, *r, *r, *r, *r, *r, *r, steps, *r, *r, *r, *r, steps, *r, 2 * steps);
    strcat(want, part);
  }
  CHECK_MSG(strcmp(got, want) == 0, "%s:\n got  %s\n want %s", path, got, want);
}

int main(void) {
  char dir[] = "/tmp/mkccl-trace-XXXXXX";
  CHECK(mkdtemp(dir));
  setenv("MKCCL_PROFILER_DIR", dir, 1);
  setenv("NCCL_PROFILER_PLUGIN", PROFILER_PLUGIN, 1);
  unsetenv("MKCCL_PROFILER_MASK");
  profile_comm_t pc[2];
  for (int r = 0; r < 2; r++) {
    CHECK_NCCL(profile_comm_init(&pc[r], 0xabcdef, "trace-test", 1, 2, r));
    CHECK(pc[r].prof != NULL);
  }
  for (int r = 0; r < 2; r++) profile_drive_sequence(&pc[r]);
  for (int r = 1; r >= 0; r--) profile_comm_fini(&pc[r]);

  char trace[2][512], summary[512], merged[512];
  for (int r = 0; r < 2; r++) {
    snprintf(trace[r], sizeof(trace[r]), "%s/mkccl-trace-0000000000abcdef-r%d.json", dir, r);
    CHECK_MSG(access(trace[r], R_OK) == 0, "no trace %s", trace[r]);
  }
  expect_counts(trace[0], "0");
  expect_counts(trace[1], "1");

  snprintf(merged, sizeof(merged), "%s/merged.json", dir);
  char cmd[2048];
  snprintf(cmd, sizeof(cmd), "%s %s %s %s", TRACE_MERGE, merged, trace[0], trace[1]);
  CHECK_EQ_INT(system(cmd), 0);
  expect_counts(merged, "01");

  snprintf(summary, sizeof(summary), "%s/mkccl-trace-0000000000abcdef-r0.txt", dir);
  FILE* f = fopen(summary, "r");
  CHECK(f);
  char text[4096];
  size_t n = fread(text, 1, sizeof(text) - 1, f);
  text[n] = 0;
  fclose(f);
  CHECK_STR_CONTAINS(text, "rank 0 of 2, comm trace-test");
  for (int i = 0; i < 5; i++) {
    static const char* const lines[] = {"AllReduce               1             4096", "AllGather               1             8192",
                                        "ReduceScatter           1             8192", "Broadcast               1             4096",
                                        "Reduce                  1             4096"};
    CHECK_STR_CONTAINS(text, lines[i]);
  }
  CHECK_STR_CONTAINS(text, "Send                    1              256");
  CHECK_STR_CONTAINS(text, "dropped 0");
  if (getenv("MKCCL_TEST_KEEP")) return printf("kept %s\n", dir), 0;
  snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
  CHECK_EQ_INT(system(cmd), 0);
  printf("test_profiler_trace: OK\n");
  return 0;
}
