/* mkccl-info as a user runs it: the default manifest found next to the
 * library in the build tree with no environment variable, the embedded
 * default when the library is copied elsewhere, the plugin candidates and
 * the parameters with their sources, and a broken manifest failing with its
 * file:line:col. ctest passes the paths (MKCCL_INFO_BIN, MKCCL_LIB,
 * MKCCL_LIB_DIR). */
#define _POSIX_C_SOURCE 200809L /* mkdtemp */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "check.h"

static char tmpdir[64];
static char out[1 << 16], err[1 << 14];

static void slurp(const char* path, char* buf, size_t size) {
  FILE* f = fopen(path, "r");
  CHECK(f != NULL);
  size_t n = fread(buf, 1, size - 1, f);
  buf[n] = '\0';
  fclose(f);
}

/* Runs mkccl-info with the loader's variables cleared (so the caller's
 * environment cannot change the answer) and `env` set. */
static int run(const char* env, const char* args) {
  char cmd[4096];
  snprintf(cmd, sizeof(cmd),
           "env -u MKCCL_MANIFEST -u NCCL_NET_PLUGIN -u NCCL_NET -u NCCL_TUNER_PLUGIN -u NCCL_PROFILER_PLUGIN "
           "-u NCCL_DEBUG -u NCCL_COLLNET_ENABLE -u LD_LIBRARY_PATH %s %s %s >%s/out 2>%s/err",
           env, getenv("MKCCL_INFO_BIN"), args, tmpdir, tmpdir);
  int status = system(cmd);
  char path[128];
  snprintf(path, sizeof(path), "%s/out", tmpdir);
  slurp(path, out, sizeof(out));
  snprintf(path, sizeof(path), "%s/err", tmpdir);
  slurp(path, err, sizeof(err));
  CHECK(WIFEXITED(status));
  return WEXITSTATUS(status);
}

/* Runs that print the topology probe the machine through hwloc, whose PCI
 * plugin leaves libpciaccess allocations behind once it is unloaded
 * (LeakSanitizer cannot name them): leak checks off for those runs only
 * (no effect without AddressSanitizer). */
#define TOPO_ENV "ASAN_OPTIONS=detect_leaks=0:abort_on_error=1"

static void write_file(const char* name, const char* text) {
  char path[128];
  snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
  FILE* f = fopen(path, "w");
  CHECK(f != NULL);
  fputs(text, f);
  fclose(f);
}

