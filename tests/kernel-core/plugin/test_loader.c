/* The loader's choices: every skip reason followed by the next candidate
 * taken, NCCL's variables (none, a path, a name), NCCL_NET, priorities,
 * manifest options, refcounting, the generic kinds. Each scenario runs in
 * its own process: the loader's state is process-wide. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/param.h"
#include "check.h"
#include "plugin/loader.h"
#include "plugin/net.h"
#include "ranks.h"

static char tmpdir[64];

static void write_file(const char* name, const char* text) {
  char path[192];
  snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
  FILE* f = fopen(path, "w");
  CHECK(f != NULL);
  fputs(text, f);
  fclose(f);
}

/* A manifest in tmpdir whose libraries are the test plugins. */
static void write_manifest(const char* name, const char* entries) {
  char text[4200];
  snprintf(text, sizeof(text), "mkccl-manifest: 1\nplugins:\n%s", entries);
  write_file(name, text);
}

static void use_manifests(const char* names) {
  char list[512] = "";
  char copy[256];
  snprintf(copy, sizeof(copy), "%s", names);
  for (char *save = NULL, *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
    size_t n = strlen(list);
    snprintf(list + n, sizeof(list) - n, "%s%s/%s", n ? ":" : "", tmpdir, t);
  }
  setenv("MKCCL_MANIFEST", list, 1);
}

static void env_clean(void) {
  unsetenv("NCCL_NET");
  unsetenv("NCCL_NET_PLUGIN");
  unsetenv("MKCCL_MANIFEST");
  unsetenv("TEST_NET_NDEV");
  unsetenv("TEST_NET_INIT_FAIL");
}

typedef struct {
  plugin_outcome_t outcome;
  const char* reason; /* substring, or NULL */
} expect_t;

/* The kind's records must be `n` candidates with these outcomes, in order;
 * the first `skipEmbedded` records (the embedded default's net-socket, whose
 * file is not beside this test) are checked to be that. */
static plugin_candidate_t* expect_records(plugin_kind_t kind, const expect_t* want, int n) {
  plugin_candidate_t* c = NULL;
  int got = 0;
  char note[PLUGIN_TEXT_MAX];
  CHECK_NCCL(plugin_candidates_get(kind, &c, &got, note, sizeof(note)));
  CHECK_EQ_INT(got, n);
  for (int i = 0; i < n; i++) {
    CHECK_MSG(c[i].outcome == want[i].outcome, "candidate %d (%s): %s, want %s (%s)", i + 1, c[i].request,
              plugin_outcome_text(c[i].outcome), plugin_outcome_text(want[i].outcome), c[i].reason);
    if (want[i].reason) CHECK_STR_CONTAINS(c[i].reason, want[i].reason);
  }
  return c;
}

#define PLUGIN(file) TEST_PLUGIN_DIR "/" file

