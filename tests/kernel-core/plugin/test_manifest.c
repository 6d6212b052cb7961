/* Manifest parsing: good files in every shape, each kind of bad file with its
 * exact file:line:col message, and the process's manifest set (default,
 * MKCCL_MANIFEST files, replacement, priority order, options). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/err.h"
#include "base/param.h"
#include "check.h"
#include "plugin/manifest.h"
#include "plugin/manifest_set.h"
#include "ranks.h"

static manifest_t* parse_ok(const char* text) {
  manifest_t* m = NULL;
  ncclResult_t res = manifest_text_parse(text, strlen(text), "m.yaml", "/base", &m);
  CHECK_MSG(res == ncclSuccess, "parse failed: %s", err_last_get());
  return m;
}

static void parse_bad(const char* text, const char* expected) {
  manifest_t* m = NULL;
  ncclResult_t res = manifest_text_parse(text, strlen(text), "m.yaml", "/base", &m);
  CHECK_MSG(res == ncclInvalidUsage, "expected ncclInvalidUsage for:\n%s", text);
  CHECK(m == NULL);
  CHECK_MSG(strcmp(err_last_get(), expected) == 0, "\n got: %s\nwant: %s", err_last_get(), expected);
}

static void test_good(void) {
  manifest_t* m = parse_ok(
      "# comment\n"
      "mkccl-manifest: 1\n"
      "plugins:\n"
      "  - name: net-socket\n"
      "    kind: net\n"
      "    abi: 11\n"
      "    library: libmkccl-net-socket.so\n"
      "    priority: 7\n"
      "    options:\n"
      "      NCCL_SOCKET_NTHREADS: 4\n"
      "      NCCL_SOCKET_IFNAME: \"eth0,eth1\"\n"
      "  - {name: tune.r_1, kind: tuner, abi: 4, library: /opt/t/libtuner.so}\n"
      "  - name: dev\n"
      "    kind: net-device\n"
      "    abi: 1\n"
      "    library: sub/libdev.so\n"
      "    priority: -3\n");
  CHECK_EQ_INT(m->nEntries, 3);
  const manifest_entry_t* e = &m->entries[0];
  CHECK(strcmp(e->name, "net-socket") == 0);
  CHECK_EQ_INT(e->kind, PLUGIN_KIND_NET);
  CHECK_EQ_INT(e->abi, 11);
  CHECK(strcmp(e->library, "libmkccl-net-socket.so") == 0);
  CHECK(strcmp(e->path, "/base/libmkccl-net-socket.so") == 0);
  CHECK_EQ_INT(e->priority, 7);
  CHECK(strcmp(e->where, "m.yaml:4:5") == 0);
  CHECK_EQ_INT(e->nOptions, 2);
  CHECK(strcmp(e->options[0].name, "NCCL_SOCKET_NTHREADS") == 0 && strcmp(e->options[0].value, "4") == 0);
  CHECK(strcmp(e->options[0].where, "m.yaml:10:7") == 0);
  CHECK(strcmp(e->options[1].value, "eth0,eth1") == 0);
  e = &m->entries[1];
  CHECK(strcmp(e->name, "tune.r_1") == 0);
  CHECK_EQ_INT(e->kind, PLUGIN_KIND_TUNER);
  CHECK(strcmp(e->path, "/opt/t/libtuner.so") == 0); /* absolute stays */
  CHECK_EQ_INT(e->priority, 0);                      /* default */
  CHECK_EQ_INT(e->nOptions, 0);
  e = &m->entries[2];
  CHECK_EQ_INT(e->kind, PLUGIN_KIND_NET_DEVICE);
  CHECK(strcmp(e->path, "/base/sub/libdev.so") == 0);
  CHECK_EQ_INT(e->priority, -3);
  manifest_free(m);

  m = parse_ok("mkccl-manifest: 1\nplugins: []\n");
  CHECK_EQ_INT(m->nEntries, 0);
  manifest_free(m);
}

static const char* const head = "mkccl-manifest: 1\nplugins:\n";

/* `head` + one entry whose lines follow. */
static void entry_bad(const char* entry, const char* expected) {
  char text[2048];
  snprintf(text, sizeof(text), "%s%s", head, entry);
  parse_bad(text, expected);
}

