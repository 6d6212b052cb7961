/* Linking a net-device plugin's device code with the core's at run time
 * (kernel-core/netdev/netdev_link.h): nvJitLink needs no GPU, so the link
 * itself runs here. The unpack-device plugin's LTO-IR and the core's call
 * site link into a cubin holding the call-site kernel; the second link of
 * the same inputs comes from the disk cache, byte for byte; a damaged cache
 * file is linked again; the core's side alone does not link (the plugin's
 * functions are missing) and says so; no nvJitLink at all is a clear error;
 * the cache key follows every input. The collective kernels' UNPACK
 * variant (relocatable) links with the plugin's relocatable code into the
 * kernel the GPU executor loads, and not without it. Each case runs in its own process
 * (nvJitLink is opened once per process). */
#include <dlfcn.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/err.h"
#include "check.h"
#include "net-device/mkccl_net_device_v1.h"
#include "netdev/netdev_link.h"
#include "ranks.h"

/* The link cases need the core's LTO-IR, embedded only when nvcc built it;
 * without it (MKCCL_ENABLE_CUDA=OFF, the sanitizer builds) they are not
 * compiled, else -Werror stops the build on unused functions. */
#ifdef NETDEV_TEST_HAVE_CUDA
static char tmpdir[256];
static netdev_link_input_t inputs[2];

static int has_bytes(const void* hay, size_t n, const char* needle) {
  return memmem(hay, n, needle, strlen(needle)) != NULL;
}

static int cache_files(char* first, size_t size) {
  char pattern[400];
  snprintf(pattern, sizeof(pattern), "%s/cache/netdev-sm_90-*.cubin", tmpdir);
  glob_t g;
  if (glob(pattern, 0, NULL, &g) != 0) return 0;
  int n = (int)g.gl_pathc;
  if (first && n) snprintf(first, size, "%s", g.gl_pathv[0]);
  globfree(&g);
  return n;
}

static int case_link_and_cache(int rank, int n, void* arg) {
  (void)rank, (void)n, (void)arg;
  char dir[400];
  snprintf(dir, sizeof(dir), "%s/cache", tmpdir);
  setenv("MKCCL_NET_DEVICE_CACHE_DIR", dir, 1);
  void *a = NULL, *b = NULL, *c = NULL;
  size_t na = 0, nb = 0, nc = 0;
  netdev_link_source_t src;
  CHECK_MSG(netdev_link(inputs, 2, "sm_90", NETDEV_LINK_LTO, &a, &na, &src) == ncclSuccess, "%s", err_last_get());
  CHECK_EQ_INT(src, NETDEV_LINK_LINKED);
  CHECK(na > 64 && memcmp(a, "\177ELF", 4) == 0);
  CHECK(has_bytes(a, na, "mkcclNetDevUnpackKernel"));
  char file[512];
  CHECK_EQ_INT(cache_files(file, sizeof(file)), 1);
  /* Same inputs: from the cache, the same bytes. */
  CHECK(netdev_link(inputs, 2, "sm_90", NETDEV_LINK_LTO, &b, &nb, &src) == ncclSuccess);
  CHECK_EQ_INT(src, NETDEV_LINK_CACHED);
  CHECK(nb == na && memcmp(a, b, na) == 0);
  /* A damaged entry is not used: linked again, and rewritten. */
  FILE* f = fopen(file, "r+b");
  CHECK(f);
  CHECK(fseek(f, -5, SEEK_END) == 0);
  fputc(0x42 ^ 0xff, f);
  fclose(f);
  CHECK(netdev_link(inputs, 2, "sm_90", NETDEV_LINK_LTO, &c, &nc, &src) == ncclSuccess);
  CHECK_EQ_INT(src, NETDEV_LINK_LINKED);
  CHECK(nc == na && memcmp(a, c, na) == 0);
  free(c);
  c = NULL;
  CHECK(netdev_link(inputs, 2, "sm_90", NETDEV_LINK_LTO, &c, &nc, &src) == ncclSuccess);
  CHECK_EQ_INT(src, NETDEV_LINK_CACHED);
  free(a), free(b), free(c);
  return 0;
}