/* Every way a candidate is skipped, each followed by the next one. */
static int skips_child(int r, int n, void* a) {
  (void)r, (void)n, (void)a;
  env_clean();
  setenv("NCCL_NET_PLUGIN", "none", 1);
  write_file("notelf.so", "this is not a shared object\n");
  char entries[4096];
  snprintf(entries, sizeof(entries),
           "  - {name: nosym, kind: net, abi: 11, library: %s, priority: 90}\n"
           "  - {name: v99, kind: net, abi: 12, library: %s, priority: 80}\n"
           "  - {name: v5, kind: net, abi: 6, library: %s, priority: 70}\n"
           "  - {name: gone, kind: net, abi: 11, library: libnothere.so, priority: 60}\n"
           "  - {name: notelf, kind: net, abi: 11, library: notelf.so, priority: 50}\n"
           "  - {name: wrong-name, kind: net, abi: 11, library: %s, priority: 40}\n"
           "  - {name: testnet9, kind: net, abi: 11, library: %s, priority: 30}\n"
           "  - {name: after, kind: net, abi: 8, library: %s, priority: 20}\n",
           PLUGIN("libtest-sym-none.so"), PLUGIN("libtest-sym-v99.so"), PLUGIN("libtest-sym-v5.so"),
           PLUGIN("libtest-net-info.so"), PLUGIN("libnccl-net-testv9.so"), PLUGIN("libnccl-net-testv8.so"));
  write_manifest("skips.yaml", entries);
  use_manifests("skips.yaml");
  plugin_net_t* net = NULL;
  CHECK_NCCL(plugin_net_acquire(NULL, &net));
  CHECK_EQ_INT(net->abi, 9);
  CHECK(strcmp(net->name, "testnet-v9") == 0);
  char missing[256];
  snprintf(missing, sizeof(missing), "tried %s/libnothere.so", tmpdir);
  const expect_t want[] = {
      {PLUGIN_SYMBOL_MISSING, "none of ncclNetPlugin_v12 .. ncclNetPlugin_v6"},
      {PLUGIN_ABI_TOO_NEW, "exports ncclNetPlugin_v99; this mkccl loads v6..v12"},
      {PLUGIN_ABI_TOO_OLD, "exports ncclNetPlugin_v5; this mkccl loads v6..v12"},
      {PLUGIN_FILE_MISSING, missing},
      {PLUGIN_DLOPEN_ERROR, "notelf.so"},
      {PLUGIN_MANIFEST_NAME_MISMATCH, "the plugin calls itself 'test-net-info', the manifest entry 'wrong-name'"},
      {PLUGIN_TAKEN, "2 devices, ncclNetPlugin_v9 (the manifest says abi 11, ncclNetPlugin_v11 is not exported)"},
      {PLUGIN_NOT_TRIED, "'testnet-v9' was taken before it"},
      {PLUGIN_NOT_TRIED, NULL}, /* the embedded default's net-socket, priority 0 */
  };
  plugin_candidate_t* c = expect_records(PLUGIN_KIND_NET, want, 9);
  CHECK(strcmp(c[6].manifestName, "testnet9") == 0);
  CHECK_STR_CONTAINS(c[6].origin, "skips.yaml:9:5");
  CHECK(strcmp(c[6].path, PLUGIN("libnccl-net-testv9.so")) == 0);
  CHECK_EQ_INT(c[6].abi, 9);
  for (int i = 0; i < 9; i++) CHECK(strncmp(c[i].origin, "manifest ", 9) == 0); /* none: nothing NCCL-named */
  char note[PLUGIN_TEXT_MAX];
  int nc = 0;
  free(c);
  CHECK_NCCL(plugin_candidates_get(PLUGIN_KIND_NET, &c, &nc, note, sizeof(note)));
  CHECK_STR_CONTAINS(note, "NCCL_NET_PLUGIN=none");
  free(c);
  CHECK_NCCL(plugin_net_release(net));
  return 0;
}

/* Options from the manifest drive an mkccl-style plugin: init fails, then
 * zero devices, then an undeclared option; the next candidate is taken. */
static int options_child(int r, int n, void* a) {
  (void)r, (void)n, (void)a;
  env_clean();
  setenv("NCCL_NET_PLUGIN", "none", 1);
  char entries[2048];
  snprintf(entries, sizeof(entries),
           "  - name: test-net-info\n    kind: net\n    abi: 11\n    library: %s\n    priority: 9\n"
           "    options: {TEST_NET_INIT_FAIL: 1, TEST_NET_NDEV: 0}\n"
           "  - {name: v10, kind: net, abi: 10, library: %s, priority: 5}\n",
           PLUGIN("libtest-net-info.so"), PLUGIN("libnccl-net-testv10.so"));
  write_manifest("fail.yaml", entries);
  use_manifests("fail.yaml");
  plugin_net_t* net = NULL;
  CHECK_NCCL(plugin_net_acquire(NULL, &net));
  CHECK_EQ_INT(net->abi, 10);
  const expect_t initFail[] = {{PLUGIN_INIT_FAILED, "init returned 2 (unhandled system error"},
                               {PLUGIN_TAKEN, NULL},
                               {PLUGIN_NOT_TRIED, NULL}};
  free(expect_records(PLUGIN_KIND_NET, initFail, 3));
  /* The option became a parameter value with its source. */
  const char* where = NULL;
  CHECK_EQ_INT(param_int("TEST_NET_INIT_FAIL"), 1);
  CHECK_EQ_INT(param_source("TEST_NET_INIT_FAIL", &where), PARAM_FROM_MANIFEST);
  char want[256];
  snprintf(want, sizeof(want), "%s/fail.yaml:8:15", tmpdir);
  CHECK_MSG(strcmp(where, want) == 0, "where %s", where);
  CHECK_NCCL(plugin_net_release(net));

  /* The environment beats the manifest: init passes, still zero devices. */
  setenv("TEST_NET_INIT_FAIL", "0", 1);
  CHECK_NCCL(plugin_net_acquire(NULL, &net));
  const expect_t zero[] = {{PLUGIN_NO_DEVICES, "devices() reports 0"}, {PLUGIN_TAKEN, NULL}, {PLUGIN_NOT_TRIED, NULL}};
  free(expect_records(PLUGIN_KIND_NET, zero, 3));
  CHECK_NCCL(plugin_net_release(net));

  /* With devices from the environment too, it is taken. */
  setenv("TEST_NET_NDEV", "3", 1);
  CHECK_NCCL(plugin_net_acquire(NULL, &net));
  CHECK(strcmp(net->name, "test-net-info") == 0);
  CHECK_EQ_INT(net->ndev, 3);
  CHECK_NCCL(plugin_net_release(net));
  return 0;
}

