#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
/* The rule tuner: NCCL tuner v5 and v6 (plus mkcclPluginInfo_v1) over a
 * YAML rules file (tuner_rules.h). The file is named by MKCCL_TUNER_RULES
 * and read at init; getCollInfo checks its modification stamp (at most
 * every MKCCL_TUNER_RULES_CHECK_MS) and reloads it when it changed. A bad
 * file is reported with file:line:col; at init that fails the plugin, on
 * reload the previous rules stay. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "mkccl_plugin_params.h"
#include "tuner/nccl_tuner.h"
#include "tuner_rules.h"

#define EXPORT __attribute__((visibility("default")))

static const mkcclParamDecl_v1 rules_params[] = {
#define PLUGIN_PARAM PLUGIN_PARAM_DECL
#include "tuner_rules_params.def"
#undef PLUGIN_PARAM
};
static plugin_params_t rules_pp = {NULL, rules_params, 2};
#define PLUGIN_PARAM(name, type, def, help) static inline PLUGIN_PARAM_DEFINE(rules_param_, &rules_pp, name, type)
#include "tuner_rules_params.def"
#undef PLUGIN_PARAM

static void rules_bind(const mkcclServices_v1* services) { rules_pp.services = services; }

EXPORT const mkcclPluginInfo_v1_t mkcclPluginInfo_v1 = {
    sizeof(mkcclPluginInfo_v1_t), MKCCL_PLUGIN_ABI_VERSION, "tuner-rules", "1.0", rules_params, 2, rules_bind};

typedef struct {
  struct timespec mtime;
  off_t size;
  ino_t ino;
} rules_stamp_t;

typedef struct {
  char path[4096];
  tuner_rules_t rules;
  rules_stamp_t loaded;   /* stamp of the rules in use */
  rules_stamp_t rejected; /* stamp of a bad version already reported */
  int64_t checkMs;
  struct timespec lastCheck;
  size_t nRanks, nNodes;
  ncclDebugLogger_t log;
  int lastRule, lastFunc;  /* for getChunkSize: the rule of the last getCollInfo */
  size_t lastBytes;
} rules_ctx_t;

#define RULES_LOG(ctx, level, ...) \
  do {                             \
    if ((ctx)->log) (ctx)->log(level, NCCL_TUNING, __FILE__, __LINE__, __VA_ARGS__); \
  } while (0)

static int rules_stamp_get(const char* path, rules_stamp_t* s) {
  struct stat st;
  if (stat(path, &st) != 0) return -1;
  s->mtime = st.st_mtim;
  s->size = st.st_size;
  s->ino = st.st_ino;
  return 0;
}

static int rules_stamp_same(const rules_stamp_t* a, const rules_stamp_t* b) {
  return a->mtime.tv_sec == b->mtime.tv_sec && a->mtime.tv_nsec == b->mtime.tv_nsec && a->size == b->size &&
         a->ino == b->ino;
}

static ncclResult_t rules_init(void** ctxOut, uint64_t commId, size_t nRanks, size_t nNodes, ncclDebugLogger_t log,
                               ncclNvlDomainInfo_v5_t* nvl, ncclTunerConstants_v5_t* constants) {
  (void)commId, (void)nvl, (void)constants;
  rules_ctx_t* ctx = calloc(1, sizeof(*ctx));
  if (!ctx) return ncclSystemError;
  ctx->log = log;
  ctx->nRanks = nRanks;
  ctx->nNodes = nNodes;
  ctx->lastRule = -1;
  const char* path = rules_param_MKCCL_TUNER_RULES();
  ctx->checkMs = rules_param_MKCCL_TUNER_RULES_CHECK_MS();
  char err[512];
  if (!path || !*path) {
    RULES_LOG(ctx, NCCL_LOG_WARN, "TUNER/rules: MKCCL_TUNER_RULES names no rules file");
    free(ctx);
    return ncclInvalidUsage;
  }
  snprintf(ctx->path, sizeof(ctx->path), "%s", path);
  if (rules_stamp_get(path, &ctx->loaded) != 0 || tuner_rules_parse_file(path, &ctx->rules, err, sizeof(err)) != 0) {
    if (rules_stamp_get(path, &ctx->loaded) != 0) snprintf(err, sizeof(err), "%s: cannot open", path);
    RULES_LOG(ctx, NCCL_LOG_WARN, "TUNER/rules: %s", err);
    free(ctx);
    return ncclInvalidUsage;
  }
  clock_gettime(CLOCK_MONOTONIC_COARSE, &ctx->lastCheck);
  RULES_LOG(ctx, NCCL_LOG_INFO, "TUNER/rules: %d rules from %s", ctx->rules.n, path);
  *ctxOut = ctx;
  return ncclSuccess;
}

