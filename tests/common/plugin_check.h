/* What tests of a transport's in-place paths (transport-shm's single copy,
 * transport-net's registered buffers) share: data that tell rank, peer,
 * call and byte apart, a loaded plugin's counters, and each rank's log. */
#ifndef MKCCL_TESTS_PLUGIN_CHECK_H
#define MKCCL_TESTS_PLUGIN_CHECK_H

#include <dlfcn.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"

static char logDir[64];

/* The byte `i` of what rank `from` sends to `to` in call `call`. */
static inline uint8_t val(int from, int to, int call, size_t i) {
  uint64_t x = ((uint64_t)from * 131 + (uint64_t)to * 7 + 1) * 0x9e3779b97f4a7c15ull ^ ((uint64_t)call << 40) ^ i;
  x ^= x >> 31;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 29;
  return (uint8_t)x;
}

static inline void fill(uint8_t* p, size_t n, int from, int to, int call) {
  for (size_t i = 0; i < n; i++) p[i] = val(from, to, call, i);
}

static inline void expect(const uint8_t* p, size_t n, int from, int to, int call) {
  for (size_t i = 0; i < n; i++)
    CHECK_MSG(p[i] == val(from, to, call, i), "rank %d call %d: byte %zu from rank %d is %u, expected %u", to, call,
              i, from, p[i], val(from, to, call, i));
}

/* Symbol `name` of the loaded plugin whose file name holds `lib`
 * ("libmkccl-transport-shm.so"): its counters, asked of the copy the
 * library loaded (its path as the loader has it). */
typedef struct {
  const char* lib;
  char path[512];
} plugin_find_t;
static inline int plugin_find(struct dl_phdr_info* info, size_t size, void* arg) {
  (void)size;
  plugin_find_t* f = arg;
  if (!strstr(info->dlpi_name, f->lib)) return 0;
  snprintf(f->path, sizeof(f->path), "%s", info->dlpi_name);
  return 1;
}
static inline void* plugin_sym(const char* lib, const char* name) {
  plugin_find_t f = {lib, ""};
  dl_iterate_phdr(plugin_find, &f);
  CHECK_MSG(f.path[0], "%s is not loaded", lib);
  void* h = dlopen(f.path, RTLD_NOW | RTLD_NOLOAD);
  CHECK_MSG(h, "dlopen %s: %s", f.path, dlerror());
  void* fn = dlsym(h, name);
  CHECK_MSG(fn, "%s has no %s", f.path, name);
  dlclose(h); /* the library's own reference keeps it loaded */
  return fn;
}

/* A counter the plugin exports as uint64_t name(void). */
static inline uint64_t plugin_counter(const char* lib, const char* name) {
  uint64_t (*fn)(void) = (uint64_t(*)(void))plugin_sym(lib, name);
  return fn();
}

/* Lines of this process's log holding `what`; its WARN lines go to stderr. */
static inline int plugin_log_lines(const char* what) {
  char path[128], line[2048];
  snprintf(path, sizeof(path), "%s/log.%d", logDir, (int)getpid());
  FILE* f = fopen(path, "r");
  CHECK_MSG(f, "no log at %s", path);
  int n = 0;
  while (fgets(line, sizeof(line), f)) {
    if (strstr(line, "NCCL WARN")) fputs(line, stderr);
    n += strstr(line, what) != NULL;
  }
  fclose(f);
  return n;
}

/* Every rank logs INFO of `subsys` to its own file in a fresh folder. */
static inline void plugin_log_start(const char* subsys) {
  snprintf(logDir, sizeof(logDir), "/tmp/mkccl-plugin-XXXXXX");
  CHECK(mkdtemp(logDir));
  char file[128];
  snprintf(file, sizeof(file), "%s/log.%%p", logDir);
  setenv("NCCL_DEBUG", "INFO", 1);
  setenv("NCCL_DEBUG_SUBSYS", subsys, 1);
  setenv("NCCL_DEBUG_FILE", file, 1);
}

/* The folder goes when every rank passed, else stays for a reader. */
static inline void plugin_log_end(int rc) {
  char cmd[160];
  snprintf(cmd, sizeof(cmd), "rm -rf %s", logDir);
  if (rc == 0 && system(cmd) != 0) fprintf(stderr, "could not remove %s\n", logDir);
  CHECK_MSG(rc == 0, "a rank failed (logs in %s)", logDir);
}

#endif
