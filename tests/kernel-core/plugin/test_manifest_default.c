/* The assembled default manifest (kernel-core/plugin/manifest_head.yaml plus
 * the plugins' manifest.yaml): the file in the build tree and the copy
 * compiled into the core are the same bytes, it parses, and it lists exactly
 * the plugins whose folder has a manifest.yaml (DEFAULT_PLUGINS, from the
 * source tree), each as libmkccl-<name>.so. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "check.h"
#include "plugin/manifest.h"
#include "plugin/manifest_set.h"

static char* read_all(const char* path, size_t* len) {
  FILE* f = fopen(path, "rb");
  CHECK_MSG(f != NULL, "cannot open %s", path);
  CHECK(fseek(f, 0, SEEK_END) == 0);
  long n = ftell(f);
  CHECK(n >= 0 && fseek(f, 0, SEEK_SET) == 0);
  char* text = malloc((size_t)n + 1);
  CHECK(text != NULL);
  CHECK(fread(text, 1, (size_t)n, f) == (size_t)n);
  text[n] = '\0';
  fclose(f);
  *len = (size_t)n;
  return text;
}

static const manifest_entry_t* entry_named(const manifest_t* m, const char* name) {
  for (int i = 0; i < m->nEntries; i++)
    if (strcmp(m->entries[i].name, name) == 0) return &m->entries[i];
  return NULL;
}

int main(void) {
  char names[1024];
  snprintf(names, sizeof(names), "%s", DEFAULT_PLUGINS);
  int nNames = 0;
  for (char* name = strtok(names, " "); name; name = strtok(NULL, " ")) nNames++;
  CHECK_MSG(nNames > 0, "no plugin folder has a manifest.yaml");

  size_t len = 0;
  char* text = read_all(DEFAULT_MANIFEST, &len);
  CHECK_MSG(len == manifest_embedded_size && memcmp(text, manifest_embedded_text, len) == 0,
            "%s differs from the embedded copy", DEFAULT_MANIFEST);

  manifest_t* m = NULL;
  CHECK_MSG(manifest_file_parse(DEFAULT_MANIFEST, &m) == ncclSuccess, "%s", err_last_get());
  CHECK_EQ_INT(m->nEntries, nNames);
  snprintf(names, sizeof(names), "%s", DEFAULT_PLUGINS);
  for (char* name = strtok(names, " "); name; name = strtok(NULL, " ")) {
    const manifest_entry_t* e = entry_named(m, name);
    CHECK_MSG(e != NULL, "%s does not list %s", DEFAULT_MANIFEST, name);
    char want[256];
    snprintf(want, sizeof(want), "libmkccl-%s.so", name);
    CHECK_MSG(strcmp(e->library, want) == 0, "%s: library %s, want %s", name, e->library, want);
  }
  manifest_free(m);
  free(text);
  printf("test_manifest_default: OK (%d plugins)\n", nNames);
  return 0;
}
