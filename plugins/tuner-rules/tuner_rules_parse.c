/* Reading the rules file (format in tuner_rules.h) with libyaml. Every
 * error names file:line:col (1-based) and what was expected there. */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <yaml.h>

#include "costmodel/costmodel_names.h"
#include "tuner_rules.h"

typedef struct {
  const char* name;
  yaml_document_t* doc;
  char* err;
  size_t errSize;
} rules_parser_t;

static int rules_fail(rules_parser_t* ps, const yaml_node_t* at, const char* fmt, ...) {
  int n = snprintf(ps->err, ps->errSize, "%s:%zu:%zu: ", ps->name, at ? at->start_mark.line + 1 : 1,
                   at ? at->start_mark.column + 1 : 1);
  if (n < 0 || (size_t)n >= ps->errSize) return -1;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(ps->err + n, ps->errSize - (size_t)n, fmt, ap);
  va_end(ap);
  return -1;
}

static const char* rules_scalar(const yaml_node_t* node) {
  return node && node->type == YAML_SCALAR_NODE ? (const char*)node->data.scalar.value : NULL;
}

/* "64KiB", "1M", "inf": 0 and *v, -1 if not a size. */
static int rules_size_parse(const char* s, int allowInf, uint64_t* v) {
  if (allowInf && (strcasecmp(s, "inf") == 0 || strcasecmp(s, "max") == 0)) {
    *v = UINT64_MAX;
    return 0;
  }
  if (!isdigit((unsigned char)*s)) return -1;
  errno = 0;
  char* end = NULL;
  unsigned long long x = strtoull(s, &end, 10);
  if (errno) return -1;
  int shift = 0;
  switch (toupper((unsigned char)*end)) {
    case 'K': shift = 10; break;
    case 'M': shift = 20; break;
    case 'G': shift = 30; break;
    case 'T': shift = 40; break;
    case '\0': break;
    default: return -1;
  }
  if (shift) {
    end++;
    if (strcasecmp(end, "") != 0 && strcasecmp(end, "B") != 0 && strcasecmp(end, "iB") != 0) return -1;
    if (x > (UINT64_MAX >> shift)) return -1;
  } else if (*end) {
    return -1;
  }
  *v = (uint64_t)x << shift;
  return 0;
}

static int rules_range_parse(rules_parser_t* ps, const yaml_node_t* node, const char* key, tuner_rules_range_t* r) {
  const char* expect = "a number or [min, max]";
  if (node->type == YAML_SCALAR_NODE) {
    uint64_t v;
    if (rules_size_parse(rules_scalar(node), 0, &v) != 0)
      return rules_fail(ps, node, "%s: expected %s, got '%s'", key, expect, rules_scalar(node));
    r->lo = r->hi = v;
    return 0;
  }
  if (node->type != YAML_SEQUENCE_NODE || node->data.sequence.items.top - node->data.sequence.items.start != 2)
    return rules_fail(ps, node, "%s: expected %s", key, expect);
  uint64_t v[2];
  for (int i = 0; i < 2; i++) {
    const yaml_node_t* item = yaml_document_get_node(ps->doc, node->data.sequence.items.start[i]);
    const char* s = rules_scalar(item);
    if (!s || rules_size_parse(s, i == 1, &v[i]) != 0)
      return rules_fail(ps, item, "%s: expected a number%s, got '%s'", key, i == 1 ? " or inf" : "", s ? s : "");
  }
  if (v[0] > v[1]) return rules_fail(ps, node, "%s: range [%s, %s] is empty (min > max)", key,
                                     rules_scalar(yaml_document_get_node(ps->doc, node->data.sequence.items.start[0])),
                                     rules_scalar(yaml_document_get_node(ps->doc, node->data.sequence.items.start[1])));
  r->lo = v[0];
  r->hi = v[1];
  return 0;
}

static int rules_coll_one(rules_parser_t* ps, const yaml_node_t* node, unsigned* mask) {
  const char* s = rules_scalar(node);
  int f = s ? costmodel_func_parse(s, strlen(s)) : -1;
  if (s && strcasecmp(s, "any") == 0) {
    *mask |= (1u << ncclNumFuncs) - 1;
    return 0;
  }
  if (f < 0 || f >= ncclFuncSendRecv)
    return rules_fail(ps, node, "coll: expected a collective (allreduce, allgather, reducescatter, broadcast, "
                      "reduce, any), got '%s'", s ? s : "");
  *mask |= 1u << f;
  return 0;
}

