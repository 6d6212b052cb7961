/* Fuzz target: the rule tuner's file (YAML, reloaded when it changes), then
 * matching a few shapes against whatever it accepted. */
#include <stddef.h>
#include <stdint.h>

#include "tuner_rules.h"

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  tuner_rules_t rules = {0};
  char err[256];
  if (tuner_rules_parse_text("fuzz.yaml", (const char*)data, size, &rules, err, sizeof(err)) != 0) return 0;
  for (int f = 0; f < 5; f++) {
    tuner_rules_query_t q = {f, (uint64_t)1 << (f * 6), 8, 2, 1, f & 1};
    (void)tuner_rules_match(&rules, &q);
  }
  tuner_rules_free(&rules);
  return 0;
}
