/* ncclConfig_t as NCCL reads it: the caller's struct may be any NCCL's from
 * 2.14 to 2.30 (its size and version say which fields it has), or newer
 * (larger); fields its version did not have take their defaults; the magic
 * must be NCCL_CONFIG_INITIALIZER's. Values are checked as NCCL checks them.
 * Environment overrides as NCCL's: NCCL_COMM_BLOCKING,
 * NCCL_COMM_SPLIT_SHARE_RESOURCES, NCCL_MIN_CTAS, NCCL_MAX_CTAS.
 * Honoured: blocking, netName, commName, trafficClass, minCTAs and maxCTAs
 * (bounds on the channel count). The others are accepted, and a field set
 * to something mkccl does not do gets an INFO line saying why. */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "base/err.h"
#include "base/log.h"
#include "base/param.h"
#include "channel/channel.h"
#include "comm/comm.h"

#define COMM_CONFIG_MAGIC 0xcafebeefu

/* NCCL 2.30's layout: 2.28's (ncclConfig_t) and the fields 2.29 and 2.30
 * appended. */
typedef struct {
  ncclConfig_t base;
  int graphUsageMode;
  int numRmaCtx;
  int maxP2pPeers;
  int graphStreamOrdering;
} comm_config_v23000_t;

/* Which NCCL release first had each field past `blocking` (2.14). */
typedef struct {
  size_t offset;
  int since;
} config_field_t;

static const config_field_t config_fields[] = {
    {offsetof(ncclConfig_t, cgaClusterSize), NCCL_VERSION(2, 17, 0)},
    {offsetof(ncclConfig_t, minCTAs), NCCL_VERSION(2, 17, 0)},
    {offsetof(ncclConfig_t, maxCTAs), NCCL_VERSION(2, 17, 0)},
    {offsetof(ncclConfig_t, netName), NCCL_VERSION(2, 17, 0)},
    {offsetof(ncclConfig_t, splitShare), NCCL_VERSION(2, 18, 0)},
    {offsetof(ncclConfig_t, trafficClass), NCCL_VERSION(2, 26, 0)},
    {offsetof(ncclConfig_t, commName), NCCL_VERSION(2, 27, 0)},
    {offsetof(ncclConfig_t, collnetEnable), NCCL_VERSION(2, 27, 0)},
    {offsetof(ncclConfig_t, CTAPolicy), NCCL_VERSION(2, 27, 0)},
    {offsetof(ncclConfig_t, shrinkShare), NCCL_VERSION(2, 27, 0)},
    {offsetof(ncclConfig_t, nvlsCTAs), NCCL_VERSION(2, 27, 0)},
    {offsetof(ncclConfig_t, nChannelsPerNetPeer), NCCL_VERSION(2, 28, 0)},
    {offsetof(ncclConfig_t, nvlinkCentricSched), NCCL_VERSION(2, 28, 0)},
    {offsetof(comm_config_v23000_t, graphUsageMode), NCCL_VERSION(2, 29, 0)},
    {offsetof(comm_config_v23000_t, numRmaCtx), NCCL_VERSION(2, 29, 0)},
    {offsetof(comm_config_v23000_t, maxP2pPeers), NCCL_VERSION(2, 30, 0)},
    {offsetof(comm_config_v23000_t, graphStreamOrdering), NCCL_VERSION(2, 30, 5)},
};

/* The caller's struct over the defaults: a field is the caller's only where
 * its size covers it and its version had it (padding of an older struct is
 * no field). */
static ncclResult_t comm_config_read(const ncclConfig_t* user, comm_config_v23000_t* out, const char* fn) {
  comm_config_v23000_t def = {NCCL_CONFIG_INITIALIZER, NCCL_CONFIG_UNDEF_INT, NCCL_CONFIG_UNDEF_INT,
                              NCCL_CONFIG_UNDEF_INT, NCCL_CONFIG_UNDEF_INT};
  comm_config_v23000_t cfg = def;
  size_t size = user->size;
  if (size < offsetof(ncclConfig_t, blocking))
    return MK_FAIL(ncclInvalidArgument, "%s: ncclConfig_t size %zu is too small (not initialized via "
                                        "NCCL_CONFIG_INITIALIZER?)", fn, size);
  memcpy(&cfg, user, size < sizeof(cfg) ? size : sizeof(cfg));
  if (cfg.base.magic != COMM_CONFIG_MAGIC)
    return MK_FAIL(ncclInvalidArgument, "%s: ncclConfig_t argument not initialized via NCCL_CONFIG_INITIALIZER", fn);
  unsigned int version = cfg.base.version;
  if (version < NCCL_VERSION(2, 14, 0) || size < offsetof(ncclConfig_t, blocking) + sizeof(int))
    cfg.base.blocking = def.base.blocking;
  for (size_t i = 0; i < sizeof(config_fields) / sizeof(config_fields[0]); i++) {
    const config_field_t* f = &config_fields[i];
    size_t width = f->offset == offsetof(ncclConfig_t, netName) || f->offset == offsetof(ncclConfig_t, commName)
                       ? sizeof(const char*)
                       : sizeof(int);
    if (version < (unsigned int)f->since || size < f->offset + width)
      memcpy((char*)&cfg + f->offset, (const char*)&def + f->offset, width);
  }
  cfg.base.size = sizeof(cfg.base);
  *out = cfg;
  return ncclSuccess;
}