static int bad_option_child(int r, int n, void* a) {
  (void)r, (void)n, (void)a;
  env_clean();
  setenv("NCCL_NET_PLUGIN", "none", 1);
  char entries[2048];
  snprintf(entries, sizeof(entries),
           "  - name: test-net-info\n    kind: net\n    abi: 11\n    library: %s\n    priority: 9\n"
           "    options:\n      TEST_NET_NDEVS: 4\n"
           "  - {name: v7, kind: net, abi: 7, library: %s, priority: 5}\n",
           PLUGIN("libtest-net-info.so"), PLUGIN("libnccl-net-testv7.so"));
  write_manifest("opt.yaml", entries);
  use_manifests("opt.yaml");
  plugin_net_t* net = NULL;
  CHECK_NCCL(plugin_net_acquire(NULL, &net));
  CHECK_EQ_INT(net->abi, 7);
  char want[256];
  snprintf(want, sizeof(want), "opt.yaml:9:7: option 'TEST_NET_NDEVS' is not a parameter of the core or of this plugin");
  const expect_t w[] = {{PLUGIN_BAD_OPTION, want}, {PLUGIN_TAKEN, NULL}, {PLUGIN_NOT_TRIED, NULL}};
  free(expect_records(PLUGIN_KIND_NET, w, 3));
  CHECK_NCCL(plugin_net_release(net));
  return 0;
}