static int rules_coll_parse(rules_parser_t* ps, const yaml_node_t* node, unsigned* mask) {
  *mask = 0;
  if (node->type == YAML_SCALAR_NODE) return rules_coll_one(ps, node, mask);
  if (node->type != YAML_SEQUENCE_NODE || node->data.sequence.items.top == node->data.sequence.items.start)
    return rules_fail(ps, node, "coll: expected a collective or a list of them");
  for (yaml_node_item_t* it = node->data.sequence.items.start; it < node->data.sequence.items.top; it++)
    if (rules_coll_one(ps, yaml_document_get_node(ps->doc, *it), mask) != 0) return -1;
  return 0;
}

static int rules_bool_parse(rules_parser_t* ps, const yaml_node_t* node, int* v) {
  const char* s = rules_scalar(node);
  if (s && (strcasecmp(s, "true") == 0 || strcmp(s, "1") == 0 || strcasecmp(s, "yes") == 0)) *v = 1;
  else if (s && (strcasecmp(s, "false") == 0 || strcmp(s, "0") == 0 || strcasecmp(s, "no") == 0)) *v = 0;
  else return rules_fail(ps, node, "regbuff: expected true or false, got '%s'", s ? s : "");
  return 0;
}

static int rules_key_value(rules_parser_t* ps, const char* key, const yaml_node_t* keyNode, const yaml_node_t* val,
                           tuner_rules_rule_t* r) {
  const char* s = rules_scalar(val);
  if (strcmp(key, "coll") == 0) return rules_coll_parse(ps, val, &r->funcMask);
  if (strcmp(key, "bytes") == 0) return rules_range_parse(ps, val, key, &r->bytes);
  if (strcmp(key, "nranks") == 0) return rules_range_parse(ps, val, key, &r->nRanks);
  if (strcmp(key, "nnodes") == 0) return rules_range_parse(ps, val, key, &r->nNodes);
  if (strcmp(key, "pipeops") == 0) return rules_range_parse(ps, val, key, &r->pipeOps);
  if (strcmp(key, "regbuff") == 0) return rules_bool_parse(ps, val, &r->regBuff);
  if (strcmp(key, "algo") == 0) {
    r->algo = s ? costmodel_algo_parse(s, strlen(s)) : -1;
    if (r->algo < 0)
      return rules_fail(ps, val, "algo: expected an algorithm (tree, ring, collnetdirect, collnetchain, nvls, "
                        "nvlstree, pat), got '%s'", s ? s : "");
    return 0;
  }
  if (strcmp(key, "proto") == 0) {
    r->proto = s ? costmodel_proto_parse(s, strlen(s)) : -1;
    if (r->proto < 0) return rules_fail(ps, val, "proto: expected a protocol (ll, ll128, simple), got '%s'", s ? s : "");
    return 0;
  }
  if (strcmp(key, "channels") == 0) {
    uint64_t v = 0;
    if (!s || rules_size_parse(s, 0, &v) != 0 || v < 1 || v > 64)
      return rules_fail(ps, val, "channels: expected a channel count 1..64, got '%s'", s ? s : "");
    r->nChannels = (int)v;
    return 0;
  }
  if (strcmp(key, "chunksize") == 0) {
    if (!s || rules_size_parse(s, 0, &r->chunkSize) != 0 || r->chunkSize == 0)
      return rules_fail(ps, val, "chunksize: expected a size in bytes (e.g. 128KiB), got '%s'", s ? s : "");
    return 0;
  }
  return rules_fail(ps, keyNode, "unknown key '%s' (expected coll, bytes, nranks, nnodes, pipeops, regbuff, algo, "
                    "proto, channels or chunksize)", key);
}

static int rules_rule_parse(rules_parser_t* ps, const yaml_node_t* node, tuner_rules_rule_t* r) {
  if (node->type != YAML_MAPPING_NODE) return rules_fail(ps, node, "expected a rule (a mapping of keys)");
  const tuner_rules_range_t all = {0, UINT64_MAX};
  *r = (tuner_rules_rule_t){(1u << ncclNumFuncs) - 1, all, all, all, all, -1, -1, -1, 0, 0,
                            (int)node->start_mark.line + 1};
  unsigned seen = 0;
  static const char* const keys[] = {"coll", "bytes", "nranks", "nnodes", "pipeops",
                                     "regbuff", "algo", "proto", "channels", "chunksize"};
  for (yaml_node_pair_t* p = node->data.mapping.pairs.start; p < node->data.mapping.pairs.top; p++) {
    const yaml_node_t* k = yaml_document_get_node(ps->doc, p->key);
    const yaml_node_t* v = yaml_document_get_node(ps->doc, p->value);
    const char* key = rules_scalar(k);
    if (!key) return rules_fail(ps, k, "expected a key name");
    for (unsigned i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
      if (strcmp(key, keys[i]) != 0) continue;
      if (seen & (1u << i)) return rules_fail(ps, k, "key '%s' appears twice in this rule", key);
      seen |= 1u << i;
    }
    if (rules_key_value(ps, key, k, v, r) != 0) return -1;
  }
  if (r->algo < 0 && r->proto < 0 && r->nChannels == 0 && r->chunkSize == 0)
    return rules_fail(ps, node, "this rule sets nothing (expected algo, proto, channels or chunksize)");
  return 0;
}