static int comm_flag_resolve(int value, int64_t e) {
  if (e == 0 || e == 1) return (int)e;
  return value == NCCL_CONFIG_UNDEF_INT ? -1 : value;
}

#define SET(v) ((v) != NCCL_CONFIG_UNDEF_INT)

static ncclResult_t comm_config_bad(int value, const char* field, const char* fn) {
  return MK_FAIL(ncclInvalidArgument, "%s: invalid config %s attribute value %d", fn, field, value);
}

static int comm_config_flag_ok(int v) { return !SET(v) || v == 0 || v == 1; }

/* NCCL's checks of each value. */
static ncclResult_t comm_config_check(const comm_config_v23000_t* c, const char* fn) {
  const ncclConfig_t* b = &c->base;
  if (!comm_config_flag_ok(b->blocking)) return comm_config_bad(b->blocking, "blocking", fn);
  if (SET(b->cgaClusterSize) && b->cgaClusterSize < 0) return comm_config_bad(b->cgaClusterSize, "cgaClusterSize", fn);
  if (SET(b->minCTAs) && b->minCTAs <= 0) return comm_config_bad(b->minCTAs, "minCTAs", fn);
  if (SET(b->maxCTAs) && b->maxCTAs <= 0) return comm_config_bad(b->maxCTAs, "maxCTAs", fn);
  if (SET(b->minCTAs) && SET(b->maxCTAs) && b->minCTAs > b->maxCTAs)
    return MK_FAIL(ncclInvalidArgument, "%s: invalid config minCTAs/maxCTAs attribute values %d/%d", fn, b->minCTAs,
                   b->maxCTAs);
  if (!comm_config_flag_ok(b->splitShare)) return comm_config_bad(b->splitShare, "splitShare", fn);
  if (!comm_config_flag_ok(b->collnetEnable)) return comm_config_bad(b->collnetEnable, "collnetEnable", fn);
  if (SET(b->CTAPolicy) && (b->CTAPolicy & ~(NCCL_CTA_POLICY_EFFICIENCY | NCCL_CTA_POLICY_ZERO)))
    return comm_config_bad(b->CTAPolicy, "CTAPolicy", fn);
  if (!comm_config_flag_ok(b->shrinkShare)) return comm_config_bad(b->shrinkShare, "shrinkShare", fn);
  if (SET(b->nvlsCTAs) && b->nvlsCTAs <= 0) return comm_config_bad(b->nvlsCTAs, "nvlsCTAs", fn);
  if (SET(b->nChannelsPerNetPeer) && (b->nChannelsPerNetPeer <= 0 || b->nChannelsPerNetPeer > MK_MAX_CHANNELS))
    return comm_config_bad(b->nChannelsPerNetPeer, "nChannelsPerNetPeer", fn);
  if (!comm_config_flag_ok(b->nvlinkCentricSched)) return comm_config_bad(b->nvlinkCentricSched, "nvlinkCentricSched", fn);
  if (SET(c->graphUsageMode) && (c->graphUsageMode < 0 || c->graphUsageMode > 2))
    return comm_config_bad(c->graphUsageMode, "graphUsageMode", fn);
  if (SET(c->numRmaCtx) && c->numRmaCtx < 0) return comm_config_bad(c->numRmaCtx, "numRmaCtx", fn);
  if (SET(c->maxP2pPeers) && c->maxP2pPeers <= 0) return comm_config_bad(c->maxP2pPeers, "maxP2pPeers", fn);
  if (!comm_config_flag_ok(c->graphStreamOrdering))
    return comm_config_bad(c->graphStreamOrdering, "graphStreamOrdering", fn);
  return ncclSuccess;
}

/* A field set to what mkccl does not do: one INFO line, with why. */
static void comm_config_note(const struct ncclComm* comm, const char* field, int value, const char* why) {
  MK_INFO(NCCL_INIT, "comm %p rank %d: config %s=%d is ignored: %s", (const void*)comm, comm->rank, field, value,
          why);
}

