/* The rule tuner: match order, ranges, collective lists, pipe ops and
 * registration; every bad-rule message with file:line:col; and the plugin
 * itself: the table it leaves, chunk sizes, reload when the file changes,
 * a bad reload keeping the old rules. */
#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "check.h"
#include "tuner/nccl_tuner.h"
#include "tuner_rules.h"

static tuner_rules_t parse_ok(const char* text) {
  tuner_rules_t r = {NULL, 0};
  char err[512] = "";
  int res = tuner_rules_parse_text("t.yaml", text, strlen(text), &r, err, sizeof(err));
  CHECK_MSG(res == 0, "%s", err);
  return r;
}

static int match(const tuner_rules_t* r, int func, uint64_t bytes, uint64_t nRanks, uint64_t nNodes, uint64_t pipe,
                 int reg) {
  tuner_rules_query_t q = {func, bytes, nRanks, nNodes, pipe, reg};
  return tuner_rules_match(r, &q);
}

static void test_semantics(void) {
  tuner_rules_t r = parse_ok(
      "rules:\n"
      "  - coll: allreduce\n"
      "    bytes: [0, 64KiB]\n"
      "    nnodes: [2, inf]\n"
      "    algo: tree\n"
      "    proto: ll\n"
      "  - coll: [allreduce, allgather]\n"
      "    bytes: [0, 1M]\n"
      "    algo: ring\n"
      "  - pipeops: [2, 8]\n"
      "    regbuff: true\n"
      "    channels: 2\n"
      "  - nranks: 16\n"
      "    chunksize: 128k\n");
  CHECK_EQ_INT(r.n, 4);
  CHECK_EQ_INT(r.rules[0].line, 2);
  CHECK_EQ_INT(r.rules[0].bytes.hi, 65536);
  CHECK_EQ_INT(r.rules[3].chunkSize, 131072);
  /* First match wins; ranges are inclusive at both ends. */
  CHECK_EQ_INT(match(&r, ncclFuncAllReduce, 65536, 8, 2, 1, 0), 0);
  CHECK_EQ_INT(match(&r, ncclFuncAllReduce, 65537, 8, 2, 1, 0), 1);
  CHECK_EQ_INT(match(&r, ncclFuncAllReduce, 100, 8, 1, 1, 0), 1);   /* one node: rule 0 does not match */
  CHECK_EQ_INT(match(&r, ncclFuncAllGather, 100, 8, 4, 1, 0), 1);   /* in rule 1's list */
  CHECK_EQ_INT(match(&r, ncclFuncAllGather, (1 << 20) + 1, 8, 4, 1, 0), -1);
  CHECK_EQ_INT(match(&r, ncclFuncBroadcast, 100, 8, 4, 4, 1), 2);    /* any collective */
  CHECK_EQ_INT(match(&r, ncclFuncBroadcast, 100, 8, 4, 4, 0), -1);   /* not registered */
  CHECK_EQ_INT(match(&r, ncclFuncBroadcast, 100, 8, 4, 9, 1), -1);   /* pipeops above range */
  CHECK_EQ_INT(match(&r, ncclFuncReduce, 1 << 30, 16, 4, 1, 0), 3);
  CHECK_EQ_INT(match(&r, ncclFuncReduce, 1 << 30, 17, 4, 1, 0), -1);
  tuner_rules_free(&r);

  /* Applying: algo+proto forces the cell; algo alone keeps its protocols. */
  r = parse_ok("rules:\n  - algo: tree\n    proto: ll\n  - algo: ring\n  - proto: simple\n    channels: 5\n");
  float t[NCCL_NUM_ALGORITHMS][NCCL_NUM_PROTOCOLS];
  for (int a = 0; a < NCCL_NUM_ALGORITHMS; a++)
    for (int p = 0; p < NCCL_NUM_PROTOCOLS; p++) t[a][p] = a <= 1 ? 10.0f + a + p : -1.0f;
  int nc = 1;
  CHECK_EQ_INT(tuner_rules_apply(&r.rules[0], (float**)t, 7, 3, &nc), 1);
  CHECK(t[NCCL_ALGO_TREE][NCCL_PROTO_LL] == 0.0f && t[NCCL_ALGO_RING][NCCL_PROTO_SIMPLE] < 0);
  for (int a = 0; a < NCCL_NUM_ALGORITHMS; a++)
    for (int p = 0; p < NCCL_NUM_PROTOCOLS; p++) t[a][p] = a <= 1 ? 10.0f + a + p : -1.0f;
  CHECK_EQ_INT(tuner_rules_apply(&r.rules[1], (float**)t, 7, 3, &nc), 1);
  CHECK(t[NCCL_ALGO_TREE][NCCL_PROTO_LL] < 0 && t[NCCL_ALGO_RING][NCCL_PROTO_LL] == 11.0f);
  CHECK(t[NCCL_ALGO_RING][NCCL_PROTO_SIMPLE] == 13.0f);
  CHECK_EQ_INT(tuner_rules_apply(&r.rules[2], (float**)t, 7, 3, &nc), 1);
  CHECK_EQ_INT(nc, 5);
  CHECK(t[NCCL_ALGO_RING][NCCL_PROTO_LL] < 0 && t[NCCL_ALGO_RING][NCCL_PROTO_SIMPLE] == 13.0f);
  /* A choice the table does not offer changes nothing. */
  t[NCCL_ALGO_TREE][NCCL_PROTO_LL] = -1.0f;
  nc = 1;
  float before = t[NCCL_ALGO_RING][NCCL_PROTO_SIMPLE];
  CHECK_EQ_INT(tuner_rules_apply(&r.rules[0], (float**)t, 7, 3, &nc), 0);
  CHECK(t[NCCL_ALGO_RING][NCCL_PROTO_SIMPLE] == before);
  tuner_rules_free(&r);
}

