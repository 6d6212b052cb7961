/* NCCL_ALGO / NCCL_PROTO parsing (syntax in tune_filter.h). */
#include "tune/tune_filter.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "costmodel/costmodel_names.h"

void tune_filter_init(tune_filter_t* f) { memset(f, 1, sizeof(*f)); }

static const char* filter_skip_space(const char* s, const char* end) {
  while (s < end && isspace((unsigned char)*s)) s++;
  return s;
}

static size_t filter_trim_len(const char* s, const char* end) {
  while (end > s && isspace((unsigned char)end[-1])) end--;
  return (size_t)(end - s);
}

/* One name of the list into mask[]; -1 for an unknown name. */
static int filter_name_mark(tune_filter_kind_t kind, const char* w, size_t len, uint8_t* mask) {
  if (kind == TUNE_FILTER_PROTO) {
    int p = costmodel_proto_parse(w, len);
    if (p < 0) return -1;
    mask[p] = 1;
    return 0;
  }
  if (len == 7 && strncasecmp(w, "collnet", 7) == 0) {
    mask[NCCL_ALGO_COLLNET_DIRECT] = mask[NCCL_ALGO_COLLNET_CHAIN] = 1;
    return 0;
  }
  int a = costmodel_algo_parse(w, len);
  if (a < 0) return -1;
  mask[a] = 1;
  return 0;
}

/* "[^]name,name" over [s, end) into allowed[]. */
static int filter_list_parse(const char* text, tune_filter_kind_t kind, const char* s, const char* end, uint8_t* allowed,
                             int n, char* err, size_t errSize) {
  uint8_t listed[NCCL_NUM_ALGORITHMS] = {0};
  s = filter_skip_space(s, end);
  int exclude = s < end && *s == '^';
  if (exclude) s++;
  const char* what = kind == TUNE_FILTER_ALGO ? "algorithm" : "protocol";
  if (filter_skip_space(s, end) == end) {
    snprintf(err, errSize, "empty %s list at offset %d", what, (int)(s - text));
    return -1;
  }
  while (s < end) {
    s = filter_skip_space(s, end);
    const char* comma = s < end ? memchr(s, ',', (size_t)(end - s)) : NULL;
    const char* wend = comma ? comma : end;
    size_t len = filter_trim_len(s, wend);
    if (len == 0 || filter_name_mark(kind, s, len, listed) != 0) {
      snprintf(err, errSize, "unknown %s '%.*s' at offset %d", what, (int)len, s, (int)(s - text));
      return -1;
    }
    s = comma ? comma + 1 : end;
  }
  for (int i = 0; i < n; i++) allowed[i] = (uint8_t)(exclude ? !listed[i] : listed[i]);
  return 0;
}

int tune_filter_parse(const char* text, tune_filter_kind_t kind, tune_filter_t* f, char* err, size_t errSize) {
  if (!text || !*text) return 0;
  tune_filter_t out = *f;
  int n = kind == TUNE_FILTER_ALGO ? NCCL_NUM_ALGORITHMS : NCCL_NUM_PROTOCOLS;
  const char* s = text;
  const char* end = text + strlen(text);
  while (s < end) {
    const char* semi = memchr(s, ';', (size_t)(end - s));
    const char* eend = semi ? semi : end;
    const char* colon = memchr(s, ':', (size_t)(eend - s));
    int funcLo = 0, funcHi = ncclNumFuncs - 1;
    const char* list = s;
    if (colon) {
      const char* fs = filter_skip_space(s, colon);
      size_t flen = filter_trim_len(fs, colon);
      int func = costmodel_func_parse(fs, flen);
      if (func < 0) {
        snprintf(err, errSize, "unknown collective '%.*s' at offset %d", (int)flen, fs, (int)(fs - text));
        return -1;
      }
      funcLo = funcHi = func;
      list = colon + 1;
    }
    if (filter_skip_space(list, eend) < eend || colon) {
      uint8_t allowed[NCCL_NUM_ALGORITHMS];
      if (filter_list_parse(text, kind, list, eend, allowed, n, err, errSize) != 0) return -1;
      for (int fn = funcLo; fn <= funcHi; fn++)
        memcpy(kind == TUNE_FILTER_ALGO ? out.algo[fn] : out.proto[fn], allowed, (size_t)n);
    }
    s = semi ? semi + 1 : end;
  }
  *f = out;
  return 0;
}
