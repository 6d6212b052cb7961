/* The Chrome trace (JSON object format, "X" complete events, one per line)
 * of one rank: pid = rank; lanes (tid) for groups, API calls, collectives,
 * each proxy connection (channel, peer, direction) and its steps by slot,
 * and kernel channels, each named by a thread_name record. Proxy steps
 * carry their states as nested slices. Timestamps are wall-clock
 * microseconds, so ranks' files merge (tools/mkccl-trace-merge). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profiler.h"

enum { LANE_GROUP = 1, LANE_API = 2, LANE_COLL = 3, LANE_PROXY = 4, LANE_STEPS = 5, LANE_KERNEL = 100,
       LANE_CONN = 1000, LANE_CONN_STRIDE = 16 };

typedef struct {
  int channel, peer, isSend;
} trace_conn_t;

typedef struct {
  FILE* f;
  profiler_ctx_t* ctx;
  int nEvents; /* lines written so far: the separator goes before all but the first */
  trace_conn_t* conns;
  int nConns, capConns;
  uint64_t kernelLanes[4]; /* bit per kernel channel lane already named */
} trace_t;

static void trace_str(FILE* f, const char* s) {
  fputc('"', f);
  for (; s && *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\') fprintf(f, "\\%c", c);
    else if (c < 0x20) fprintf(f, "\\u%04x", c);
    else fputc(c, f);
  }
  fputc('"', f);
}

static void trace_us(FILE* f, uint64_t ns) { fprintf(f, "%llu.%03llu", (unsigned long long)(ns / 1000), (unsigned long long)(ns % 1000)); }

static void trace_sep(trace_t* t) { fputs(t->nEvents++ ? ",\n" : "\n", t->f); }

static void trace_lane_name(trace_t* t, int tid, const char* name) {
  trace_sep(t);
  fprintf(t->f, "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":%d,\"args\":{\"name\":", t->ctx->rank, tid);
  trace_str(t->f, name);
  fputs("}}", t->f);
}

/* The lane of a proxy connection, named the first time it is seen. */
static int trace_conn_lane(trace_t* t, const profiler_event_t* op) {
  for (int i = 0; i < t->nConns; i++)
    if (t->conns[i].channel == op->op.channel && t->conns[i].peer == op->op.peer && t->conns[i].isSend == op->op.isSend)
      return LANE_CONN + i * LANE_CONN_STRIDE;
  if (t->nConns == t->capConns) {
    int cap = t->capConns ? t->capConns * 2 : 16;
    trace_conn_t* c = realloc(t->conns, (size_t)cap * sizeof(*c));
    if (!c) return LANE_PROXY;
    t->conns = c;
    t->capConns = cap;
  }
  t->conns[t->nConns] = (trace_conn_t){op->op.channel, op->op.peer, op->op.isSend};
  int lane = LANE_CONN + t->nConns++ * LANE_CONN_STRIDE;
  char name[96];
  snprintf(name, sizeof(name), "ch%d %s %d", op->op.channel, op->op.isSend ? "send ->" : "recv <-", op->op.peer);
  trace_lane_name(t, lane, name);
  for (int s = 0; s < 8; s++) {
    snprintf(name, sizeof(name), "ch%d %s %d: steps slot %d", op->op.channel, op->op.isSend ? "send ->" : "recv <-",
             op->op.peer, s);
    trace_lane_name(t, lane + 1 + s, name);
  }
  return lane;
}

static int trace_lane(trace_t* t, const profiler_event_t* e) {
  switch (e->type) {
    case ncclProfileGroup: return LANE_GROUP;
    case ncclProfileGroupApi:
    case ncclProfileCollApi:
    case ncclProfileP2pApi:
    case ncclProfileKernelLaunch: return LANE_API;
    case ncclProfileColl:
    case ncclProfileP2p: return LANE_COLL;
    case ncclProfileProxyCtrl: return LANE_PROXY;
    case ncclProfileProxyOp: return trace_conn_lane(t, e);
    case ncclProfileProxyStep:
      if (!e->parent || e->parent->type != ncclProfileProxyOp) return LANE_STEPS;
      return trace_conn_lane(t, e->parent) + 1 + (e->step.step % 8);
    case ncclProfileKernelCh: {
      int ch = e->net.channel & 255;
      if (!(t->kernelLanes[ch / 64] & (1ull << (ch % 64)))) {
        char name[32];
        snprintf(name, sizeof(name), "kernel ch%d", ch);
        trace_lane_name(t, LANE_KERNEL + ch, name);
        t->kernelLanes[ch / 64] |= 1ull << (ch % 64);
      }
      return LANE_KERNEL + ch;
    }
    case ncclProfileNetPlugin: return e->parent ? trace_lane(t, e->parent) : LANE_STEPS;
    default: return LANE_PROXY;
  }
}

