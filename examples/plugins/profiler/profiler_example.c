/* profiler-example: a profiler plugin that counts the collectives of each
 * communicator, by function, algorithm and protocol, with their bytes, and
 * writes a summary when the communicator ends: to stderr, or appended to
 * the file PROFILER_EXAMPLE_FILE names.
 *
 * How a profiler works (NCCL profiler ABI v5/v6):
 * - init() is called once per communicator; it returns a context and sets
 *   the activation mask: the event types the core should report (read by
 *   the core at every event, so a plugin may change it later through the
 *   pointer).
 * - startEvent() gets a descriptor (type, parent, and a union by type) and
 *   returns a handle; stopEvent() and recordEventState() get that handle
 *   back. A NULL handle means "nothing to stop": this plugin counts at
 *   start and keeps no per-event state.
 * - finalize() ends the context.
 * Events come from several threads (application, proxy): the counts are
 * kept under a lock.
 *
 * Exports ncclProfiler_v6 (mkccl's own version), ncclProfiler_v5 (the
 * newest NCCL 2.28 loads; its Coll descriptor fields are v6's) and
 * mkcclPluginInfo_v1 (the parameter table, for mkccl). */
#define _POSIX_C_SOURCE 200809L /* open, write */
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mkccl_plugin_params.h"
#include "profiler/nccl_profiler.h"

#define PE_EXPORT __attribute__((visibility("default")))

/* ---- parameters ---- */
static const mkcclParamDecl_v1 pe_params[] = {
    {"PROFILER_EXAMPLE_FILE", MKCCL_PARAM_STRING, "",
     "File profiler-example appends its summaries to (default: stderr)"},
};
#define PE_NPARAMS (int)(sizeof(pe_params) / sizeof(pe_params[0]))
static plugin_params_t pe_pp = {NULL, pe_params, PE_NPARAMS};

/* The core binds its services before init; NCCL never calls this. */
static void pe_bind(const mkcclServices_v1* services) { pe_pp.services = services; }

PE_EXPORT const mkcclPluginInfo_v1_t mkcclPluginInfo_v1 = {sizeof(mkcclPluginInfo_v1_t), MKCCL_PLUGIN_ABI_VERSION,
                                                           "profiler-example", "1.0", pe_params, PE_NPARAMS, pe_bind};

/* ---- the counts of one communicator ---- */
#define PE_MAX_ROWS 64

typedef struct {
  char func[24], algo[24], proto[16];
  uint64_t calls, bytes;
} pe_row_t;

typedef struct {
  pthread_mutex_t lock;
  ncclDebugLogger_t log;
  uint64_t commId;
  int rank, nRanks, nNodes;
  uint64_t total;   /* collectives seen */
  uint64_t overflow; /* of those, in no row (more kinds than PE_MAX_ROWS) */
  int nRows;
  pe_row_t rows[PE_MAX_ROWS];
} pe_ctx_t;

/* Bytes of an element of a datatype, by the name the core reports. */
static size_t pe_type_size(const char* datatype) {
  static const struct {
    const char* name;
    size_t size;
  } types[] = {{"ncclInt8", 1},     {"ncclUint8", 1},      {"ncclInt32", 4},      {"ncclUint32", 4},
               {"ncclInt64", 8},    {"ncclUint64", 8},     {"ncclFloat16", 2},    {"ncclFloat32", 4},
               {"ncclFloat64", 8},  {"ncclBfloat16", 2},   {"ncclFloat8e4m3", 1}, {"ncclFloat8e5m2", 1}};
  for (size_t i = 0; datatype && i < sizeof(types) / sizeof(types[0]); i++)
    if (strcmp(types[i].name, datatype) == 0) return types[i].size;
  return 0; /* unknown: counted, no bytes */
}

static const char* pe_str(const char* s) { return s ? s : "?"; }

/* One collective: into the row of its function, algorithm and protocol.
 * The strings belong to the core: they are copied, not kept. */
static void pe_count(pe_ctx_t* ctx, const char* func, const char* algo, const char* proto, size_t count,
                     const char* datatype) {
  func = pe_str(func), algo = pe_str(algo), proto = pe_str(proto);
  pthread_mutex_lock(&ctx->lock);
  ctx->total++;
  pe_row_t* row = NULL;
  for (int i = 0; i < ctx->nRows && !row; i++)
    if (!strcmp(ctx->rows[i].func, func) && !strcmp(ctx->rows[i].algo, algo) && !strcmp(ctx->rows[i].proto, proto))
      row = &ctx->rows[i];
  if (!row && ctx->nRows < PE_MAX_ROWS) {
    row = &ctx->rows[ctx->nRows++];
    snprintf(row->func, sizeof(row->func), "%s", func);
    snprintf(row->algo, sizeof(row->algo), "%s", algo);
    snprintf(row->proto, sizeof(row->proto), "%s", proto);
  }
  if (row) {
    row->calls++;
    row->bytes += (uint64_t)count * pe_type_size(datatype);
  } else {
    ctx->overflow++;
  }
  pthread_mutex_unlock(&ctx->lock);
}