static void expect_error(const char* text, const char* expected) {
  tuner_rules_t r = {(tuner_rules_rule_t*)0x1, 77};
  char err[512] = "";
  CHECK_MSG(tuner_rules_parse_text("bad.yaml", text, strlen(text), &r, err, sizeof(err)) == -1, "accepted: %s", text);
  CHECK_STR_CONTAINS(err, expected);
  CHECK(r.n == 77); /* untouched */
}

static void test_errors(void) {
  expect_error("", "bad.yaml:1:1: empty file: expected 'rules:'");
  expect_error("- algo: ring\n", "bad.yaml:1:1: expected a mapping with 'rules:'");
  expect_error("rulez:\n  - algo: ring\n", "bad.yaml:1:1: unknown key 'rulez' (expected 'rules')");
  expect_error("rules: ring\n", "bad.yaml:1:8: rules: expected a list of rules");
  expect_error("rules:\n  - ring\n", "bad.yaml:2:5: expected a rule (a mapping of keys)");
  expect_error("rules:\n  - bites: 5\n    algo: ring\n", "bad.yaml:2:5: unknown key 'bites' (expected coll, bytes");
  expect_error("rules:\n  - coll: allreduc\n    algo: ring\n",
               "bad.yaml:2:11: coll: expected a collective (allreduce, allgather, reducescatter, broadcast, reduce, "
               "any), got 'allreduc'");
  expect_error("rules:\n  - coll: [allreduce, send]\n    algo: ring\n", "bad.yaml:2:23: coll: expected a collective");
  expect_error("rules:\n  - bytes: [1M, 1K]\n    algo: ring\n",
               "bad.yaml:2:12: bytes: range [1M, 1K] is empty (min > max)");
  expect_error("rules:\n  - bytes: [0, lots]\n    algo: ring\n",
               "bad.yaml:2:16: bytes: expected a number or inf, got 'lots'");
  expect_error("rules:\n  - nranks: 4x\n    algo: ring\n",
               "bad.yaml:2:13: nranks: expected a number or [min, max], got '4x'");
  expect_error("rules:\n  - nnodes: [1, 2, 3]\n    algo: ring\n",
               "bad.yaml:2:13: nnodes: expected a number or [min, max]");
  expect_error("rules:\n  - regbuff: maybe\n    algo: ring\n",
               "bad.yaml:2:14: regbuff: expected true or false, got 'maybe'");
  expect_error("rules:\n  - algo: rign\n",
               "bad.yaml:2:11: algo: expected an algorithm (tree, ring, collnetdirect, collnetchain, nvls, nvlstree, "
               "pat), got 'rign'");
  expect_error("rules:\n  - proto: ll256\n", "bad.yaml:2:12: proto: expected a protocol (ll, ll128, simple), got 'll256'");
  expect_error("rules:\n  - channels: 0\n", "bad.yaml:2:15: channels: expected a channel count 1..64, got '0'");
  expect_error("rules:\n  - chunksize: big\n",
               "bad.yaml:2:16: chunksize: expected a size in bytes (e.g. 128KiB), got 'big'");
  expect_error("rules:\n  - coll: allreduce\n", "bad.yaml:2:5: this rule sets nothing (expected algo, proto");
  expect_error("rules:\n  - algo: ring\n    algo: tree\n", "bad.yaml:3:5: key 'algo' appears twice in this rule");
  expect_error("rules:\n  - algo: [ring\n", "bad.yaml:3:1: YAML syntax:");
}