/* NCCL_NET_PLUGIN as paths and names, NCCL_NET picking by reported name. */
static int nccl_vars_child(int r, int n, void* a) {
  (void)r, (void)n, (void)a;
  env_clean();
  setenv("NCCL_NET_PLUGIN", PLUGIN("libnccl-net-testv12.so") "," PLUGIN("libnccl-net-testv10.so"), 1);
  setenv("NCCL_NET", "TESTNET-V10", 1); /* case-insensitive, as NCCL */
  plugin_net_t* net = NULL;
  CHECK_NCCL(plugin_net_acquire(NULL, &net));
  CHECK_EQ_INT(net->abi, 10);
  const expect_t byName[] = {{PLUGIN_NAME_MISMATCH, "reports 'testnet-v12', 'TESTNET-V10' was asked for"},
                             {PLUGIN_TAKEN, NULL},
                             {PLUGIN_NOT_TRIED, NULL}};
  plugin_candidate_t* c = expect_records(PLUGIN_KIND_NET, byName, 3);
  CHECK(strcmp(c[0].origin, "NCCL_NET_PLUGIN") == 0);
  free(c);
  /* Asking again for the same name shares the loaded plugin. */
  plugin_net_t* again = NULL;
  CHECK_NCCL(plugin_net_acquire("testnet-v10", &again));
  CHECK(again == net);
  CHECK_EQ_INT(net->refs, 2);
  CHECK_NCCL(plugin_net_release(again));
  CHECK_NCCL(plugin_net_release(net));
  CHECK(plugin_net_release(net) == ncclInvalidUsage);

  /* Bare names: as written, then libnccl-net-<name>.so on the library path. */
  unsetenv("NCCL_NET");
  setenv("NCCL_NET_PLUGIN", "nosuch, testv7", 1);
  CHECK_NCCL(plugin_net_acquire(NULL, &net));
  CHECK_EQ_INT(net->abi, 7);
  const expect_t byLib[] = {{PLUGIN_FILE_MISSING, "tried nosuch, libnccl-net-nosuch.so"},
                            {PLUGIN_TAKEN, NULL},
                            {PLUGIN_NOT_TRIED, NULL}};
  c = expect_records(PLUGIN_KIND_NET, byLib, 3);
  CHECK(strcmp(c[1].request, "testv7") == 0);
  CHECK(strcmp(c[1].path, PLUGIN("libnccl-net-testv7.so")) == 0);
  free(c);
  CHECK_NCCL(plugin_net_release(net));

  /* A soname is tried as written only. */
  setenv("NCCL_NET_PLUGIN", "libnccl-net-testv8.so", 1);
  CHECK_NCCL(plugin_net_acquire(NULL, &net));
  CHECK_EQ_INT(net->abi, 8);
  CHECK_NCCL(plugin_net_release(net));

  /* No name matches: ncclInvalidUsage, nothing loaded. */
  setenv("NCCL_NET_PLUGIN", "testv9", 1);
  CHECK(plugin_net_acquire("IB", &net) == ncclInvalidUsage);
  CHECK_STR_CONTAINS(err_last_get(), "no net plugin named 'IB' could be loaded");

  /* Unset: NCCL's default name, libnccl-net.so, comes first (when this
   * machine has none installed, as the check needs). */
  unsetenv("NCCL_NET_PLUGIN");
  void* installed = dlopen("libnccl-net.so", RTLD_NOW | RTLD_LOCAL);
  if (installed) {
    dlclose(installed);
    return 0;
  }
  CHECK(plugin_net_acquire(NULL, &net) == ncclSystemError);
  const expect_t dflt[] = {{PLUGIN_FILE_MISSING, "tried libnccl-net.so"}, {PLUGIN_FILE_MISSING, "libmkccl-net-socket.so"}};
  c = expect_records(PLUGIN_KIND_NET, dflt, 2);
  CHECK(strcmp(c[0].origin, "NCCL default name") == 0);
  free(c);
  return 0;
}

/* Higher priority first across manifests; a later entry replaces an earlier
 * one of the same name; the adapter of a version holds one plugin. */
static int order_child(int r, int n, void* a) {
  (void)r, (void)n, (void)a;
  env_clean();
  setenv("NCCL_NET_PLUGIN", "none", 1);
  char entries[1024];
  snprintf(entries, sizeof(entries),
           "  - {name: six, kind: net, abi: 6, library: %s, priority: 1}\n"
           "  - {name: nine, kind: net, abi: 9, library: %s, priority: 3}\n",
           PLUGIN("libnccl-net-testv6.so"), PLUGIN("libnccl-net-testv9.so"));
  write_manifest("a.yaml", entries);
  snprintf(entries, sizeof(entries), "  - {name: eight, kind: net, abi: 8, library: %s, priority: 2}\n"
           "  - {name: nine, kind: net, abi: 9, library: %s, priority: 0}\n",
           PLUGIN("libnccl-net-testv8.so"), PLUGIN("libnccl-net-testv9.so"));
  write_manifest("b.yaml", entries);
  use_manifests("a.yaml,b.yaml");
  plugin_net_t* net = NULL;
  CHECK_NCCL(plugin_net_acquire(NULL, &net));
  CHECK_EQ_INT(net->abi, 8); /* nine dropped to priority 0 by b.yaml */
  plugin_candidate_t* c = NULL;
  int nc = 0;
  CHECK_NCCL(plugin_candidates_get(PLUGIN_KIND_NET, &c, &nc, NULL, 0));
  CHECK_EQ_INT(nc, 4);
  const char* order[] = {"eight", "six", "net-socket", "nine"};
  for (int i = 0; i < 4; i++) CHECK_MSG(strcmp(c[i].manifestName, order[i]) == 0, "%d: %s", i, c[i].manifestName);
  free(c);

  /* Asking for testnet-v6 by name loads it beside the default. */
  plugin_net_t* six = NULL;
  CHECK_NCCL(plugin_net_acquire("testnet-v6", &six));
  CHECK(six != net);
  CHECK_EQ_INT(six->abi, 6);
  CHECK_EQ_INT(six->maxRequests, NCCL_NET_MAX_REQUESTS_V6);
  CHECK_NCCL(plugin_net_release(net));
  CHECK_NCCL(plugin_net_release(six));
  return 0;
}