static void test_bad(void) {
  const char* entryKeys = "(expected name, kind, abi, library, priority, options)";
  char want[512];
  snprintf(want, sizeof(want), "m.yaml:7:5: unknown key 'libary' in plugin entry %s", entryKeys);
  entry_bad("  - name: a\n    kind: net\n    abi: 11\n    library: a.so\n    libary: x.so\n", want);
  entry_bad("  - name: a\n    kind: net\n    abi: eleven\n    library: a.so\n",
            "m.yaml:5:10: 'abi' must be an integer, got 'eleven'");
  entry_bad("  - name: a\n    kind: net\n    abi: [11]\n    library: a.so\n",
            "m.yaml:5:10: 'abi' must be an integer, got a list");
  entry_bad("  - name: a\n    kind: net\n    abi: 11\n    library: a.so\n    priority: \"5\"\n",
            "m.yaml:7:15: 'priority' must be an integer, got the quoted string '5'");
  entry_bad("  - name: {x: 1}\n    kind: net\n    abi: 11\n    library: a.so\n",
            "m.yaml:3:11: 'name' must be a string, got a mapping");
  snprintf(want, sizeof(want), "m.yaml:3:5: plugin entry is missing required key 'library' %s", entryKeys);
  entry_bad("  - name: a\n    kind: net\n    abi: 11\n", want);
  entry_bad("  - name: a\n    kind: nett\n    abi: 11\n    library: a.so\n",
            "m.yaml:4:11: unknown kind 'nett' (expected net, collnet, transport, net-device, tuner, profiler)");
  entry_bad("  - name: a\n    kind: net\n    abi: 13\n    library: a.so\n",
            "m.yaml:5:10: abi 13 is not one this mkccl loads for kind net (6..12)");
  entry_bad("  - name: a\n    kind: tuner\n    abi: 1\n    library: a.so\n",
            "m.yaml:5:10: abi 1 is not one this mkccl loads for kind tuner (2..6)");
  entry_bad("  - name: a\n    kind: net\n    abi: 11\n    library: a.so\n"
            "  - name: b\n    kind: net\n    abi: 11\n    library: b.so\n"
            "  - name: a\n    kind: tuner\n    abi: 4\n    library: c.so\n",
            "m.yaml:11:11: duplicate plugin name 'a' (first at m.yaml:3:5)");
  entry_bad("  - name: a\n    kind: net\n    kind: tuner\n    abi: 11\n    library: a.so\n",
            "m.yaml:5:5: duplicate key 'kind' in plugin entry (first at 4:5)");
  entry_bad("  - name: a b\n    kind: net\n    abi: 11\n    library: a.so\n",
            "m.yaml:3:11: 'name' may hold only letters, digits, '-', '_' and '.', got 'a b'");
  entry_bad("  - name: a\n    kind: net\n    abi: 11\n    library: \"\"\n", "m.yaml:6:14: 'library' must not be empty");
  entry_bad("  - name: a\n    kind: net\n    abi: 11\n    library: a.so\n    options: [X]\n",
            "m.yaml:7:14: 'options' must be a mapping of parameter name to value, got a list");
  entry_bad("  - name: a\n    kind: net\n    abi: 11\n    library: a.so\n    options:\n      X: [1, 2]\n",
            "m.yaml:8:10: option 'X' must be a single value, got a list");
  entry_bad("  - net-socket\n",
            "m.yaml:3:5: a plugin entry must be a mapping (name, kind, abi, library, priority, options), got "
            "'net-socket'");

  parse_bad("mkccl-manifest: 1\nplugins:\n  a: 1\n", "m.yaml:3:3: 'plugins' must be a list of plugin entries, got a mapping");
  parse_bad("mkccl-manifest: 1\nplugins: net-socket\n",
            "m.yaml:2:10: 'plugins' must be a list of plugin entries, got 'net-socket'");
  parse_bad("mkccl-manifest: 1\nplugin: []\n",
            "m.yaml:2:1: unknown key 'plugin' at the top level (expected mkccl-manifest, plugins)");
  parse_bad("plugins: []\n", "m.yaml:1:1: missing key 'mkccl-manifest' (the format version: 'mkccl-manifest: 1')");
  parse_bad("mkccl-manifest: 2\nplugins: []\n", "m.yaml:1:17: manifest format 2 is not supported (this mkccl reads 1)");
  parse_bad("mkccl-manifest: 1\n", "m.yaml:1:1: missing key 'plugins' (a list of plugin entries, may be [])");
  parse_bad("- a\n- b\n", "m.yaml:1:1: a manifest is a mapping (mkccl-manifest, plugins), got a list");
  parse_bad("", "m.yaml: empty manifest (expected a mapping with 'mkccl-manifest: 1' and 'plugins')");
  parse_bad("# only a comment\n", "m.yaml: empty manifest (expected a mapping with 'mkccl-manifest: 1' and 'plugins')");
  parse_bad("mkccl-manifest: 1\nplugins: []\n---\nmkccl-manifest: 1\n",
            "m.yaml:4:1: a manifest holds one YAML document; a second one starts here");

  /* Syntax errors: libyaml's words, our location and prefix. */
  manifest_t* m = NULL;
  const char* text = "mkccl-manifest: 1\nplugins: [a, b\n";
  CHECK(manifest_text_parse(text, strlen(text), "m.yaml", "/", &m) == ncclInvalidUsage);
  CHECK_STR_CONTAINS(err_last_get(), "m.yaml:3:1: YAML syntax error: ");
  text = "mkccl-manifest: 1\n  plugins: []\n";
  CHECK(manifest_text_parse(text, strlen(text), "m.yaml", "/", &m) == ncclInvalidUsage);
  CHECK_STR_CONTAINS(err_last_get(), "m.yaml:2:10: YAML syntax error: mapping values are not allowed");
  text = "mkccl-manifest: 1\nplugins:\n  - name: a\n   kind: net\n";
  CHECK(manifest_text_parse(text, strlen(text), "m.yaml", "/", &m) == ncclInvalidUsage);
  CHECK_STR_CONTAINS(err_last_get(), "m.yaml:4:4: YAML syntax error: ");
}