/* The plugin, loaded as NCCL would. */
static char log_last[1024];
static void test_log(ncclDebugLogLevel level, unsigned long flags, const char* file, int line, const char* fmt, ...) {
  (void)flags, (void)file, (void)line;
  if (level != NCCL_LOG_WARN) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(log_last, sizeof(log_last), fmt, ap);
  va_end(ap);
}

static void write_file(const char* path, const char* text) {
  char tmp[512];
  snprintf(tmp, sizeof(tmp), "%s.tmp", path);
  FILE* f = fopen(tmp, "w");
  CHECK(f && fputs(text, f) >= 0 && fclose(f) == 0);
  CHECK(rename(tmp, path) == 0); /* a new inode: the stamp changes even within one clock tick */
}

static int decide(const ncclTuner_v6_t* t, void* ctx, size_t bytes, int* nc) {
  float table[NCCL_NUM_ALGORITHMS][NCCL_NUM_PROTOCOLS];
  for (int a = 0; a < NCCL_NUM_ALGORITHMS; a++)
    for (int p = 0; p < NCCL_NUM_PROTOCOLS; p++) table[a][p] = a <= 1 ? 100.0f - a : -1.0f; /* ring cheaper */
  *nc = 0;
  CHECK_NCCL(t->getCollInfo(ctx, ncclFuncAllReduce, bytes, 1, (float**)table, 7, 3, 0, nc));
  int best = -1;
  for (int a = 0; a < NCCL_NUM_ALGORITHMS; a++)
    for (int p = 0; p < NCCL_NUM_PROTOCOLS; p++)
      if (table[a][p] >= 0 && (best < 0 || table[a][p] < table[best / 3][best % 3])) best = a * 3 + p;
  return best;
}

