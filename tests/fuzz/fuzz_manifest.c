/* Fuzz target: the plugin manifest parser (YAML, read from files the user
 * names). Any input may be rejected; none may crash, leak or hang. */
#include <stddef.h>
#include <stdint.h>

#include "plugin/manifest.h"

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  manifest_t* m = NULL;
  if (manifest_text_parse((const char*)data, size, "fuzz.yaml", "/nonexistent", &m) == ncclSuccess) manifest_free(m);
  return 0;
}
