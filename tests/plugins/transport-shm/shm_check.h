/* What the single-copy tests of transport-shm share: data that tell rank,
 * peer, call and byte apart, the plugin's counters, and each rank's log. */
#ifndef MKCCL_TESTS_SHM_CHECK_H
#define MKCCL_TESTS_SHM_CHECK_H

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
static uint8_t val(int from, int to, int call, size_t i) {
  uint64_t x = ((uint64_t)from * 131 + (uint64_t)to * 7 + 1) * 0x9e3779b97f4a7c15ull ^ ((uint64_t)call << 40) ^ i;
  x ^= x >> 31;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 29;
  return (uint8_t)x;
}

static void fill(uint8_t* p, size_t n, int from, int to, int call) {
  for (size_t i = 0; i < n; i++) p[i] = val(from, to, call, i);
}

static void expect(const uint8_t* p, size_t n, int from, int to, int call) {
  for (size_t i = 0; i < n; i++)
    CHECK_MSG(p[i] == val(from, to, call, i), "rank %d call %d: byte %zu from rank %d is %u, expected %u", to, call,
              i, from, p[i], val(from, to, call, i));
}

/* A transport-shm counter of bytes copied in place (mkcclShmCmaBytes,
 * mkcclShmMapBytes), asked of the plugin the library loaded (its path as
 * the loader has it). */
static int find_shm(struct dl_phdr_info* info, size_t size, void* out) {
  (void)size;
  if (!strstr(info->dlpi_name, "libmkccl-transport-shm.so")) return 0;
  snprintf(out, 512, "%s", info->dlpi_name);
  return 1;
}
static uint64_t shm_counter(const char* name) {
  char path[512] = "";
  dl_iterate_phdr(find_shm, path);
  CHECK_MSG(path[0], "transport-shm is not loaded");
  void* h = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
  CHECK_MSG(h, "dlopen %s: %s", path, dlerror());
  uint64_t (*fn)(void) = (uint64_t(*)(void))dlsym(h, name);
  CHECK_MSG(fn, "%s has no %s", path, name);
  uint64_t n = fn();
  dlclose(h); /* the library's own reference keeps it loaded */
  return n;
}

/* Lines of this process's log holding `what`. */
static int shm_log_lines(const char* what) {
  char path[128], line[1024];
  snprintf(path, sizeof(path), "%s/log.%d", logDir, (int)getpid());
  FILE* f = fopen(path, "r");
  CHECK_MSG(f, "no log at %s", path);
  int n = 0;
  while (fgets(line, sizeof(line), f)) n += strstr(line, what) != NULL;
  fclose(f);
  return n;
}

/* Every rank logs INFO of INIT and SHM to its own file in a fresh folder. */
static void shm_log_start(void) {
  snprintf(logDir, sizeof(logDir), "/tmp/mkccl-shm-XXXXXX");
  CHECK(mkdtemp(logDir));
  char file[128];
  snprintf(file, sizeof(file), "%s/log.%%p", logDir);
  setenv("NCCL_DEBUG", "INFO", 1);
  setenv("NCCL_DEBUG_SUBSYS", "INIT,SHM", 1);
  setenv("NCCL_DEBUG_FILE", file, 1);
}

/* The folder goes when every rank passed, else stays for a reader. */
static void shm_log_end(int rc) {
  char cmd[160];
  snprintf(cmd, sizeof(cmd), "rm -rf %s", logDir);
  if (rc == 0 && system(cmd) != 0) fprintf(stderr, "could not remove %s\n", logDir);
  CHECK_MSG(rc == 0, "a rank failed (logs in %s)", logDir);
}

#endif
