/* ncclConfig_t as each NCCL release from 2.14 to 2.30 lays it out (its own
 * offsets, written here from those headers), and a larger future one:
 * every layout is accepted, its blocking field honoured; a field is read
 * only where the caller's size covers it and its version had it (the bytes
 * past a struct, and an old struct's padding, hold garbage that would fail
 * the checks or show in the config); NCCL's value checks; minCTAs/maxCTAs
 * bound the channel count (NCCL_MIN_CTAS/NCCL_MAX_CTAS over them), with the
 * data still right; fields mkccl does not honour each get an INFO line. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "comm/comm.h"
#include "nccl.h"
#include "ranks_id.h"

#define GARBAGE 0x5a
#define BUF 128
#define UNDEF NCCL_CONFIG_UNDEF_INT

enum { INT = 4, PTR = 8 };
typedef struct {
  const char* name;
  int offset, width, since; /* since: NCCL_VERSION the field appeared in */
} field_t;

static const field_t fields[] = {
    {"blocking", 16, INT, 21400},        {"cgaClusterSize", 20, INT, 21700}, {"minCTAs", 24, INT, 21700},
    {"maxCTAs", 28, INT, 21700},         {"netName", 32, PTR, 21700},        {"splitShare", 40, INT, 21800},
    {"trafficClass", 44, INT, 22600},    {"commName", 48, PTR, 22700},       {"collnetEnable", 56, INT, 22700},
    {"CTAPolicy", 60, INT, 22700},       {"shrinkShare", 64, INT, 22700},    {"nvlsCTAs", 68, INT, 22700},
    {"nChannelsPerNetPeer", 72, INT, 22800}, {"nvlinkCentricSched", 76, INT, 22800},
    {"graphUsageMode", 80, INT, 22900},  {"numRmaCtx", 84, INT, 22900},      {"maxP2pPeers", 88, INT, 23000},
    {"graphStreamOrdering", 92, INT, 23005},
};
#define NFIELDS (int)(sizeof(fields) / sizeof(fields[0]))

static const field_t* field(const char* name) {
  for (int i = 0; i < NFIELDS; i++)
    if (strcmp(fields[i].name, name) == 0) return &fields[i];
  CHECK_MSG(0, "no field %s", name);
  return NULL;
}

/* What NCCL_CONFIG_INITIALIZER of `version` makes, in a struct of `size`
 * bytes, garbage everywhere else (padding and past the end). */
static void config_make(unsigned char* buf, unsigned version, size_t size) {
  memset(buf, GARBAGE, BUF);
  memcpy(buf, &size, sizeof(size));
  unsigned magic = 0xcafebeef;
  memcpy(buf + 8, &magic, 4);
  memcpy(buf + 12, &version, 4);
  for (int i = 0; i < NFIELDS; i++) {
    if ((unsigned)fields[i].since > version) continue;
    if (fields[i].width == PTR) memset(buf + fields[i].offset, 0, PTR);
    else {
      int u = UNDEF;
      memcpy(buf + fields[i].offset, &u, INT);
    }
  }
}

static void config_set(unsigned char* buf, const char* name, int value) { memcpy(buf + field(name)->offset, &value, INT); }

/* Each release's struct: its version and sizeof. */
static const struct {
  unsigned version;
  size_t size;
} layouts[] = {{21400, 24}, {21700, 40}, {21800, 48}, {22600, 48}, {22700, 72},
               {22809, 80}, {22902, 88}, {23007, 96}, {23100, 120}};