static int busy_child(int r, int n, void* a) {
  (void)r, (void)n, (void)a;
  env_clean();
  setenv("NCCL_NET_PLUGIN", PLUGIN("libnccl-net-testv9.so") "," PLUGIN("libnccl-net-testv12.so"), 1);
  plugin_net_t *nine = NULL, *dflt = NULL;
  CHECK_NCCL(plugin_net_acquire("testnet-v9", &nine));
  CHECK(nine->isDefault == 0);
  /* No default yet: v9 again would need its adapter, which holds testnet-v9. */
  CHECK_NCCL(plugin_net_acquire(NULL, &dflt));
  CHECK_EQ_INT(dflt->abi, 12);
  const expect_t w[] = {{PLUGIN_ADAPTER_BUSY, "the ABI v9 adapter holds another net plugin"},
                        {PLUGIN_TAKEN, NULL},
                        {PLUGIN_NOT_TRIED, NULL}};
  free(expect_records(PLUGIN_KIND_NET, w, 3));
  CHECK_NCCL(plugin_net_release(dflt));
  CHECK_NCCL(plugin_net_release(nine));
  /* Released: the v9 adapter is free again. */
  CHECK_NCCL(plugin_net_acquire(NULL, &dflt));
  CHECK_EQ_INT(dflt->abi, 9);
  CHECK_NCCL(plugin_net_release(dflt));
  return 0;
}

/* Kinds without adapters yet: the raw symbol and its version. */
static int generic_child(int r, int n, void* a) {
  (void)r, (void)n, (void)a;
  env_clean();
  setenv("NCCL_TUNER_PLUGIN", PLUGIN("libtest-sym-tuner4.so"), 1);
  char entries[1024];
  snprintf(entries, sizeof(entries),
           "  - {name: transport-a, kind: transport, abi: 1, library: %s}\n"
           "  - {name: transport-c, kind: transport, abi: 1, library: %s}\n"
           "  - {name: transport-b, kind: transport, abi: 1, library: %s, priority: 1}\n"
           "  - {name: gone, kind: transport, abi: 1, library: nothere.so}\n",
           PLUGIN("libtest-sym-transport-a.so"), PLUGIN("libtest-sym-transport-a.so"),
           PLUGIN("libtest-sym-transport-b.so"));
  write_manifest("gen.yaml", entries);
  use_manifests("gen.yaml");
  plugin_lib_t* tuner = NULL;
  CHECK_NCCL(plugin_kind_load_first(PLUGIN_KIND_TUNER, &tuner));
  CHECK(tuner != NULL);
  CHECK_EQ_INT(tuner->abi, 4);
  CHECK(strcmp(tuner->name, "tuner-four") == 0);
  CHECK(strcmp(tuner->abiDesc->symbol, "ncclTunerPlugin_v4") == 0);
  CHECK_EQ_INT(((const int*)tuner->symbol)[2], 0x5eed); /* after the name pointer */
  CHECK(tuner->info == NULL);
  plugin_lib_close(tuner);

  plugin_lib_t** libs = NULL;
  int nLibs = 0;
  CHECK_NCCL(plugin_kind_load_all(PLUGIN_KIND_TRANSPORT, &libs, &nLibs));
  CHECK_EQ_INT(nLibs, 2);
  CHECK(strcmp(libs[0]->name, "transport-b") == 0); /* priority 1 first */
  CHECK(strcmp(libs[1]->name, "transport-a") == 0);
  CHECK(libs[0]->info != NULL && strcmp(libs[0]->info->name, "transport-b") == 0);
  /* The default manifest's transports come first (priority 300, 200, 100);
   * their files are not beside this test binary. */
  const expect_t w[] = {{PLUGIN_FILE_MISSING, NULL},
                        {PLUGIN_FILE_MISSING, NULL},
                        {PLUGIN_FILE_MISSING, NULL},
                        {PLUGIN_TAKEN, NULL},
                        {PLUGIN_TAKEN, NULL},
                        {PLUGIN_MANIFEST_NAME_MISMATCH, "calls itself 'transport-a', the manifest entry 'transport-c'"},
                        {PLUGIN_FILE_MISSING, NULL}};
  free(expect_records(PLUGIN_KIND_TRANSPORT, w, 7));
  plugin_libs_close(libs, nLibs);

  /* Nothing of a kind: no error, no library. */
  setenv("NCCL_PROFILER_PLUGIN", "none", 1);
  plugin_lib_t* prof = (plugin_lib_t*)1;
  CHECK_NCCL(plugin_kind_load_first(PLUGIN_KIND_PROFILER, &prof));
  CHECK(prof == NULL);
  return 0;
}