static int case_no_cache(int rank, int n, void* arg) {
  (void)rank, (void)n, (void)arg;
  setenv("MKCCL_NET_DEVICE_CACHE_DIR", "none", 1);
  for (int i = 0; i < 2; i++) {
    void* out = NULL;
    size_t size = 0;
    netdev_link_source_t src = NETDEV_LINK_CACHED;
    CHECK(netdev_link(inputs, 2, "sm_90", NETDEV_LINK_LTO, &out, &size, &src) == ncclSuccess);
    CHECK_EQ_INT(src, NETDEV_LINK_LINKED);
    free(out);
  }
  return 0;
}

static int case_unresolved(int rank, int n, void* arg) {
  (void)rank, (void)n, (void)arg;
  setenv("MKCCL_NET_DEVICE_CACHE_DIR", "none", 1);
  void* out = NULL;
  size_t size = 0;
  netdev_link_source_t src;
  CHECK_EQ_INT(netdev_link(inputs, 1, "sm_90", NETDEV_LINK_LTO, &out, &size, &src), ncclInvalidUsage);
  CHECK(out == NULL);
  CHECK_STR_CONTAINS(err_last_get(), "nvJitLink could not link the device code for sm_90");
  return 0;
}

/* The collective kernels (UNPACK variant) with the plugin: what a GPU
 * communicator using UNPACK loads. Relocatable, so the link is quick. */
static netdev_link_input_t kernels[2];
static int case_kernels(int rank, int n, void* arg) {
  (void)rank, (void)n, (void)arg;
  setenv("MKCCL_NET_DEVICE_CACHE_DIR", "none", 1);
  void* out = NULL;
  size_t size = 0;
  netdev_link_source_t src;
  CHECK_MSG(netdev_link(kernels, 2, "sm_90", NETDEV_LINK_RELOCATABLE, &out, &size, &src) == ncclSuccess, "%s",
            err_last_get());
  CHECK(size > 64 && memcmp(out, "\177ELF", 4) == 0);
  CHECK(has_bytes(out, size, "mkccl_kernel"));
  /* Another build of the plugin: the same core links it, into other code. */
  void* lib = dlopen(UNPACK_DEVICE_ALT_LIB, RTLD_NOW | RTLD_LOCAL);
  CHECK_MSG(lib, "%s", dlerror());
  const mkcclNetDevice_v1* alt = dlsym(lib, MKCCL_NET_DEVICE_SYMBOL_V1);
  CHECK(alt && alt->deviceCode && alt->deviceCode());
  netdev_link_input_t swapped[2] = {kernels[0], {alt->deviceCode()->ltoir, alt->deviceCode()->ltoirSize, "alt"}};
  void* other = NULL;
  size_t otherSize = 0;
  CHECK_MSG(netdev_link(swapped, 2, "sm_90", NETDEV_LINK_RELOCATABLE, &other, &otherSize, &src) == ncclSuccess, "%s",
            err_last_get());
  CHECK(has_bytes(other, otherSize, "mkccl_kernel"));
  CHECK(otherSize != size || memcmp(other, out, size) != 0);
  free(other);
  free(out);
  out = NULL;
  CHECK_EQ_INT(netdev_link(kernels, 1, "sm_90", NETDEV_LINK_RELOCATABLE, &out, &size, &src), ncclInvalidUsage);
  CHECK(out == NULL);
  return 0;
}

static int case_no_linker(int rank, int n, void* arg) {
  (void)rank, (void)n, (void)arg;
  setenv("MKCCL_NVJITLINK_LIBRARY", "/nonexistent/libnvJitLink.so.13", 1);
  void* out = NULL;
  size_t size = 0;
  netdev_link_source_t src;
  CHECK_EQ_INT(netdev_link(inputs, 2, "sm_90", NETDEV_LINK_LTO, &out, &size, &src), ncclSystemError);
  CHECK_STR_CONTAINS(err_last_get(), "NETDEV: nvJitLink cannot be opened: /nonexistent/libnvJitLink.so.13");
  return 0;
}
#endif