static void check_layouts(int rank, int n) {
  for (size_t l = 0; l < sizeof(layouts) / sizeof(layouts[0]); l++) {
    unsigned char buf[BUF];
    config_make(buf, layouts[l].version, layouts[l].size);
    config_set(buf, "blocking", 0);
    if (layouts[l].version >= 22700) {
      static const char name[] = "cfg";
      const char* p = name;
      memcpy(buf + field("commName")->offset, &p, sizeof(p));
    }
    ncclUniqueId id;
    ranks_unique_id(rank, &id);
    ncclComm_t comm = NULL;
    ncclResult_t res = ncclCommInitRankConfig(&comm, n, id, rank, (ncclConfig_t*)buf);
    CHECK_MSG(res == ncclInProgress || res == ncclSuccess, "layout %u/%zu: %s (%s)", layouts[l].version,
              layouts[l].size, ncclGetErrorString(res), ncclGetLastError(NULL));
    ncclResult_t state = ncclInProgress;
    while (state == ncclInProgress) CHECK_NCCL(ncclCommGetAsyncError(comm, &state));
    CHECK_EQ_INT(state, ncclSuccess);
    CHECK_EQ_INT(comm->config.blocking, 0);
    /* The 2.18 struct's padding sits where 2.26 put trafficClass. */
    CHECK_EQ_INT(comm->config.trafficClass, UNDEF);
    CHECK_STR_CONTAINS(comm->commName, layouts[l].version >= 22700 ? "cfg" : "");
    if (layouts[l].version < 22700) CHECK_EQ_INT((int)strlen(comm->commName), 0);
    CHECK_NCCL(ncclCommDestroy(comm));
  }
  /* A 2.30-sized struct that says 2.27: the later fields are not read. */
  unsigned char buf[BUF];
  config_make(buf, 22700, 96);
  ncclUniqueId id;
  ranks_unique_id(rank, &id);
  ncclComm_t comm = NULL;
  CHECK_NCCL(ncclCommInitRankConfig(&comm, n, id, rank, (ncclConfig_t*)buf));
  CHECK_EQ_INT(comm->config.nChannelsPerNetPeer, UNDEF);
  CHECK_NCCL(ncclCommDestroy(comm));
}

static void check_refused(void) {
  static const struct {
    const char* field;
    int value;
  } bad[] = {{"cgaClusterSize", -1}, {"minCTAs", 0},       {"maxCTAs", -2},      {"collnetEnable", 2},
             {"CTAPolicy", 8},       {"shrinkShare", 3},   {"nvlsCTAs", 0},      {"nChannelsPerNetPeer", 65},
             {"nvlinkCentricSched", 2}, {"graphUsageMode", 3}, {"numRmaCtx", -1}, {"maxP2pPeers", 0},
             {"graphStreamOrdering", 2}};
  ncclUniqueId id;
  CHECK_NCCL(ncclGetUniqueId(&id));
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    unsigned char buf[BUF];
    config_make(buf, 23007, 96);
    config_set(buf, bad[i].field, bad[i].value);
    ncclComm_t comm = NULL;
    CHECK_EQ_INT(ncclCommInitRankConfig(&comm, 1, id, 0, (ncclConfig_t*)buf), ncclInvalidArgument);
    CHECK_STR_CONTAINS(ncclGetLastError(NULL), bad[i].field);
    CHECK(comm == NULL);
  }
  unsigned char buf[BUF];
  config_make(buf, 23007, 96);
  config_set(buf, "minCTAs", 4);
  config_set(buf, "maxCTAs", 2);
  ncclComm_t comm = NULL;
  CHECK_EQ_INT(ncclCommInitRankConfig(&comm, 1, id, 0, (ncclConfig_t*)buf), ncclInvalidArgument);
  CHECK_STR_CONTAINS(ncclGetLastError(NULL), "minCTAs/maxCTAs");
}

/* Channels of a 2-rank communicator made with minCTAs/maxCTAs, and an
 * AllReduce over them whose every element differs by rank and index. */
static int channels_with(int rank, int n, int minCTAs, int maxCTAs) {
  ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER;
  cfg.minCTAs = minCTAs;
  cfg.maxCTAs = maxCTAs;
  ncclUniqueId id;
  ranks_unique_id(rank, &id);
  ncclComm_t comm = NULL;
  CHECK_NCCL(ncclCommInitRankConfig(&comm, n, id, rank, &cfg));
  int channels = comm->dp.ch.nChannels;
  enum { COUNT = 1 << 16 };
  int* buf = malloc(COUNT * sizeof(int));
  CHECK(buf);
  for (int i = 0; i < COUNT; i++) buf[i] = rank * 1000003 + i;
  CHECK_NCCL(ncclAllReduce(buf, buf, COUNT, ncclInt32, ncclSum, comm, NULL));
  for (int i = 0; i < COUNT; i++) CHECK_EQ_INT(buf[i], n * i + 1000003 * n * (n - 1) / 2);
  free(buf);
  CHECK_NCCL(ncclCommDestroy(comm));
  return channels;
}

