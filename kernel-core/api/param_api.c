/* NCCL 2.30's parameter API over mkccl's parameter table (base/param.h).
 * A handle names one declared parameter (core or plugin); every read sees
 * its value as mkccl's own lookups do at that moment: environment, then
 * manifest option, then default. The table holds 64-bit integers and
 * strings: the typed getters convert with a range check (a string reads as
 * an integer only where it is one), and every parameter reads as a string.
 * The "published" parameters NCCL lists by default are mkccl's user-level
 * ones; NCCL_PARAM_DUMP_ALL=1 lists every level. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "api/api.h"
#include "base/err.h"
#include "base/param.h"

static const param_decl_t* param_api_decl(ncclParamHandle_t h) { return (const param_decl_t*)(const void*)h; }

MK_API(ncclResult_t, ParamBind, ncclParamHandle_t* out, const char* key) {
  if (!out || !key) return MK_FAIL(ncclInvalidArgument, "ncclParamBind: %s is NULL", out ? "key" : "out");
  const param_decl_t* d = param_decl_find(key);
  if (!d) return MK_FAIL(ncclInvalidArgument, "ncclParamBind: no parameter is named %s (mkccl-info --params)", key);
  *out = (ncclParamHandle_t)(void*)d;
  return ncclSuccess;
}

/* The parameter's value as an integer. */
static ncclResult_t param_api_int(const char* fn, const param_decl_t* d, int64_t* v) {
  if (d->type == MKCCL_PARAM_INT64) {
    param_int_lookup(d->name, v);
    return ncclSuccess;
  }
  const char* text = NULL;
  param_str_lookup(d->name, &text);
  char* end = NULL;
  long long x = text && *text ? strtoll(text, &end, 0) : 0;
  if (!text || !*text || *end)
    return MK_FAIL(ncclInvalidArgument, "%s: %s is \"%s\", not an integer", fn, d->name, text ? text : "");
  *v = x;
  return ncclSuccess;
}

/* One getter per integer type: the value, when it fits the type. */
#define PARAM_GETTER(suffix, ctype, lo, hi)                                                                      \
  MK_API(ncclResult_t, ParamGet##suffix, ncclParamHandle_t h, ctype* out) {                                     \
    const char* fn = "ncclParamGet" #suffix;                                                                     \
    if (!h || !out) return MK_FAIL(ncclInvalidArgument, "%s: %s is NULL", fn, h ? "out" : "the handle");        \
    int64_t v = 0;                                                                                               \
    MK_CHECK(param_api_int(fn, param_api_decl(h), &v));                                                          \
    if (v < (int64_t)(lo) || v > (int64_t)(hi))                                                                  \
      return MK_FAIL(ncclInvalidArgument, "%s: %s is %" PRId64 ", out of the range of " #ctype, fn,             \
                     param_api_decl(h)->name, v);                                                                \
    *out = (ctype)v;                                                                                             \
    return ncclSuccess;                                                                                          \
  }
PARAM_GETTER(I8, int8_t, INT8_MIN, INT8_MAX)
PARAM_GETTER(I16, int16_t, INT16_MIN, INT16_MAX)
PARAM_GETTER(I32, int32_t, INT32_MIN, INT32_MAX)
PARAM_GETTER(I64, int64_t, INT64_MIN, INT64_MAX)
PARAM_GETTER(U8, uint8_t, 0, UINT8_MAX)
PARAM_GETTER(U16, uint16_t, 0, UINT16_MAX)
PARAM_GETTER(U32, uint32_t, 0, UINT32_MAX)
PARAM_GETTER(U64, uint64_t, 0, INT64_MAX)

/* The parameter's value as text, in this thread's buffer for integers
 * (the decimal of what the integer getters read), else the table's text
 * ("" for a string unset with no default). */
static const char* param_api_text(const param_decl_t* d) {
  static __thread char buf[32];
  if (d->type == MKCCL_PARAM_INT64) {
    int64_t v = 0;
    param_int_lookup(d->name, &v);
    snprintf(buf, sizeof(buf), "%" PRId64, v);
    return buf;
  }
  const char* text = NULL;
  param_str_lookup(d->name, &text);
  return text ? text : "";
}

MK_API(ncclResult_t, ParamGetStr, ncclParamHandle_t h, const char** out) {
  if (!h || !out) return MK_FAIL(ncclInvalidArgument, "ncclParamGetStr: %s is NULL", h ? "out" : "the handle");
  *out = param_api_text(param_api_decl(h));
  return ncclSuccess;
}

