/* ncclConfig_t as NCCL 2.28 reads it: the caller's struct may be older
 * (smaller size, lower version) or newer (larger size) than ours; fields a
 * version did not have take their defaults; the magic must be
 * NCCL_CONFIG_INITIALIZER's. Environment overrides as NCCL's:
 * NCCL_COMM_BLOCKING, NCCL_COMM_SPLIT_SHARE_RESOURCES. */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "base/err.h"
#include "base/param.h"
#include "comm/comm.h"

#define COMM_CONFIG_MAGIC 0xcafebeefu

/* The caller's struct copied over the defaults, with fields its version
 * lacked reset. */
static ncclResult_t comm_config_read(const ncclConfig_t* user, ncclConfig_t* out, const char* fn) {
  ncclConfig_t def = NCCL_CONFIG_INITIALIZER, cfg = def;
  size_t size = user->size;
  if (size < offsetof(ncclConfig_t, blocking))
    return MK_FAIL(ncclInvalidArgument, "%s: ncclConfig_t size %zu is too small (not initialized via "
                                        "NCCL_CONFIG_INITIALIZER?)", fn, size);
  memcpy(&cfg, user, size < sizeof(cfg) ? size : sizeof(cfg));
  if (cfg.magic != COMM_CONFIG_MAGIC)
    return MK_FAIL(ncclInvalidArgument, "%s: ncclConfig_t argument not initialized via NCCL_CONFIG_INITIALIZER", fn);
  if (cfg.version < NCCL_VERSION(2, 14, 0)) cfg.blocking = def.blocking;
  if (cfg.version < NCCL_VERSION(2, 17, 0)) {
    cfg.cgaClusterSize = def.cgaClusterSize;
    cfg.minCTAs = def.minCTAs;
    cfg.maxCTAs = def.maxCTAs;
    cfg.netName = def.netName;
  }
  if (cfg.version < NCCL_VERSION(2, 25, 0)) cfg.trafficClass = def.trafficClass;
  if (cfg.version < NCCL_VERSION(2, 27, 0)) {
    cfg.collnetEnable = def.collnetEnable;
    cfg.CTAPolicy = def.CTAPolicy;
    cfg.shrinkShare = def.shrinkShare;
    cfg.nvlsCTAs = def.nvlsCTAs;
  }
  if (cfg.version < NCCL_VERSION(2, 28, 0)) {
    cfg.nChannelsPerNetPeer = def.nChannelsPerNetPeer;
    cfg.nvlinkCentricSched = def.nvlinkCentricSched;
  }
  cfg.size = sizeof(cfg);
  *out = cfg;
  return ncclSuccess;
}

static int comm_flag_resolve(int value, const char* env) {
  int64_t e = param_int(env);
  if (e == 0 || e == 1) return (int)e;
  return value == NCCL_CONFIG_UNDEF_INT ? -1 : value;
}

static ncclResult_t comm_flag_check(int value, const char* field, const char* fn) {
  if (value != 0 && value != 1)
    return MK_FAIL(ncclInvalidArgument, "%s: invalid config %s attribute value %d", fn, field, value);
  return ncclSuccess;
}

ncclResult_t comm_config_parse(const ncclConfig_t* user, const ncclConfig_t* inherit, struct ncclComm* comm,
                               const char* fn) {
  ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER;
  if (user) MK_CHECK(comm_config_read(user, &cfg, fn));
  else if (inherit) cfg = *inherit;
  if (cfg.blocking != NCCL_CONFIG_UNDEF_INT) MK_CHECK(comm_flag_check(cfg.blocking, "blocking", fn));
  if (cfg.splitShare != NCCL_CONFIG_UNDEF_INT) MK_CHECK(comm_flag_check(cfg.splitShare, "splitShare", fn));
  int blocking = comm_flag_resolve(cfg.blocking, "NCCL_COMM_BLOCKING");
  cfg.blocking = blocking < 0 ? 1 : blocking;
  int share = comm_flag_resolve(cfg.splitShare, "NCCL_COMM_SPLIT_SHARE_RESOURCES");
  cfg.splitShare = share < 0 ? 0 : share;

  /* Strings are the caller's memory: keep our own copies. */
  comm->commName[0] = comm->netName[0] = '\0';
  if (cfg.commName) snprintf(comm->commName, sizeof(comm->commName), "%s", cfg.commName);
  if (cfg.netName) snprintf(comm->netName, sizeof(comm->netName), "%s", cfg.netName);
  cfg.commName = cfg.commName ? comm->commName : NULL;
  cfg.netName = cfg.netName ? comm->netName : NULL;
  comm->config = cfg;
  return ncclSuccess;
}