static void test_plugin(void) {
  char dir[] = "/tmp/mkccl-rules-XXXXXX";
  CHECK(mkdtemp(dir));
  char path[256];
  snprintf(path, sizeof(path), "%s/rules.yaml", dir);
  write_file(path, "rules:\n  - bytes: [0, 4K]\n    algo: tree\n    proto: ll\n    channels: 2\n    chunksize: 8K\n");
  setenv("MKCCL_TUNER_RULES", path, 1);
  setenv("MKCCL_TUNER_RULES_CHECK_MS", "0", 1);
  void* lib = dlopen(TUNER_RULES_PLUGIN, RTLD_NOW | RTLD_LOCAL);
  CHECK_MSG(lib, "%s", dlerror());
  const ncclTuner_v6_t* t = dlsym(lib, "ncclTunerPlugin_v6");
  CHECK(t && dlsym(lib, "ncclTunerPlugin_v5") && dlsym(lib, "mkcclPluginInfo_v1"));
  ncclNvlDomainInfo_v5_t nvl = {2, 4, 4};
  ncclTunerConstants_v5_t constants;
  memset(&constants, 0, sizeof(constants));
  void* ctx = NULL;
  CHECK_NCCL(t->init(&ctx, 1, 8, 2, test_log, &nvl, &constants));
  int nc;
  CHECK_EQ_INT(decide(t, ctx, 1024, &nc), NCCL_ALGO_TREE * 3 + NCCL_PROTO_LL);
  CHECK_EQ_INT(nc, 2);
  size_t chunk = 1000;
  CHECK_NCCL(t->getChunkSize(ctx, ncclFuncAllReduce, 1024, NCCL_ALGO_TREE, NCCL_PROTO_LL, 2, &chunk));
  CHECK_EQ_INT(chunk, 8192);
  CHECK_EQ_INT(decide(t, ctx, 1 << 20, &nc), NCCL_ALGO_RING * 3 + 0); /* no rule: table untouched */
  CHECK_EQ_INT(nc, 0);
  chunk = 1000;
  CHECK_NCCL(t->getChunkSize(ctx, ncclFuncAllReduce, 1 << 20, NCCL_ALGO_RING, NCCL_PROTO_LL, 2, &chunk));
  CHECK_EQ_INT(chunk, 1000);

  /* Changed file: reloaded at the next collective. */
  write_file(path, "rules:\n  - coll: allreduce\n    algo: tree\n    proto: simple\n");
  CHECK_EQ_INT(decide(t, ctx, 1 << 20, &nc), NCCL_ALGO_TREE * 3 + NCCL_PROTO_SIMPLE);
  /* A bad version is reported with file:line:col and the rules stay. */
  write_file(path, "rules:\n  - coll: allreduce\n    algo: tre\n");
  log_last[0] = 0;
  CHECK_EQ_INT(decide(t, ctx, 1 << 20, &nc), NCCL_ALGO_TREE * 3 + NCCL_PROTO_SIMPLE);
  char expect[512];
  snprintf(expect, sizeof(expect), "%s:3:11: algo: expected an algorithm", path);
  CHECK_STR_CONTAINS(log_last, expect);
  CHECK_STR_CONTAINS(log_last, "keeping the 1 rules loaded before");
  log_last[0] = 0;
  decide(t, ctx, 1 << 20, &nc);
  CHECK_EQ_INT(log_last[0], 0); /* reported once, not at every collective */
  write_file(path, "rules:\n  - algo: ring\n    proto: ll\n");
  CHECK_EQ_INT(decide(t, ctx, 1 << 20, &nc), NCCL_ALGO_RING * 3 + NCCL_PROTO_LL);
  CHECK_NCCL(t->finalize(ctx));

  /* A bad file at init fails the plugin, naming the place. */
  write_file(path, "rules:\n  - bytes: [9, 1]\n    algo: ring\n");
  log_last[0] = 0;
  ctx = NULL;
  CHECK(t->init(&ctx, 1, 8, 2, test_log, &nvl, &constants) == ncclInvalidUsage);
  snprintf(expect, sizeof(expect), "%s:2:12: bytes: range [9, 1] is empty", path);
  CHECK_STR_CONTAINS(log_last, expect);
  unsetenv("MKCCL_TUNER_RULES");
  CHECK(t->init(&ctx, 1, 8, 2, test_log, &nvl, &constants) == ncclInvalidUsage);
  CHECK_STR_CONTAINS(log_last, "MKCCL_TUNER_RULES names no rules file");
  dlclose(lib);
  unlink(path);
  rmdir(dir);
}

int main(void) {
  test_semantics();
  test_errors();
  test_plugin();
  printf("test_tuner_rules: OK\n");
  return 0;
}