/* Cheap unless the file changed: a coarse clock read, and a stat() at most
 * every checkMs. */
static void rules_reload_if_changed(rules_ctx_t* ctx) {
  if (ctx->checkMs > 0) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC_COARSE, &now);
    int64_t ms = (int64_t)(now.tv_sec - ctx->lastCheck.tv_sec) * 1000 + (now.tv_nsec - ctx->lastCheck.tv_nsec) / 1000000;
    if (ms < ctx->checkMs) return;
    ctx->lastCheck = now;
  }
  rules_stamp_t st;
  if (rules_stamp_get(ctx->path, &st) != 0 || rules_stamp_same(&st, &ctx->loaded) || rules_stamp_same(&st, &ctx->rejected))
    return;
  tuner_rules_t fresh;
  char err[512];
  if (tuner_rules_parse_file(ctx->path, &fresh, err, sizeof(err)) != 0) {
    ctx->rejected = st;
    RULES_LOG(ctx, NCCL_LOG_WARN, "TUNER/rules: %s (keeping the %d rules loaded before)", err, ctx->rules.n);
    return;
  }
  tuner_rules_free(&ctx->rules);
  ctx->rules = fresh;
  ctx->loaded = st;
  ctx->lastRule = -1;
  RULES_LOG(ctx, NCCL_LOG_INFO, "TUNER/rules: reloaded %d rules from %s", ctx->rules.n, ctx->path);
}

static ncclResult_t rules_get_coll_info(void* context, ncclFunc_t func, size_t nBytes, int numPipeOps,
                                        float** collCostTable, int numAlgo, int numProto, int regBuff,
                                        int* nChannels) {
  rules_ctx_t* ctx = context;
  rules_reload_if_changed(ctx);
  tuner_rules_query_t q = {func, nBytes, ctx->nRanks, ctx->nNodes, (uint64_t)(numPipeOps > 0 ? numPipeOps : 1), regBuff};
  int i = tuner_rules_match(&ctx->rules, &q);
  ctx->lastRule = i;
  ctx->lastFunc = func;
  ctx->lastBytes = nBytes;
  if (i < 0) return ncclSuccess;
  const tuner_rules_rule_t* r = &ctx->rules.rules[i];
  if (!tuner_rules_apply(r, collCostTable, numAlgo, numProto, nChannels))
    RULES_LOG(ctx, NCCL_LOG_TRACE, "TUNER/rules: rule at %s:%d matches but its algo/proto is not offered",
              ctx->path, r->line);
  return ncclSuccess;
}

static ncclResult_t rules_get_chunk_size(void* context, ncclFunc_t func, size_t nBytes, int algo, int proto,
                                         int nChannels, size_t* chunkSize) {
  (void)nChannels;
  rules_ctx_t* ctx = context;
  if (ctx->lastRule < 0 || ctx->lastFunc != (int)func || ctx->lastBytes != nBytes) return ncclSuccess;
  const tuner_rules_rule_t* r = &ctx->rules.rules[ctx->lastRule];
  if (r->chunkSize && (r->algo < 0 || r->algo == algo) && (r->proto < 0 || r->proto == proto))
    *chunkSize = (size_t)r->chunkSize;
  return ncclSuccess;
}

static ncclResult_t rules_finalize(void* context) {
  rules_ctx_t* ctx = context;
  if (!ctx) return ncclSuccess;
  tuner_rules_free(&ctx->rules);
  free(ctx);
  return ncclSuccess;
}

EXPORT const ncclTuner_v6_t ncclTunerPlugin_v6 = {"tuner-rules", rules_init, rules_get_coll_info, rules_finalize,
                                                   rules_get_chunk_size};
EXPORT const ncclTuner_v5_t ncclTunerPlugin_v5 = {"tuner-rules", rules_init, rules_get_coll_info, rules_finalize};