/* The native bytes: an int64_t, or the string with its terminator. */
MK_API(ncclResult_t, ParamGet, ncclParamHandle_t h, void* out, int maxLen, int* len) {
  if (!h || !out || !len)
    return MK_FAIL(ncclInvalidArgument, "ncclParamGet: %s is NULL", !h ? "the handle" : !out ? "out" : "len");
  const param_decl_t* d = param_api_decl(h);
  int64_t v = 0;
  const char* text = NULL;
  if (d->type == MKCCL_PARAM_INT64)
    param_int_lookup(d->name, &v);
  else
    text = param_api_text(d);
  size_t need = text ? strlen(text) + 1 : sizeof(v);
  if (maxLen < 0 || (size_t)maxLen < need) {
    *len = (int)need;
    return MK_FAIL(ncclInvalidArgument, "ncclParamGet: %s takes %zu bytes, the buffer has %d", d->name, need, maxLen);
  }
  memcpy(out, text ? (const void*)text : (const void*)&v, need);
  *len = (int)need;
  return ncclSuccess;
}

MK_API(ncclResult_t, ParamGetParameter, const char* key, const char** value, int* valueLen) {
  const char* fn = "ncclParamGetParameter";
  if (!key || !value || !valueLen)
    return MK_FAIL(ncclInvalidArgument, "%s: %s is NULL", fn, !key ? "key" : !value ? "value" : "valueLen");
  const param_decl_t* d = param_decl_find(key);
  if (!d) return MK_FAIL(ncclInvalidArgument, "%s: no parameter is named %s (mkccl-info --params)", fn, key);
  const char* text = param_api_text(d);
  *value = text;
  *valueLen = (int)strlen(text);
  return ncclSuccess;
}

/* NCCL_PARAM_DUMP_ALL: 1/T/TRUE (any case). */
static int param_api_all(void) {
  const char* v = param_NCCL_PARAM_DUMP_ALL();
  return !strcmp(v, "1") || !strcasecmp(v, "t") || !strcasecmp(v, "true");
}

typedef struct {
  int all;
  int n;
  const char* keys[PARAM_TABLE_MAX];
} param_api_keys_t;

static void param_api_key_visit(const param_decl_t* d, const char* value, param_source_t source, const char* where,
                                void* arg) {
  (void)value, (void)source, (void)where;
  param_api_keys_t* k = arg;
  if ((k->all || d->level == PARAM_LEVEL_USER) && k->n < PARAM_TABLE_MAX)
    k->keys[k->n++] = d->name; /* declarations (and their names) live as long as the process */
}

MK_API(ncclResult_t, ParamGetAllParameterKeys, const char*** table, int* tableLen) {
  if (!table || !tableLen)
    return MK_FAIL(ncclInvalidArgument, "ncclParamGetAllParameterKeys: %s is NULL", table ? "tableLen" : "table");
  static __thread param_api_keys_t keys; /* valid until this thread's next call */
  keys.all = param_api_all();
  keys.n = 0;
  param_foreach(param_api_key_visit, &keys);
  *table = keys.keys;
  *tableLen = keys.n;
  return ncclSuccess;
}

static const char* param_api_source_name(param_source_t s) {
  return s == PARAM_FROM_ENV ? "Env" : s == PARAM_FROM_MANIFEST ? "Manifest" : "Default";
}

static void param_api_dump_visit(const param_decl_t* d, const char* value, param_source_t source, const char* where,
                                 void* arg) {
  (void)value;
  if (!*(const int*)arg && d->level != PARAM_LEVEL_USER) return;
  const char* def = d->defaultValue && *d->defaultValue ? d->defaultValue : "<unset>";
  const char* now = param_api_text(d);
  MK_INFO(NCCL_ENV, "%s (%s) [%s, %s] %s; current value=%s set_by=%s%s%s default=%s", d->name,
          d->type == MKCCL_PARAM_INT64 ? "int64" : "string", param_level_name(d->level), d->owner, d->help,
          *now ? now : "<unset>", param_api_source_name(source), source == PARAM_FROM_MANIFEST ? " " : "",
          source == PARAM_FROM_MANIFEST ? where : "", def);
}

MK_API(void, ParamDumpAll, void) {
  int all = param_api_all();
  param_foreach(param_api_dump_visit, &all);
}