int main(void) {
  CHECK_MSG(getenv("MKCCL_INFO_BIN") && getenv("MKCCL_LIB") && getenv("MKCCL_LIB_DIR"), "run through ctest");
  snprintf(tmpdir, sizeof(tmpdir), "/tmp/mkccl-info-XXXXXX");
  CHECK(mkdtemp(tmpdir) != NULL);
  char want[1024];

  /* Build tree, no variables: lib/mkccl/manifest.yaml beside libmkccl.so. */
  CHECK_EQ_INT(run(TOPO_ENV, ""), 0);
  snprintf(want, sizeof(want), "  default         %s/mkccl/manifest.yaml\n", getenv("MKCCL_LIB_DIR"));
  CHECK_STR_CONTAINS(out, want);
  CHECK_STR_CONTAINS(out, "mkccl 0.1.0, NCCL API 2.28.9");
  CHECK_STR_CONTAINS(out, "    net-socket     net        abi 11");
  CHECK_STR_CONTAINS(out, "\n  net: ");
  CHECK_STR_CONTAINS(out, "1. libnccl-net.so [NCCL default name]: ");
  snprintf(want, sizeof(want), "libmkccl-net-socket.so [manifest %s/mkccl/manifest.yaml:", getenv("MKCCL_LIB_DIR"));
  CHECK_STR_CONTAINS(out, want);
  CHECK_STR_CONTAINS(out, "\n  tuner: ");
  /* collnet-soft is in the default manifest, loaded only when asked. */
  CHECK_STR_CONTAINS(out, "    collnet-soft   collnet    abi 12");
  CHECK_STR_CONTAINS(out, "refused 'collnet-soft' v12: collnet is off (NCCL_COLLNET_ENABLE=0)");
  CHECK_STR_CONTAINS(out, "\nTopology (NICs: Socket)\nTopology from ");
  CHECK_STR_CONTAINS(out, "\nPaths (type/GB/s):\n");
  CHECK_STR_CONTAINS(out, "\nParameters");
  CHECK_STR_CONTAINS(out, "  NCCL_NET_PLUGIN              =                      [default]");
  CHECK_STR_CONTAINS(out, "  MKCCL_MANIFEST               =");

  /* A plugin from a user manifest, its option shown with its source. */
  char manifest[1024];
  snprintf(manifest, sizeof(manifest),
           "mkccl-manifest: 1\nplugins:\n  - name: test-net-info\n    kind: net\n    abi: 11\n"
           "    library: %s/libtest-net-info.so\n    priority: 5\n    options:\n      TEST_NET_NDEV: 3\n",
           TEST_PLUGIN_DIR);
  write_file("user.yaml", manifest);
  char env[256];
  snprintf(env, sizeof(env), "NCCL_NET_PLUGIN=none MKCCL_MANIFEST=%s/user.yaml", tmpdir);
  CHECK_EQ_INT(run(env, "--plugins --params"), 0);
  CHECK(strstr(out, "Manifests") == NULL); /* sections as asked */
  snprintf(want, sizeof(want), "  net: 'test-net-info' (ABI v11) from %s/libtest-net-info.so", TEST_PLUGIN_DIR);
  CHECK_STR_CONTAINS(out, want);
  CHECK_STR_CONTAINS(out, "note: NCCL_NET_PLUGIN=none");
  CHECK_STR_CONTAINS(out, "taken 'test-net-info' v11: 3 devices, ncclNetPlugin_v11");
  snprintf(want, sizeof(want), "  TEST_NET_NDEV                = 3                    [%s/user.yaml:9:7] (test-net-info)",
           tmpdir);
  CHECK_STR_CONTAINS(out, want);
  CHECK_STR_CONTAINS(out, "  NCCL_NET_PLUGIN              = none                 [environment]");
  /* The topology's NICs are the devices of the net plugin taken, in order. */
  char envTopo[512];
  snprintf(envTopo, sizeof(envTopo), "%s %s", env, TOPO_ENV);
  CHECK_EQ_INT(run(envTopo, "--topology"), 0);
  CHECK(strstr(out, "\nParameters") == NULL);
  CHECK_STR_CONTAINS(out, "\nTopology (NICs: test-net-info)\n");
  CHECK_STR_CONTAINS(out, "3 NICs");
  CHECK_STR_CONTAINS(out, "NIC 0 tn0 - 12345 Mb/s gdr 0");
  CHECK_STR_CONTAINS(out, "NIC 2 tn0 - 12347 Mb/s gdr 0");

  /* Collnet: off by default, its candidates listed and refused; on, loaded
   * through its adapter, and said to be used by no communicator. */
  snprintf(env, sizeof(env), "NCCL_NET_PLUGIN=%s/libnccl-net-testcollnetv8.so", TEST_PLUGIN_DIR);
  CHECK_EQ_INT(run(env, "--plugins"), 0);
  CHECK_STR_CONTAINS(out, "\n  collnet: none\n");
  CHECK_STR_CONTAINS(out, "    note: collnet is off (NCCL_COLLNET_ENABLE=0): candidates are listed, none is loaded\n");
  CHECK_STR_CONTAINS(out, "refused 'testcollnet-v8' v8: collnet is off (NCCL_COLLNET_ENABLE=0)");
  char envOn[512];
  snprintf(envOn, sizeof(envOn), "%s NCCL_COLLNET_ENABLE=1", env);
  CHECK_EQ_INT(run(envOn, "--plugins"), 0);
  snprintf(want, sizeof(want), "  collnet: 'testcollnet-v8' (ABI v8) from %s/libnccl-net-testcollnetv8.so\n",
           TEST_PLUGIN_DIR);
  CHECK_STR_CONTAINS(out, want);
  CHECK_STR_CONTAINS(out, "taken 'testcollnet-v8' v8: 2 devices, ncclCollNetPlugin_v8");
  CHECK_STR_CONTAINS(out, "    note: loaded: host communicators may run AllReduce through it (CollNetDirect)\n");

  /* Levels: --params lists user level only, --params=expert adds expert,
   * --params=all every level; a set parameter shows whatever its level. */
  const char* hidden = "-u MKCCL_GPU_PROBE -u MKCCL_HOST_NCHANNELS -u NCCL_SOCKET_NTHREADS";
  CHECK_EQ_INT(run(hidden, "--plugins --params"), 0);
  CHECK_STR_CONTAINS(out, "\n  NCCL_DEBUG  ");                      /* core, user */
  CHECK_STR_CONTAINS(out, "\n  NCCL_NET_SHARED_COMMS ");            /* plugin, NCCL_* name: user */
  CHECK(strstr(out, "\n  MKCCL_HOST_NCHANNELS ") == NULL);          /* core, expert */
  CHECK(strstr(out, "\n  MKCCL_GPU_PROBE ") == NULL);               /* core, developer */
  CHECK(strstr(out, "\n  MKCCL_SOCKET_TRACE ") == NULL);            /* plugin, own name: expert */
  CHECK_EQ_INT(run(hidden, "--plugins --params=expert"), 0);
  CHECK_STR_CONTAINS(out, "\n  NCCL_DEBUG  ");
  CHECK_STR_CONTAINS(out, "\n  MKCCL_HOST_NCHANNELS ");
  CHECK_STR_CONTAINS(out, "[default] <expert>\n");
  CHECK(strstr(out, "\n  MKCCL_GPU_PROBE ") == NULL);
  CHECK_EQ_INT(run(hidden, "--plugins --params=all"), 0);
  CHECK_STR_CONTAINS(out, "\n  NCCL_DEBUG  ");
  CHECK_STR_CONTAINS(out, "\n  MKCCL_HOST_NCHANNELS ");
  CHECK_STR_CONTAINS(out, "\n  MKCCL_SOCKET_TRACE ");
  CHECK_STR_CONTAINS(out, "  MKCCL_GPU_PROBE              = 0                    [default] <developer>\n");
  CHECK_EQ_INT(run("MKCCL_GPU_PROBE=0", "--params"), 0);
  CHECK_STR_CONTAINS(out, "  MKCCL_GPU_PROBE              = 0                    [environment] <developer>\n");
  CHECK_EQ_INT(run("", "--params=most"), 2);
  CHECK_STR_CONTAINS(err, "unknown option '--params=most'");

  /* A broken manifest: non-zero, the location on stderr, no report. */
  write_file("bad.yaml", "mkccl-manifest: 1\nplugins:\n  - name: x\n    kind: net\n    abi: 11\n    libary: y.so\n");
  snprintf(env, sizeof(env), "MKCCL_MANIFEST=%s/bad.yaml", tmpdir);
  CHECK_EQ_INT(run(env, ""), 1);
  snprintf(want, sizeof(want),
           "mkccl-info: %s/bad.yaml:6:5: unknown key 'libary' in plugin entry (expected name, kind, abi, "
           "library, priority, options)\n",
           tmpdir);
  CHECK_MSG(strcmp(err, want) == 0, "stderr: %s", err);
  CHECK(strstr(out, "Plugins") == NULL);

  /* The library copied where no mkccl/manifest.yaml is: the embedded default,
   * its libraries looked for beside the copy. */
  char cmd[1024];
  snprintf(cmd, sizeof(cmd), "cp %s %s/libmkccl.so.0", getenv("MKCCL_LIB"), tmpdir);
  CHECK(system(cmd) == 0);
  snprintf(env, sizeof(env), "LD_LIBRARY_PATH=%s", tmpdir);
  CHECK_EQ_INT(run(env, "--manifests --plugins"), 0);
  snprintf(want, sizeof(want), "  default         <embedded default> (no %s/mkccl/manifest.yaml; libraries under %s/mkccl)",
           tmpdir, tmpdir);
  CHECK_STR_CONTAINS(out, want);
  snprintf(want, sizeof(want), "file missing: tried %s/mkccl/libmkccl-net-socket.so", tmpdir);
  CHECK_STR_CONTAINS(out, want);

  CHECK_EQ_INT(run("", "--help"), 0);
  CHECK_STR_CONTAINS(out, "Usage: mkccl-info");
  CHECK_EQ_INT(run("", "--bogus"), 2);
  CHECK_STR_CONTAINS(err, "unknown option '--bogus'");

  snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
  CHECK(system(cmd) == 0);
  return 0;
}