static ncclResult_t pe_init(void** context, uint64_t commId, int* eActivationMask, const char* commName, int nNodes,
                            int nRanks, int rank, ncclDebugLogger_t log) {
  (void)commName;
  pe_ctx_t* ctx = calloc(1, sizeof(*ctx));
  if (!ctx) return ncclSystemError;
  pthread_mutex_init(&ctx->lock, NULL);
  ctx->log = log;
  ctx->commId = commId;
  ctx->rank = rank;
  ctx->nRanks = nRanks;
  ctx->nNodes = nNodes;
  *eActivationMask = ncclProfileColl; /* only collective events; ncclProfileP2p | ... for more */
  if (log)
    log(NCCL_LOG_INFO, NCCL_INIT | NCCL_PROFILE, __FILE__, __LINE__,
        "PROFILER/profiler-example: counting the collectives of rank %d of %d", rank, nRanks);
  *context = ctx;
  return ncclSuccess;
}

static ncclResult_t pe_start_event_v6(void* context, void** eHandle, ncclProfilerEventDescr_v6_t* d) {
  *eHandle = NULL; /* no per-event state: the core calls no stop for it */
  if (d->type == ncclProfileColl)
    pe_count(context, d->coll.func, d->coll.algo, d->coll.proto, d->coll.count, d->coll.datatype);
  return ncclSuccess;
}

static ncclResult_t pe_start_event_v5(void* context, void** eHandle, ncclProfilerEventDescr_v5_t* d) {
  *eHandle = NULL;
  if (d->type == ncclProfileColl)
    pe_count(context, d->coll.func, d->coll.algo, d->coll.proto, d->coll.count, d->coll.datatype);
  return ncclSuccess;
}

static ncclResult_t pe_stop_event(void* eHandle) {
  (void)eHandle;
  return ncclSuccess;
}

static ncclResult_t pe_record_event_state(void* eHandle, ncclProfilerEventState_v6_t eState,
                                          ncclProfilerEventStateArgs_v6_t* eStateArgs) {
  (void)eHandle, (void)eState, (void)eStateArgs;
  return ncclSuccess;
}

/* The summary is built in memory, then written with one write(): ranks
 * appending to one file do not interleave their lines. */
typedef struct {
  char text[8192];
  size_t n;
} pe_text_t;

__attribute__((format(printf, 2, 3))) static void pe_printf(pe_text_t* t, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int w = vsnprintf(t->text + t->n, sizeof(t->text) - t->n, fmt, ap);
  va_end(ap);
  if (w > 0) t->n = t->n + (size_t)w < sizeof(t->text) ? t->n + (size_t)w : sizeof(t->text) - 1; /* truncated */
}

static void pe_write_summary(pe_ctx_t* ctx) {
  pe_text_t t = {.n = 0};
  pe_printf(&t, "profiler-example: rank %d of %d (comm 0x%" PRIx64 "): %" PRIu64 " collectives\n", ctx->rank,
            ctx->nRanks, ctx->commId, ctx->total);
  for (int i = 0; i < ctx->nRows; i++) {
    const pe_row_t* r = &ctx->rows[i];
    pe_printf(&t, "profiler-example:   %-14s %s/%s: %" PRIu64 " calls, %" PRIu64 " bytes\n", r->func, r->algo,
              r->proto, r->calls, r->bytes);
  }
  if (ctx->overflow) pe_printf(&t, "profiler-example:   (%" PRIu64 " more of other kinds)\n", ctx->overflow);
  const char* path = plugin_param_text(&pe_pp, "PROFILER_EXAMPLE_FILE");
  int fd = *path ? open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644) : STDERR_FILENO;
  if (fd < 0) {
    if (ctx->log)
      ctx->log(NCCL_LOG_WARN, NCCL_PROFILE, __FILE__, __LINE__, "PROFILER/profiler-example: cannot open %s", path);
    fd = STDERR_FILENO;
  }
  if (write(fd, t.text, t.n) != (ssize_t)t.n && ctx->log)
    ctx->log(NCCL_LOG_WARN, NCCL_PROFILE, __FILE__, __LINE__, "PROFILER/profiler-example: summary not written");
  if (fd != STDERR_FILENO) close(fd);
}

static ncclResult_t pe_finalize(void* context) {
  pe_ctx_t* ctx = context;
  pe_write_summary(ctx);
  pthread_mutex_destroy(&ctx->lock);
  free(ctx);
  return ncclSuccess;
}

PE_EXPORT const ncclProfiler_v6_t ncclProfiler_v6 = {
    .name = "profiler-example",
    .init = pe_init,
    .startEvent = pe_start_event_v6,
    .stopEvent = pe_stop_event,
    .recordEventState = pe_record_event_state,
    .finalize = pe_finalize,
};

/* v5: the same calls, its own descriptor type (state types are v6's). */
PE_EXPORT const ncclProfiler_v5_t ncclProfiler_v5 = {
    .name = "profiler-example",
    .init = pe_init,
    .startEvent = pe_start_event_v5,
    .stopEvent = pe_stop_event,
    .recordEventState = pe_record_event_state,
    .finalize = pe_finalize,
};
