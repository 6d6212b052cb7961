/* Matching a collective against the rules, and applying a rule to NCCL's
 * cost table. */
#include "tuner_rules.h"

static int rules_in(const tuner_rules_range_t* r, uint64_t v) { return v >= r->lo && v <= r->hi; }

int tuner_rules_match(const tuner_rules_t* rules, const tuner_rules_query_t* q) {
  if (q->func < 0 || q->func >= ncclNumFuncs) return -1;
  for (int i = 0; i < rules->n; i++) {
    const tuner_rules_rule_t* r = &rules->rules[i];
    if (!(r->funcMask & (1u << q->func))) continue;
    if (!rules_in(&r->bytes, q->bytes) || !rules_in(&r->nRanks, q->nRanks) || !rules_in(&r->nNodes, q->nNodes) ||
        !rules_in(&r->pipeOps, q->pipeOps))
      continue;
    if (r->regBuff >= 0 && r->regBuff != (q->regBuff != 0)) continue;
    return i;
  }
  return -1;
}

/* algo and proto: that cell is forced (0). algo alone: the other
 * algorithms are disabled, the algorithm's protocols keep their costs.
 * proto alone: likewise for protocols. Nothing changes when the rule's
 * choice is not offered (every cell it would keep is -1). */
int tuner_rules_apply(const tuner_rules_rule_t* rule, float** collCostTable, int numAlgo, int numProto,
                      int* nChannels) {
  float(*t)[NCCL_NUM_PROTOCOLS] = (float(*)[NCCL_NUM_PROTOCOLS])collCostTable;
  const float ignore = (float)NCCL_ALGO_PROTO_IGNORE;
  int changed = 0;
  if (numProto != NCCL_NUM_PROTOCOLS || rule->algo >= numAlgo) return 0;
  if (rule->algo >= 0 || rule->proto >= 0) {
    int offered = 0;
    for (int a = 0; a < numAlgo; a++)
      for (int p = 0; p < numProto; p++)
        offered |= t[a][p] != ignore && (rule->algo < 0 || a == rule->algo) && (rule->proto < 0 || p == rule->proto);
    if (!offered) return 0;
    for (int a = 0; a < numAlgo; a++) {
      for (int p = 0; p < numProto; p++) {
        int keep = (rule->algo < 0 || a == rule->algo) && (rule->proto < 0 || p == rule->proto);
        if (!keep) t[a][p] = ignore;
        else if (rule->algo >= 0 && rule->proto >= 0) t[a][p] = 0.0f;
      }
    }
    changed = 1;
  }
  if (rule->nChannels > 0) {
    *nChannels = rule->nChannels;
    changed = 1;
  }
  return changed || rule->chunkSize > 0;
}