static const char* trace_cat(uint64_t type) {
  switch (type) {
    case ncclProfileGroup: return "group";
    case ncclProfileColl: return "coll";
    case ncclProfileP2p: return "p2p";
    case ncclProfileProxyOp: return "proxyop";
    case ncclProfileProxyStep: return "proxystep";
    case ncclProfileProxyCtrl: return "proxyctrl";
    case ncclProfileKernelCh: return "kernelch";
    case ncclProfileNetPlugin: return "net";
    case ncclProfileGroupApi: return "groupapi";
    case ncclProfileCollApi: return "collapi";
    case ncclProfileP2pApi: return "p2papi";
    case ncclProfileKernelLaunch: return "kernellaunch";
    default: return "other";
  }
}

static void trace_slice(trace_t* t, const char* name, const char* cat, int tid, uint64_t start, uint64_t end) {
  trace_sep(t);
  fputs("{\"name\":", t->f);
  trace_str(t->f, name);
  fprintf(t->f, ",\"cat\":\"%s\",\"ph\":\"X\",\"pid\":%d,\"tid\":%d,\"ts\":", cat, t->ctx->rank, tid);
  trace_us(t->f, start + (uint64_t)t->ctx->wallOffsetNs);
  fputs(",\"dur\":", t->f);
  trace_us(t->f, end > start ? end - start : 0);
}

static void trace_event(trace_t* t, const profiler_event_t* e, uint64_t end, int open) {
  FILE* f = t->f;
  int tid = trace_lane(t, e);
  char name[96];
  switch (e->type) {
    case ncclProfileProxyOp:
      snprintf(name, sizeof(name), "%s ch%d %s %d", e->op.isSend ? "send" : "recv", e->op.channel,
               e->op.isSend ? "->" : "<-", e->op.peer);
      break;
    case ncclProfileProxyStep: snprintf(name, sizeof(name), "step %d", e->step.step); break;
    case ncclProfileColl:
    case ncclProfileP2p:
    case ncclProfileCollApi:
    case ncclProfileP2pApi: snprintf(name, sizeof(name), "%s", e->coll.func ? e->coll.func : "?"); break;
    default: snprintf(name, sizeof(name), "%s", trace_cat(e->type)); break;
  }
  if (e->type == ncclProfileCollApi || e->type == ncclProfileP2pApi)
    snprintf(name, sizeof(name), "%s()", e->api.func ? e->api.func : "?");
  trace_slice(t, name, trace_cat(e->type), tid, e->start, end);
  fprintf(f, ",\"args\":{\"open\":%d", open);
  switch (e->type) {
    case ncclProfileColl:
    case ncclProfileP2p:
      fprintf(f, ",\"seq\":%llu,\"count\":%zu,\"%s\":%d,\"nChannels\":%d,\"datatype\":",
              (unsigned long long)e->coll.seq, e->coll.count, e->type == ncclProfileP2p ? "peer" : "root",
              e->coll.root, e->coll.nChannels);
      trace_str(f, e->coll.datatype);
      if (e->type == ncclProfileColl) {
        fputs(",\"algo\":", f);
        trace_str(f, e->coll.algo);
        fputs(",\"proto\":", f);
        trace_str(f, e->coll.proto);
      }
      break;
    case ncclProfileProxyOp:
      fprintf(f, ",\"channel\":%d,\"peer\":%d,\"nSteps\":%d,\"chunkSize\":%d", e->op.channel, e->op.peer,
              e->op.nSteps, e->op.chunkSize);
      break;
    case ncclProfileProxyStep: fprintf(f, ",\"transSize\":%zu", e->step.transSize); break;
    case ncclProfileNetPlugin:
      fprintf(f, ",\"pluginId\":\"0x%llx\",\"length\":%zu", (unsigned long long)e->net.id, e->net.length);
      break;
    case ncclProfileGroupApi: fprintf(f, ",\"depth\":%d", e->api.depth); break;
    case ncclProfileCollApi:
    case ncclProfileP2pApi: fprintf(f, ",\"count\":%zu", e->api.count); break;
    default: break;
  }
  fputs("}}", f);
  if (e->type == ncclProfileProxyStep) {
    /* Each recorded state lasts until the next one, or the step's end. */
    static const char* const names[PROFILER_STEP_STATES] = {"SendGPUWait",   "SendPeerWait",  "SendWait",
                                                            "RecvWait",      "RecvFlushWait", "RecvGPUWait"};
    for (int i = 0; i < PROFILER_STEP_STATES; i++) {
      uint64_t s = e->step.stateTs[i], until = end;
      if (!s) continue;
      for (int j = 0; j < PROFILER_STEP_STATES; j++)
        if (e->step.stateTs[j] > s && e->step.stateTs[j] < until) until = e->step.stateTs[j];
      trace_slice(t, names[i], "state", tid, s, until);
      fputs("}", f);
    }
  }
}

