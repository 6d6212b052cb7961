/* The trace profiler on real collectives: 2 ranks as processes, host
 * buffers over the net transport, every collective and a Send/Recv group.
 * Each rank's trace (found by its rank suffix: the file name carries the
 * commId) is valid JSON (python3's parser) with, per category, the events
 * the run makes: 6 groups (and their API events: 5 collective calls, 2 p2p
 * calls, 6 launches), 5 collectives, 2 p2p, a kernel channel per work
 * item, a proxy op per connection side used (ring: a send and a recv for
 * AllReduce/AllGather/ReduceScatter, one for Broadcast/Reduce on 2 ranks,
 * one each for Send and Recv), proxy steps, their states and the net
 * plugin's transfers (one per step); none left
 * open, the collectives in call order. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "coll_each.h"
#include "nccl.h"
#include "ranks_id.h"

static ncclUniqueId id;

static int rank_main(int rank, int n, void* arg) {
  (void)arg;
  ranks_unique_id(rank, &id);
  ncclComm_t comm;
  CHECK_NCCL(ncclCommInitRank(&comm, n, id, rank));
  coll_each_run(comm, rank, n, 40000);
  CHECK_NCCL(ncclCommDestroy(comm)); /* the trace is written at finalize */
  return 0;
}

/* Complete events per category, open ones, then the collectives in order. */
static const char* check_script =
    "import json,sys,collections;"
    "d=json.load(open(sys.argv[1]));"
    "x=[e for e in d['traceEvents'] if e['ph']=='X'];"
    "c=collections.Counter(e['cat'] for e in x);"
    "print(' '.join('%s=%d'%(k,v) for k,v in sorted(c.items())),"
    "'open=%d'%sum(e.get('args',{}).get('open',0) for e in x),"
    "','.join(e['name'] for e in sorted((e for e in x if e['cat']=='coll'),key=lambda e:e['args']['seq'])))";

static void python_run(const char* arg, char* out, size_t size) {
  char cmd[4096];
  snprintf(cmd, sizeof(cmd), "%s -c \"%s\" '%s' 2>&1", PYTHON3, check_script, arg);
  FILE* p = popen(cmd, "r");
  CHECK(p);
  out[0] = 0;
  if (!fgets(out, (int)size, p)) out[0] = 0;
  size_t len = strlen(out);
  if (len && out[len - 1] == '\n') out[len - 1] = 0;
  CHECK_MSG(pclose(p) == 0, "python3 failed on %s: %s", arg, out);
}

/* "name=N" in got, N returned (-1 if absent). */
static long count_of(const char* got, const char* name) {
  char key[64];
  snprintf(key, sizeof(key), "%s=", name);
  for (const char* p = strstr(got, key); p; p = strstr(p + 1, key))
    if (p == got || p[-1] == ' ') return strtol(p + strlen(key), NULL, 10);
  return -1;
}

int main(void) {
  char dir[] = "/tmp/mkccl-trace-comm-XXXXXX";
  CHECK(mkdtemp(dir));
  setenv("MKCCL_PROFILER_DIR", dir, 1);
  setenv("NCCL_PROFILER_PLUGIN", PROFILER_PLUGIN, 1);
  setenv("NCCL_SHM_DISABLE", "1", 1);
  unsetenv("MKCCL_PROFILER_MASK"); /* the default: all but ProxyCtrl */
  CHECK_EQ_INT(ranks_run(2, rank_main, NULL, 120), 0);

  for (int r = 0; r < 2; r++) {
    char pattern[600], got[4096];
    snprintf(pattern, sizeof(pattern), "%s/mkccl-trace-*-r%d.json", dir, r);
    glob_t g;
    CHECK_MSG(glob(pattern, 0, NULL, &g) == 0 && g.gl_pathc == 1, "rank %d: one trace expected (%s)", r, pattern);
    python_run(g.gl_pathv[0], got, sizeof(got));
    globfree(&g);
    printf("rank %d: %s\n", r, got);
    CHECK_EQ_INT(count_of(got, "group"), 6);
    CHECK_EQ_INT(count_of(got, "coll"), 5);
    CHECK_EQ_INT(count_of(got, "p2p"), 2);
    CHECK_EQ_INT(count_of(got, "kernelch"), 6);
    CHECK_EQ_INT(count_of(got, "groupapi"), 6);
    CHECK_EQ_INT(count_of(got, "collapi"), 5);
    CHECK_EQ_INT(count_of(got, "p2papi"), 2);
    CHECK_EQ_INT(count_of(got, "kernellaunch"), 6);
    CHECK_EQ_INT(count_of(got, "proxyop"), 3 * 2 + 1 + 1 + 2);
    long steps = count_of(got, "proxystep");
    CHECK_MSG(steps >= 10 && count_of(got, "state") >= steps, "rank %d: %s", r, got);
    CHECK_EQ_INT(count_of(got, "net"), steps); /* net-socket reports each step's transfer */
    CHECK_EQ_INT(count_of(got, "open"), 0);
    CHECK_STR_CONTAINS(got, " AllReduce,AllGather,ReduceScatter,Broadcast,Reduce");
  }
  char cmd[700];
  snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
  CHECK_EQ_INT(system(cmd), 0);
  printf("test_profiler_comm: OK\n");
  return 0;
}