/* Many threads acquiring and releasing share one loaded plugin. */
static void* threads_worker(void* arg) {
  plugin_net_t** seen = arg;
  for (int i = 0; i < 200; i++) {
    plugin_net_t* net = NULL;
    if (plugin_net_acquire(NULL, &net) != ncclSuccess) return (void*)1;
    if (net->abi != 11) return (void*)2;
    *seen = net;
    if (plugin_net_release(net) != ncclSuccess) return (void*)3;
  }
  return NULL;
}

static int threads_child(int r, int n, void* a) {
  (void)r, (void)n, (void)a;
  env_clean();
  setenv("NCCL_NET_PLUGIN", "testv11", 1);
  plugin_net_t* held = NULL;
  CHECK_NCCL(plugin_net_acquire(NULL, &held)); /* keeps it loaded: every thread sees this one */
  pthread_t threads[8];
  plugin_net_t* seen[8] = {NULL};
  for (int i = 0; i < 8; i++) CHECK(pthread_create(&threads[i], NULL, threads_worker, &seen[i]) == 0);
  for (int i = 0; i < 8; i++) {
    void* rc = (void*)9;
    CHECK(pthread_join(threads[i], &rc) == 0);
    CHECK_MSG(rc == NULL, "thread %d: %p", i, rc);
    CHECK(seen[i] == held);
  }
  CHECK_EQ_INT(held->refs, 1);
  CHECK_NCCL(plugin_net_release(held));
  return 0;
}

/* A bad manifest fails every selection with its location, never half-loads. */
static int bad_manifest_child(int r, int n, void* a) {
  (void)r, (void)n, (void)a;
  env_clean();
  setenv("NCCL_NET_PLUGIN", PLUGIN("libnccl-net-testv9.so"), 1);
  write_file("broken.yaml", "mkccl-manifest: 1\nplugins:\n  - {name: x, kind: net, abi: 9, library: x.so, prio: 1}\n");
  use_manifests("broken.yaml");
  plugin_net_t* net = NULL;
  char want[256];
  snprintf(want, sizeof(want), "%s/broken.yaml:3:49: unknown key 'prio' in plugin entry", tmpdir);
  for (int i = 0; i < 2; i++) {
    CHECK(plugin_net_acquire(NULL, &net) == ncclInvalidUsage);
    CHECK_STR_CONTAINS(err_last_get(), want);
  }
  CHECK(dlopen(PLUGIN("libnccl-net-testv9.so"), RTLD_NOW | RTLD_NOLOAD) == NULL);
  plugin_lib_t* lib = NULL;
  CHECK(plugin_kind_load_first(PLUGIN_KIND_TUNER, &lib) == ncclInvalidUsage);
  return 0;
}

int main(void) {
  snprintf(tmpdir, sizeof(tmpdir), "/tmp/mkccl-loader-XXXXXX");
  CHECK(mkdtemp(tmpdir) != NULL);
  struct {
    const char* name;
    rank_fn fn;
  } scenarios[] = {{"skips", skips_child},     {"options", options_child},   {"bad option", bad_option_child},
                   {"NCCL variables", nccl_vars_child}, {"order", order_child}, {"adapter busy", busy_child},
                   {"generic kinds", generic_child},    {"bad manifest", bad_manifest_child},
                   {"threads", threads_child}};
  for (size_t i = 0; i < sizeof(scenarios) / sizeof(scenarios[0]); i++)
    CHECK_MSG(ranks_run(1, scenarios[i].fn, NULL, 60) == 0, "scenario %s", scenarios[i].name);
  char cmd[128];
  snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
  CHECK(system(cmd) == 0);
  return 0;
}