uint64_t* profiler_ends_compute(profiler_ctx_t* ctx) {
  uint64_t n = profiler_event_count(ctx), now = profiler_now();
  uint64_t* ends = calloc(n ? n : 1, sizeof(*ends));
  if (!ends) return NULL;
  for (uint64_t i = 0; i < n; i++) {
    profiler_event_t* e = profiler_event_at(ctx, i);
    ends[i] = e && e->type ? (e->stop ? e->stop : now) : 0;
  }
  for (uint64_t i = n; i-- > 0;) {
    profiler_event_t* e = profiler_event_at(ctx, i);
    if (e && e->parent && e->parent->index < i && ends[e->parent->index] < ends[i]) ends[e->parent->index] = ends[i];
  }
  return ends;
}

int profiler_trace_write(profiler_ctx_t* ctx, const char* path) {
  uint64_t n = profiler_event_count(ctx);
  uint64_t* ends = profiler_ends_compute(ctx);
  FILE* f = ends ? fopen(path, "w") : NULL;
  if (!f) {
    free(ends);
    return -1;
  }
  setvbuf(f, NULL, _IOFBF, 1 << 20);
  trace_t t = {f, ctx, 0, NULL, 0, 0, {0}};
  fputs("{\"traceEvents\":[", f);
  char name[256];
  snprintf(name, sizeof(name), "rank %d (%s)", ctx->rank, ctx->commName[0] ? ctx->commName : "comm");
  trace_sep(&t);
  fprintf(f, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":0,\"args\":{\"name\":", ctx->rank);
  trace_str(f, name);
  fputs("}}", f);
  static const struct { int tid; const char* name; } lanes[] = {
      {LANE_GROUP, "groups"}, {LANE_API, "API calls"}, {LANE_COLL, "collectives and p2p"},
      {LANE_PROXY, "proxy"},  {LANE_STEPS, "proxy steps"}};
  for (unsigned i = 0; i < sizeof(lanes) / sizeof(lanes[0]); i++) trace_lane_name(&t, lanes[i].tid, lanes[i].name);
  for (uint64_t i = 0; i < n; i++) {
    profiler_event_t* e = profiler_event_at(ctx, i);
    if (e && e->type) trace_event(&t, e, ends[i], e->stop == 0);
  }
  fprintf(f, "\n],\"displayTimeUnit\":\"ns\",\"otherData\":{\"rank\":%d,\"nRanks\":%d,\"commId\":\"%016llx\","
             "\"events\":%llu,\"dropped\":%llu}}\n",
          ctx->rank, ctx->nRanks, (unsigned long long)ctx->commId, (unsigned long long)n,
          (unsigned long long)atomic_load(&ctx->dropped));
  free(t.conns);
  free(ends);
  return fclose(f) == 0 ? 0 : -1;
}