static void check_ctas(int rank, int n) {
  setenv("MKCCL_HOST_NCHANNELS", "4", 1);
  CHECK_EQ_INT(channels_with(rank, n, UNDEF, UNDEF), 4);
  CHECK_EQ_INT(channels_with(rank, n, UNDEF, 2), 2);
  CHECK_EQ_INT(channels_with(rank, n, 1, 1), 1);
  setenv("MKCCL_HOST_NCHANNELS", "1", 1);
  CHECK_EQ_INT(channels_with(rank, n, 3, UNDEF), 3);
  setenv("NCCL_MAX_CTAS", "2", 1); /* the environment over the config */
  CHECK_EQ_INT(channels_with(rank, n, 3, UNDEF), 2);
  unsetenv("NCCL_MAX_CTAS");
  unsetenv("MKCCL_HOST_NCHANNELS");
}

static int rank_main(int rank, int n, void* arg) {
  (void)arg;
  check_layouts(rank, n);
  check_ctas(rank, n);
  return 0;
}

/* NCCL_DEBUG=INFO into a file: what the ignored fields say. */
static void check_notes(void) {
  char path[] = "/tmp/mkccl_config_notes_XXXXXX";
  int fd = mkstemp(path);
  CHECK(fd >= 0);
  close(fd);
  setenv("NCCL_DEBUG", "INFO", 1);
  setenv("NCCL_DEBUG_SUBSYS", "INIT", 1);
  setenv("NCCL_DEBUG_FILE", path, 1);
  ncclResetDebugInit();
  unsigned char buf[BUF];
  config_make(buf, 23007, 96);
  config_set(buf, "cgaClusterSize", 2);
  config_set(buf, "nvlsCTAs", 4);
  config_set(buf, "collnetEnable", 1);
  config_set(buf, "graphUsageMode", 1);
  config_set(buf, "maxP2pPeers", 7);
  ncclUniqueId id;
  CHECK_NCCL(ncclGetUniqueId(&id));
  ncclComm_t comm = NULL;
  CHECK_NCCL(ncclCommInitRankConfig(&comm, 1, id, 0, (ncclConfig_t*)buf));
  CHECK_NCCL(ncclCommDestroy(comm));
  /* The defaults say nothing. */
  ncclConfig_t plain = NCCL_CONFIG_INITIALIZER;
  CHECK_NCCL(ncclGetUniqueId(&id));
  CHECK_NCCL(ncclCommInitRankConfig(&comm, 1, id, 0, &plain));
  CHECK_NCCL(ncclCommDestroy(comm));
  unsetenv("NCCL_DEBUG");
  unsetenv("NCCL_DEBUG_FILE");
  ncclResetDebugInit();
  FILE* f = fopen(path, "r");
  CHECK(f);
  static char log[1 << 16];
  size_t len = fread(log, 1, sizeof(log) - 1, f);
  log[len] = '\0';
  fclose(f);
  unlink(path);
  static const char* const want[] = {"config cgaClusterSize=2 is ignored", "config nvlsCTAs=4 is ignored",
                                     "config collnetEnable=1 is ignored", "config graphUsageMode=1 is ignored",
                                     "config maxP2pPeers=7 is ignored"};
  int lines = 0;
  for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) CHECK_STR_CONTAINS(log, want[i]);
  for (const char* p = log; (p = strstr(p, " is ignored: ")); p++) lines++;
  CHECK_EQ_INT(lines, 5);
}

/* In a process of its own: the ids made here start bootstrap root threads,
 * and the ranks below are forked (tests/common/ranks.h says why not beside
 * a thread). */
static int alone_main(int rank, int n, void* arg) {
  (void)rank, (void)n, (void)arg;
  check_refused();
  check_notes();
  return 0;
}

int main(void) {
  CHECK_EQ_INT(ranks_run(1, alone_main, NULL, 120), 0);
  CHECK_EQ_INT(ranks_run(2, rank_main, NULL, 240), 0);
  return 0;
}