static void test_cache_key(void) {
  char x[32] = "abcdefghijklmnopqrstuvwxyz01234", y[32];
  memcpy(y, x, sizeof(x));
  netdev_link_input_t one[2] = {{x, sizeof(x), "x"}, {x, 8, "x8"}}, two[2] = {{y, sizeof(y), "y"}, {y, 8, "y8"}};
  uint64_t k = netdev_cache_key(one, 2, "sm_90", NETDEV_LINK_LTO, 13000);
  CHECK(k == netdev_cache_key(two, 2, "sm_90", NETDEV_LINK_LTO, 13000)); /* names are not inputs */
  CHECK(k != netdev_cache_key(one, 2, "sm_100", NETDEV_LINK_LTO, 13000));
  CHECK(k != netdev_cache_key(one, 2, "sm_90", NETDEV_LINK_LTO, 13001));
  CHECK(k != netdev_cache_key(one, 1, "sm_90", NETDEV_LINK_LTO, 13000));
  CHECK(k != netdev_cache_key(one, 2, "sm_90", NETDEV_LINK_RELOCATABLE, 13000));
  y[31] ^= 1;
  CHECK(k != netdev_cache_key(two, 2, "sm_90", NETDEV_LINK_LTO, 13000));
  /* Where one input ends and the next starts matters. */
  netdev_link_input_t split[2] = {{x, 16, "a"}, {x + 16, 16, "b"}}, whole[1] = {{x, 32, "c"}};
  CHECK(netdev_cache_key(split, 2, "sm_90", NETDEV_LINK_LTO, 1) != netdev_cache_key(whole, 1, "sm_90", NETDEV_LINK_LTO, 1));
}

/* No argument: the cache key, and the cases that need no linker. `link`:
 * the cases that link (skipped without nvcc or without nvJitLink). */
int main(int argc, char** argv) {
  int link = argc > 1 && strcmp(argv[1], "link") == 0;
  size_t coreSize = 0;
  const void* core = netdev_core_ltoir(&coreSize);
#ifndef NETDEV_TEST_HAVE_CUDA
  if (link) SKIP("built without nvcc: no device code to link");
  test_cache_key();
  CHECK(core == NULL);
  printf("test_netdev_link: built without nvcc: no device code (cache key checked)\n");
  return 0;
#else
  if (link) {
    void* nvjl = dlopen("libnvJitLink.so.13", RTLD_NOW | RTLD_LOCAL);
    if (!nvjl) SKIP("no libnvJitLink.so.13 on this machine (%s)", dlerror());
    dlclose(nvjl);
  } else {
    test_cache_key();
  }
  CHECK(core && coreSize > 0);
  void* lib = dlopen(UNPACK_DEVICE_LIB, RTLD_NOW | RTLD_LOCAL);
  CHECK_MSG(lib, "%s", dlerror());
  const mkcclNetDevice_v1* d = dlsym(lib, MKCCL_NET_DEVICE_SYMBOL_V1);
  CHECK(d && d->deviceCode);
  const mkcclNetDeviceCode_v1* code = d->deviceCode();
  CHECK(code && code->ltoir && code->ltoirSize > 0 && strcmp(code->arch, "sm_90") == 0);
  inputs[0] = (netdev_link_input_t){core, coreSize, "mkccl-core"};
  inputs[1] = (netdev_link_input_t){code->ltoir, code->ltoirSize, "unpack-device"};
  size_t kernelsSize = 0;
  const void* coreKernels = netdev_core_kernels(&kernelsSize);
  CHECK(coreKernels && kernelsSize > 0);
  kernels[0] = (netdev_link_input_t){coreKernels, kernelsSize, "mkccl-kernels"};
  kernels[1] = inputs[1];
  snprintf(tmpdir, sizeof(tmpdir), "/tmp/mkccl-netdev-link-XXXXXX");
  CHECK(mkdtemp(tmpdir));
  int rc = 0;
  if (!link) {
    rc |= ranks_run(1, case_no_linker, NULL, 60);
  } else {
    rc |= ranks_run(1, case_link_and_cache, NULL, 120);
    rc |= ranks_run(1, case_no_cache, NULL, 120);
    rc |= ranks_run(1, case_unresolved, NULL, 120);
    rc |= ranks_run(1, case_kernels, NULL, 120);
  }
  char cmd[400];
  snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", tmpdir);
  CHECK_EQ_INT(rc, 0);
  printf("test_netdev_link%s: OK\n", link ? " link" : "");
  return 0;
#endif
}
