/* The UNPACK path end to end on host buffers: ranks as processes over
 * net-socket in unpack mode (MKCCL_SOCKET_UNPACK=1) with shared memory off
 * (NCCL_SHM_DISABLE=1), so every byte between ranks crosses the net
 * transport, lands as permuted pages in a bounce buffer and reaches the
 * collective only through the unpack-device plugin's unpack.
 *
 *   test_netdev_coll N unpack   the collective matrix and large AllReduces
 *                               give exact results, and this process really
 *                               unpacked receives (more than a queue's
 *                               depth: the queue wrapped around)
 *   test_netdev_coll N refused  unpack-device replaced (manifest) by a build
 *                               reporting UNPACK 0x6: refused at load with
 *                               its reason, a NETDEV line says HOST is used,
 *                               nothing is unpacked, results still exact */
#include <glob.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "coll_cases.h"
#include "nccl.h"
#include "net-device/mkccl_unpack_v7.h"
#include "netdev/netdev.h"
#include "plugin/loader.h"
#include "ranks_id.h"

static int refused;
static char tmpdir[256];

static const plugin_candidate_t* find_candidate(const plugin_candidate_t* c, int n, const char* name) {
  for (int i = 0; i < n; i++)
    if (strcmp(c[i].manifestName, name) == 0) return &c[i];
  return NULL;
}

/* Large enough for many 4 KiB pages per receive and many receives. */
static void large_allreduce(ncclComm_t comm, int rank, int n) {
  size_t count = (size_t)3 << 20; /* 12 MB of floats */
  float* buf = malloc(count * sizeof(float));
  CHECK(buf);
  for (size_t i = 0; i < count; i++) buf[i] = (float)((i % 1000) + rank);
  CHECK_NCCL(ncclAllReduce(buf, buf, count, ncclFloat, ncclSum, comm, NULL));
  for (size_t i = 0; i < count; i++) {
    float want = (float)((i % 1000) * n) + (float)(n * (n - 1) / 2);
    CHECK_MSG(buf[i] == want, "rank %d element %zu: %f, want %f", rank, i, buf[i], want);
  }
  free(buf);
}

/* The log file is opened by whichever process logs first (rank 0, at
 * ncclGetUniqueId) and shared by the ranks: look in every one there is. */
static int log_has(const char* needle) {
  char pattern[400];
  snprintf(pattern, sizeof(pattern), "%s/log.*", tmpdir);
  glob_t g;
  int found = 0;
  if (glob(pattern, 0, NULL, &g) != 0) return 0;
  for (size_t k = 0; k < g.gl_pathc && !found; k++) {
    FILE* f = fopen(g.gl_pathv[k], "r");
    if (!f) continue;
    char line[2048];
    while (!found && fgets(line, sizeof(line), f)) found = strstr(line, needle) != NULL;
    fclose(f);
  }
  globfree(&g);
  return found;
}

static int rank_main(int rank, int n, void* arg) {
  (void)arg;
  ncclComm_t comm = ranks_comm_init(rank, n);
  long wrong = coll_matrix_run(comm, rank, n, 1, &coll_mem_host, NULL);
  CHECK_MSG(wrong == 0, "rank %d: %ld wrong elements", rank, wrong);
  large_allreduce(comm, rank, n);

  uint64_t receives = 0, bytes = 0;
  netdev_stats_get(&receives, &bytes);
  plugin_candidate_t* c = NULL;
  int nc = 0;
  CHECK_NCCL(plugin_candidates_get(PLUGIN_KIND_NET_DEVICE, &c, &nc, NULL, 0));
  const plugin_candidate_t* ud = find_candidate(c, nc, "unpack-device");
  CHECK(ud != NULL);
  if (!refused) {
    CHECK_EQ_INT(ud->outcome, PLUGIN_TAKEN);
    CHECK_MSG(receives > MKCCL_UNPACK_QUEUE_DEPTH, "rank %d: %llu receives unpacked", rank,
              (unsigned long long)receives);
    CHECK_MSG(bytes >= ((size_t)3 << 20) * sizeof(float) / (size_t)n, "rank %d: %llu bytes unpacked", rank,
              (unsigned long long)bytes);
    CHECK(log_has("net receives use UNPACK 0x7 through 'unpack-device'"));
  } else {
    CHECK_EQ_INT(ud->outcome, PLUGIN_REFUSED);
    CHECK_STR_CONTAINS(ud->reason, "reports UNPACK version 0x6, this build takes exactly 0x7");
    CHECK_EQ_INT(receives, 0);
    CHECK_EQ_INT(bytes, 0);
    CHECK(log_has("NETDEV/Plugin"));
    CHECK(log_has("refused 'unpack-device' v1: reports UNPACK version 0x6"));
    CHECK(log_has("UNPACK refused: no net-device plugin of type UNPACK was taken"));
    CHECK(log_has("the HOST path is used"));
  }
  free(c);
  CHECK_NCCL(ncclCommDestroy(comm));
  return 0;
}

int main(int argc, char** argv) {
  int n = argc > 1 ? atoi(argv[1]) : 2;
  refused = argc > 2 && strcmp(argv[2], "refused") == 0;
  snprintf(tmpdir, sizeof(tmpdir), "/tmp/mkccl-netdev-XXXXXX");
  CHECK(mkdtemp(tmpdir));
  char logs[400], manifests[1024];
  snprintf(logs, sizeof(logs), "%s/log.%%p", tmpdir);
  setenv("NCCL_DEBUG", "INFO", 1);
  setenv("NCCL_DEBUG_FILE", logs, 1);
  if (refused) {
    /* Same name as the default entry: this one replaces it. */
    char path[400];
    snprintf(path, sizeof(path), "%s/v6.yaml", tmpdir);
    FILE* f = fopen(path, "w");
    CHECK(f);
    fprintf(f, "mkccl-manifest: 1\nplugins:\n  - name: unpack-device\n    kind: net-device\n    abi: 1\n"
               "    library: %s\n    priority: 0\n", UNPACK_V6_LIB);
    fclose(f);
    snprintf(manifests, sizeof(manifests), "%s:%s", getenv("MKCCL_MANIFEST"), path);
    setenv("MKCCL_MANIFEST", manifests, 1);
  }
  int rc = ranks_run(n, rank_main, NULL, 300);
  char cmd[600];
  snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", tmpdir);
  CHECK_EQ_INT(rc, 0);
  printf("test_netdev_coll %d %s: OK\n", n, refused ? "refused" : "unpack");
  return 0;
}