static int rules_doc_parse(rules_parser_t* ps, tuner_rules_t* out) {
  const yaml_node_t* root = yaml_document_get_root_node(ps->doc);
  if (!root) return rules_fail(ps, NULL, "empty file: expected 'rules:' and a list of rules");
  const yaml_node_t* list = NULL;
  if (root->type == YAML_MAPPING_NODE) {
    for (yaml_node_pair_t* p = root->data.mapping.pairs.start; p < root->data.mapping.pairs.top; p++) {
      const yaml_node_t* k = yaml_document_get_node(ps->doc, p->key);
      const char* key = rules_scalar(k);
      if (key && strcmp(key, "rules") == 0) list = yaml_document_get_node(ps->doc, p->value);
      else return rules_fail(ps, k, "unknown key '%s' (expected 'rules')", key ? key : "");
    }
  }
  if (!list) return rules_fail(ps, root, "expected a mapping with 'rules:' and a list of rules");
  if (list->type != YAML_SEQUENCE_NODE) return rules_fail(ps, list, "rules: expected a list of rules");
  int n = (int)(list->data.sequence.items.top - list->data.sequence.items.start);
  tuner_rules_rule_t* rules = calloc(n ? (size_t)n : 1, sizeof(*rules));
  if (!rules) return rules_fail(ps, list, "out of memory");
  for (int i = 0; i < n; i++) {
    if (rules_rule_parse(ps, yaml_document_get_node(ps->doc, list->data.sequence.items.start[i]), &rules[i]) != 0) {
      free(rules);
      return -1;
    }
  }
  out->rules = rules;
  out->n = n;
  return 0;
}

int tuner_rules_parse_text(const char* name, const char* text, size_t len, tuner_rules_t* out, char* err,
                           size_t errSize) {
  rules_parser_t ps = {name, NULL, err, errSize};
  yaml_parser_t parser;
  yaml_document_t doc;
  if (!yaml_parser_initialize(&parser)) return rules_fail(&ps, NULL, "cannot start the YAML parser");
  yaml_parser_set_input_string(&parser, (const unsigned char*)text, len);
  int res = -1;
  if (!yaml_parser_load(&parser, &doc)) {
    snprintf(err, errSize, "%s:%zu:%zu: YAML syntax: %s", name, parser.problem_mark.line + 1,
             parser.problem_mark.column + 1, parser.problem ? parser.problem : "malformed");
  } else {
    ps.doc = &doc;
    tuner_rules_t parsed = {NULL, 0};
    res = rules_doc_parse(&ps, &parsed);
    if (res == 0) *out = parsed;
    yaml_document_delete(&doc);
  }
  yaml_parser_delete(&parser);
  return res;
}

int tuner_rules_parse_file(const char* path, tuner_rules_t* out, char* err, size_t errSize) {
  FILE* f = fopen(path, "rb");
  if (!f) {
    snprintf(err, errSize, "%s: cannot open: %s", path, strerror(errno));
    return -1;
  }
  char* text = NULL;
  size_t len = 0, cap = 0;
  for (;;) {
    if (len == cap) {
      size_t ncap = cap ? cap * 2 : 4096;
      char* t = realloc(text, ncap);
      if (!t) break;
      text = t;
      cap = ncap;
    }
    size_t got = fread(text + len, 1, cap - len, f);
    len += got;
    if (got == 0) break;
  }
  int readErr = ferror(f) || !text;
  fclose(f);
  if (readErr) {
    free(text);
    snprintf(err, errSize, "%s: cannot read", path);
    return -1;
  }
  int res = tuner_rules_parse_text(path, text, len, out, err, errSize);
  free(text);
  return res;
}

void tuner_rules_free(tuner_rules_t* rules) {
  if (!rules) return;
  free(rules->rules);
  rules->rules = NULL;
  rules->n = 0;
}
