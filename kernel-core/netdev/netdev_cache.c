/* The on-disk cache of linked device code: one file per key,
 * <dir>/netdev-<arch>-<key>.cubin, a header (magic, key, size, payload
 * hash) then the cubin. A file that does not check out is ignored (and
 * overwritten by the next store). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/err.h"
#include "base/param.h"
#include "netdev/netdev_link.h"

#define NETDEV_CACHE_MAGIC "MKCCLND1"

typedef struct {
  char magic[8];
  uint64_t key;
  uint64_t size;
  uint64_t hash;
} netdev_cache_header_t;

static uint64_t netdev_fnv(uint64_t h, const void* data, size_t size) {
  const unsigned char* p = data;
  for (size_t i = 0; i < size; i++) h = (h ^ p[i]) * 1099511628211ull;
  return h;
}

#define NETDEV_FNV_BASIS 14695981039346656037ull

uint64_t netdev_cache_key(const netdev_link_input_t* inputs, int n, const char* arch, netdev_link_mode_t mode,
                          int linkerVersion) {
  uint64_t h = NETDEV_FNV_BASIS;
  for (int i = 0; i < n; i++) {
    uint64_t size = inputs[i].size;
    h = netdev_fnv(h, &size, sizeof(size));
    h = netdev_fnv(h, inputs[i].data, inputs[i].size);
  }
  h = netdev_fnv(h, arch, strlen(arch));
  int m = (int)mode;
  h = netdev_fnv(h, &m, sizeof(m));
  return netdev_fnv(h, &linkerVersion, sizeof(linkerVersion));
}

static int netdev_mkdirs(const char* path) {
  char tmp[4096];
  snprintf(tmp, sizeof(tmp), "%s", path);
  for (char* p = tmp + 1; *p; p++) {
    if (*p != '/') continue;
    *p = '\0';
    if (mkdir(tmp, 0700) != 0 && errno != EEXIST) return -1;
    *p = '/';
  }
  return mkdir(tmp, 0700) != 0 && errno != EEXIST ? -1 : 0;
}

/* HOME and XDG_CACHE_HOME are the user's, not parameters: read as-is. */
void netdev_cache_dir(char* dir, size_t size) {
  const char* set = param_MKCCL_NET_DEVICE_CACHE_DIR();
  dir[0] = '\0';
  if (set && strcmp(set, "none") == 0) return;
  if (set && *set) snprintf(dir, size, "%s", set);
  else if (getenv("XDG_CACHE_HOME") && *getenv("XDG_CACHE_HOME")) snprintf(dir, size, "%s/mkccl", getenv("XDG_CACHE_HOME"));
  else if (getenv("HOME") && *getenv("HOME")) snprintf(dir, size, "%s/.cache/mkccl", getenv("HOME"));
  if (dir[0] && netdev_mkdirs(dir) != 0) {
    MK_INFO(NCCL_INIT, "NETDEV: cache folder %s cannot be created (%s): linking without a cache", dir, strerror(errno));
    dir[0] = '\0';
  }
}

static void netdev_cache_path(const char* dir, uint64_t key, const char* arch, char* path, size_t size) {
  snprintf(path, size, "%s/netdev-%s-%016llx.cubin", dir, arch, (unsigned long long)key);
}

int netdev_cache_load(const char* dir, uint64_t key, const char* arch, void** data, size_t* size) {
  char path[4200];
  netdev_cache_path(dir, key, arch, path, sizeof(path));
  FILE* f = fopen(path, "rb");
  if (!f) return -1;
  netdev_cache_header_t h;
  void* buf = NULL;
  if (fread(&h, sizeof(h), 1, f) != 1 || memcmp(h.magic, NETDEV_CACHE_MAGIC, 8) != 0 || h.key != key ||
      h.size == 0 || h.size > (1ull << 30) || !(buf = malloc(h.size)) || fread(buf, 1, h.size, f) != h.size ||
      netdev_fnv(NETDEV_FNV_BASIS, buf, h.size) != h.hash) {
    MK_INFO(NCCL_INIT, "NETDEV: cache entry %s is not valid: linking again", path);
    free(buf);
    fclose(f);
    return -1;
  }
  fclose(f);
  *data = buf;
  *size = h.size;
  return 0;
}

ncclResult_t netdev_cache_store(const char* dir, uint64_t key, const char* arch, const void* data, size_t size) {
  char path[4200], tmp[4300];
  netdev_cache_path(dir, key, arch, path, sizeof(path));
  snprintf(tmp, sizeof(tmp), "%s.tmp.%d", path, (int)getpid());
  netdev_cache_header_t h;
  memcpy(h.magic, NETDEV_CACHE_MAGIC, 8);
  h.key = key;
  h.size = size;
  h.hash = netdev_fnv(NETDEV_FNV_BASIS, data, size);
  FILE* f = fopen(tmp, "wb");
  if (!f) return MK_FAIL(ncclSystemError, "NETDEV: cannot write the cache file %s: %s", tmp, strerror(errno));
  int ok = fwrite(&h, sizeof(h), 1, f) == 1 && fwrite(data, 1, size, f) == size;
  ok = fclose(f) == 0 && ok;
  if (!ok || rename(tmp, path) != 0) {
    unlink(tmp);
    return MK_FAIL(ncclSystemError, "NETDEV: cannot write the cache file %s: %s", path, strerror(errno));
  }
  return ncclSuccess;
}