static void comm_config_notes(const struct ncclComm* comm, const comm_config_v23000_t* c) {
  const ncclConfig_t* b = &c->base;
  if (b->splitShare == 1)
    comm_config_note(comm, "splitShare", 1, "a split communicator gets resources of its own, none shared with its parent");
  if (SET(b->shrinkShare) && b->shrinkShare == 1)
    comm_config_note(comm, "shrinkShare", 1, "a shrunk communicator gets resources of its own, none shared with its parent");
  if (SET(b->cgaClusterSize)) comm_config_note(comm, "cgaClusterSize", b->cgaClusterSize, "mkccl's kernels are launched without thread block clusters");
  if (SET(b->CTAPolicy) && b->CTAPolicy != NCCL_CTA_POLICY_DEFAULT)
    comm_config_note(comm, "CTAPolicy", b->CTAPolicy, "mkccl has one policy: the channel count comes from minCTAs/maxCTAs and MKCCL_GPU_NCHANNELS");
  if (SET(b->nvlsCTAs)) comm_config_note(comm, "nvlsCTAs", b->nvlsCTAs, "mkccl has no NVLink SHARP (NVLS) algorithm");
  if (b->collnetEnable == 1) comm_config_note(comm, "collnetEnable", 1, "mkccl has no CollNet transport yet");
  if (SET(b->nChannelsPerNetPeer))
    comm_config_note(comm, "nChannelsPerNetPeer", b->nChannelsPerNetPeer, "point-to-point channels are set per communicator (MKCCL_P2P_NCHANNELS, MKCCL_GPU_P2P_NCHANNELS)");
  if (b->nvlinkCentricSched == 1) comm_config_note(comm, "nvlinkCentricSched", 1, "mkccl schedules its channels alike on every link");
  if (SET(c->graphUsageMode)) comm_config_note(comm, "graphUsageMode", c->graphUsageMode, "mkccl keeps one set of buffers for captured and eager work alike");
  if (SET(c->numRmaCtx)) comm_config_note(comm, "numRmaCtx", c->numRmaCtx, "mkccl has no one-sided (RMA) contexts yet");
  if (SET(c->maxP2pPeers)) comm_config_note(comm, "maxP2pPeers", c->maxP2pPeers, "mkccl connects a point-to-point peer on first use, without a cap");
  if (SET(c->graphStreamOrdering)) comm_config_note(comm, "graphStreamOrdering", c->graphStreamOrdering, "mkccl orders captured launches as the stream orders them");
}

/* NCCL_MIN_CTAS/NCCL_MAX_CTAS, where set, over the config's. */
static void comm_config_env(ncclConfig_t* b) {
  int64_t lo = param_NCCL_MIN_CTAS(), hi = param_NCCL_MAX_CTAS();
  if (lo > 0) b->minCTAs = (int)(lo < MK_MAX_CHANNELS ? lo : MK_MAX_CHANNELS);
  if (hi > 0) b->maxCTAs = (int)(hi < MK_MAX_CHANNELS ? hi : MK_MAX_CHANNELS);
  if (SET(b->minCTAs) && SET(b->maxCTAs) && b->minCTAs > b->maxCTAs) b->minCTAs = b->maxCTAs;
}

ncclResult_t comm_config_parse(const ncclConfig_t* user, const ncclConfig_t* inherit, struct ncclComm* comm,
                               const char* fn) {
  comm_config_v23000_t c = {NCCL_CONFIG_INITIALIZER, NCCL_CONFIG_UNDEF_INT, NCCL_CONFIG_UNDEF_INT,
                            NCCL_CONFIG_UNDEF_INT, NCCL_CONFIG_UNDEF_INT};
  if (user) MK_CHECK(comm_config_read(user, &c, fn));
  else if (inherit) c.base = *inherit;
  MK_CHECK(comm_config_check(&c, fn));
  ncclConfig_t cfg = c.base;
  int blocking = comm_flag_resolve(cfg.blocking, param_NCCL_COMM_BLOCKING());
  cfg.blocking = blocking < 0 ? 1 : blocking;
  int share = comm_flag_resolve(cfg.splitShare, param_NCCL_COMM_SPLIT_SHARE_RESOURCES());
  cfg.splitShare = share < 0 ? 0 : share;
  comm_config_env(&cfg);
  c.base = cfg;
  comm_config_notes(comm, &c);

  /* Strings are the caller's memory: keep our own copies. */
  comm->commName[0] = comm->netName[0] = '\0';
  if (cfg.commName) snprintf(comm->commName, sizeof(comm->commName), "%s", cfg.commName);
  if (cfg.netName) snprintf(comm->netName, sizeof(comm->netName), "%s", cfg.netName);
  cfg.commName = cfg.commName ? comm->commName : NULL;
  cfg.netName = cfg.netName ? comm->netName : NULL;
  comm->config = cfg;
  return ncclSuccess;
}