static char tmpdir[64];

static void write_file(const char* name, const char* text) {
  char path[128];
  snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
  FILE* f = fopen(path, "w");
  CHECK(f != NULL);
  fputs(text, f);
  fclose(f);
}

static void test_file(void) {
  char path[128];
  write_file("one.yaml", "mkccl-manifest: 1\nplugins:\n  - {name: a, kind: net, abi: 9, library: liba.so}\n");
  snprintf(path, sizeof(path), "%s/one.yaml", tmpdir);
  manifest_t* m = NULL;
  CHECK(manifest_file_parse(path, &m) == ncclSuccess);
  char want[512];
  snprintf(want, sizeof(want), "%s/liba.so", tmpdir); /* relative to the manifest's folder */
  CHECK(strcmp(m->entries[0].path, want) == 0);
  snprintf(want, sizeof(want), "%s:3:5", path);
  CHECK(strcmp(m->entries[0].where, want) == 0);
  manifest_free(m);
  snprintf(path, sizeof(path), "%s/none.yaml", tmpdir);
  CHECK(manifest_file_parse(path, &m) == ncclInvalidUsage);
  snprintf(want, sizeof(want), "%s: cannot read manifest: No such file or directory", path);
  CHECK(strcmp(err_last_get(), want) == 0);
}

/* The process's set: the embedded default (this test binary has no
 * mkccl/manifest.yaml beside it), then two MKCCL_MANIFEST files. */
