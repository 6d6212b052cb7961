/* The rule tuner's rules: what a rule matches and what it sets, the YAML
 * file they come from, and matching.
 *
 * File format (the first rule that matches a collective decides):
 *
 *   rules:
 *     - coll: [allreduce, allgather]  # one name or a list; omitted: any
 *       bytes: [0, 64KiB]             # [min, max] inclusive, or one value
 *       nranks: [2, 64]               # same forms; max may be "inf"
 *       nnodes: 1
 *       pipeops: [1, 8]               # operations in the group
 *       regbuff: true                 # user buffers registered
 *       algo: tree                    # what the rule sets: any of these four
 *       proto: ll
 *       channels: 4
 *       chunksize: 128KiB
 *
 * Sizes take K, M, G, T suffixes (KiB... and KB... too: all powers of
 * 1024). Collectives: broadcast reduce allgather reducescatter allreduce
 * any; algorithms and protocols as NCCL_ALGO / NCCL_PROTO name them. */
#ifndef TUNER_RULES_H
#define TUNER_RULES_H

#include <stddef.h>
#include <stdint.h>

#include "tuner/nccl_tuner.h"

typedef struct {
  uint64_t lo, hi; /* inclusive */
} tuner_rules_range_t;

typedef struct {
  unsigned funcMask;              /* bit per ncclFunc_t */
  tuner_rules_range_t bytes, nRanks, nNodes, pipeOps;
  int regBuff;                    /* -1 any, 0, 1 */
  int algo, proto;                /* -1: not set */
  int nChannels;                  /* 0: not set */
  uint64_t chunkSize;             /* 0: not set */
  int line;                       /* 1-based, where the rule starts */
} tuner_rules_rule_t;

typedef struct {
  tuner_rules_rule_t* rules;
  int n;
} tuner_rules_t;

/* Parse `path`. 0 and *out on success; -1 with "file:line:col: message" in
 * err otherwise (*out untouched). */
int tuner_rules_parse_file(const char* path, tuner_rules_t* out, char* err, size_t errSize);
/* The same over a buffer; `name` stands for the file in messages. */
int tuner_rules_parse_text(const char* name, const char* text, size_t len, tuner_rules_t* out, char* err,
                           size_t errSize);
void tuner_rules_free(tuner_rules_t* rules);

/* What a collective looks like to the rules. */
typedef struct {
  int func;
  uint64_t bytes, nRanks, nNodes, pipeOps;
  int regBuff;
} tuner_rules_query_t;

/* Index of the first rule matching q, -1 if none. */
int tuner_rules_match(const tuner_rules_t* rules, const tuner_rules_query_t* q);

/* Apply a rule's algo/proto/channels to NCCL's cost table (see the plugin
 * for the semantics). Returns 1 when the table or channels changed, 0 when
 * the rule's choice is not offered in the table. */
int tuner_rules_apply(const tuner_rules_rule_t* rule, float** collCostTable, int numAlgo, int numProto,
                      int* nChannels);

#endif