static int set_child(int rank, int n, void* arg) {
  (void)rank, (void)n, (void)arg;
  char list[512];
  snprintf(list, sizeof(list), "%s/a.yaml,%s/b.yaml", tmpdir, tmpdir);
  setenv("MKCCL_MANIFEST", list, 1);
  unsetenv("NCCL_NET");
  const manifest_set_t* set = NULL;
  CHECK_MSG(manifest_set_get(&set) == ncclSuccess, "%s", err_last_get());
  CHECK_EQ_INT(set->nManifests, 3);
  CHECK_EQ_INT(set->defaultEmbedded, 1);
  CHECK(strcmp(set->manifests[0]->path, MANIFEST_EMBEDDED_NAME) == 0);
  CHECK(strcmp(set->manifests[0]->entries[0].name, "net-socket") == 0);
  /* b's "x" replaced a's; priorities high to low, ties in the order read. */
  const char* order[] = {"transport-p2p", "transport-shm", "transport-net", "hi", "net-socket",
                         "netdev-host",   "unpack-device", "collnet-soft",  "x",  "lo"};
  CHECK_EQ_INT(set->nEntries, 10);
  for (int i = 0; i < 10; i++) CHECK_MSG(strcmp(set->entries[i]->name, order[i]) == 0, "entry %d is %s", i, set->entries[i]->name);
  CHECK_EQ_INT(set->entries[8]->abi, 12);
  /* A core parameter set by an option, below the environment. */
  const char* where = NULL;
  CHECK(strcmp(param_str("NCCL_NET"), "FromManifest") == 0);
  CHECK_EQ_INT(param_source("NCCL_NET", &where), PARAM_FROM_MANIFEST);
  char want[512];
  snprintf(want, sizeof(want), "%s/b.yaml:5:16", tmpdir);
  CHECK_MSG(strcmp(where, want) == 0, "where %s", where);
  setenv("NCCL_NET", "FromEnv", 1);
  CHECK(strcmp(param_str("NCCL_NET"), "FromEnv") == 0);
  return 0;
}

static int set_bad_child(int rank, int n, void* arg) {
  (void)rank, (void)n, (void)arg;
  char list[512];
  snprintf(list, sizeof(list), "%s/a.yaml:%s/bad.yaml", tmpdir, tmpdir);
  setenv("MKCCL_MANIFEST", list, 1);
  const manifest_set_t* set = NULL;
  char want[512];
  snprintf(want, sizeof(want), "%s/bad.yaml:3:5: plugin entry is missing required key 'abi' (expected name, kind, abi, library, priority, options)", tmpdir);
  for (int i = 0; i < 2; i++) { /* stays bad, every time */
    CHECK(manifest_set_get(&set) == ncclInvalidUsage);
    CHECK_MSG(strcmp(err_last_get(), want) == 0, "got %s", err_last_get());
  }
  return 0;
}

static int set_missing_child(int rank, int n, void* arg) {
  (void)rank, (void)n, (void)arg;
  setenv("MKCCL_MANIFEST", "/nonexistent/m.yaml", 1);
  const manifest_set_t* set = NULL;
  CHECK(manifest_set_get(&set) == ncclInvalidUsage);
  CHECK(strcmp(err_last_get(), "/nonexistent/m.yaml: cannot read manifest: No such file or directory") == 0);
  return 0;
}

static void test_set(void) {
  write_file("a.yaml",
             "mkccl-manifest: 1\nplugins:\n"
             "  - {name: x, kind: net, abi: 9, library: x9.so, priority: 5}\n"
             "  - {name: lo, kind: net, abi: 9, library: lo.so, priority: -1}\n");
  write_file("b.yaml",
             "mkccl-manifest: 1\nplugins:\n"
             "  - {name: hi, kind: tuner, abi: 4, library: hi.so, priority: 9}\n"
             "  - {name: x, kind: net, abi: 12, library: x12.so, priority: 0,\n"
             "     options: {NCCL_NET: FromManifest}}\n");
  write_file("bad.yaml", "mkccl-manifest: 1\nplugins:\n  - {name: y, kind: net, library: y.so}\n");
  CHECK(ranks_run(1, set_child, NULL, 60) == 0);
  CHECK(ranks_run(1, set_bad_child, NULL, 60) == 0);
  CHECK(ranks_run(1, set_missing_child, NULL, 60) == 0);
}

int main(void) {
  test_good();
  test_bad();
  snprintf(tmpdir, sizeof(tmpdir), "/tmp/mkccl-manifest-XXXXXX");
  CHECK(mkdtemp(tmpdir) != NULL);
  test_file();
  test_set();
  char cmd[128];
  snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
  CHECK(system(cmd) == 0);
  return 0;
}
