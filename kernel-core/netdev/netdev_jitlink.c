/* nvJitLink through dlopen: the core must load and run on machines with no
 * CUDA at all, so the linker is found at run time (MKCCL_NVJITLINK_LIBRARY)
 * and its absence is an error of the UNPACK request only. The prototypes
 * are nvJitLink's (CUDA 12/13), declared here rather than included. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/param.h"
#include "net-device/mkccl_net_device_v1.h"
#include "netdev/netdev_link.h"

typedef void* nvjl_handle_t;
enum { NVJL_SUCCESS = 0, NVJL_INPUT_ANY = 10 };

typedef struct {
  int (*create)(nvjl_handle_t*, uint32_t, const char**);
  int (*destroy)(nvjl_handle_t*);
  int (*addData)(nvjl_handle_t, int, const void*, size_t, const char*);
  int (*complete)(nvjl_handle_t);
  int (*cubinSize)(nvjl_handle_t, size_t*);
  int (*cubin)(nvjl_handle_t, void*);
  int (*errorLogSize)(nvjl_handle_t, size_t*);
  int (*errorLog)(nvjl_handle_t, char*);
  int (*version)(unsigned*, unsigned*);
} nvjl_api_t;

static pthread_mutex_t nvjl_lock = PTHREAD_MUTEX_INITIALIZER;
static nvjl_api_t nvjl;
static int nvjl_state; /* 0 not tried, 1 ready, -1 failed */
static char nvjl_why[512];

static int nvjl_open_one(const char* name) {
  void* h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    size_t used = strlen(nvjl_why);
    snprintf(nvjl_why + used, sizeof(nvjl_why) - used, "%s%s", used ? "; " : "", dlerror());
    return -1;
  }
  void** slots[] = {(void**)&nvjl.create,    (void**)&nvjl.destroy,      (void**)&nvjl.addData,
                    (void**)&nvjl.complete,  (void**)&nvjl.cubinSize,    (void**)&nvjl.cubin,
                    (void**)&nvjl.errorLogSize, (void**)&nvjl.errorLog, (void**)&nvjl.version};
  const char* names[] = {"nvJitLinkCreate",          "nvJitLinkDestroy",         "nvJitLinkAddData",
                         "nvJitLinkComplete",        "nvJitLinkGetLinkedCubinSize", "nvJitLinkGetLinkedCubin",
                         "nvJitLinkGetErrorLogSize", "nvJitLinkGetErrorLog",     "nvJitLinkVersion"};
  for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
    *slots[i] = dlsym(h, names[i]);
    if (!*slots[i]) {
      snprintf(nvjl_why, sizeof(nvjl_why), "%s has no %s", name, names[i]);
      dlclose(h);
      return -1;
    }
  }
  return 0; /* kept open for the process */
}

static ncclResult_t nvjl_open(void) {
  pthread_mutex_lock(&nvjl_lock);
  if (nvjl_state == 0) {
    const char* list = param_MKCCL_NVJITLINK_LIBRARY();
    char copy[1024];
    snprintf(copy, sizeof(copy), "%s", list ? list : "");
    nvjl_state = -1;
    nvjl_why[0] = '\0';
    for (char *save = NULL, *tok = strtok_r(copy, ":", &save); tok; tok = strtok_r(NULL, ":", &save))
      if (nvjl_open_one(tok) == 0) {
        nvjl_state = 1;
        break;
      }
    if (nvjl_state < 0 && !nvjl_why[0]) snprintf(nvjl_why, sizeof(nvjl_why), "MKCCL_NVJITLINK_LIBRARY is empty");
  }
  int state = nvjl_state;
  pthread_mutex_unlock(&nvjl_lock);
  if (state < 0) return MK_FAIL(ncclSystemError, "NETDEV: nvJitLink cannot be opened: %s", nvjl_why);
  return ncclSuccess;
}

ncclResult_t netdev_jitlink_version(int* version) {
  MK_CHECK(nvjl_open());
  unsigned major = 0, minor = 0;
  if (nvjl.version(&major, &minor) != NVJL_SUCCESS) return MK_FAIL(ncclSystemError, "NETDEV: nvJitLinkVersion failed");
  *version = (int)(major * 1000 + minor);
  return ncclSuccess;
}

/* The linker's own words on why it refused. */
static void nvjl_error_log(nvjl_handle_t h, char* out, size_t size) {
  size_t n = 0;
  out[0] = '\0';
  if (nvjl.errorLogSize(h, &n) != NVJL_SUCCESS || n == 0) return;
  char* text = malloc(n + 1);
  if (!text) return;
  if (nvjl.errorLog(h, text) == NVJL_SUCCESS) {
    text[n] = '\0';
    snprintf(out, size, "%s", text);
  }
  free(text);
}

ncclResult_t netdev_jitlink_run(const netdev_link_input_t* inputs, int n, const char* arch, netdev_link_mode_t mode,
                                void** cubin, size_t* size) {
  MK_CHECK(nvjl_open());
  char archOpt[64];
  snprintf(archOpt, sizeof(archOpt), "-arch=%s", arch);
  /* Code compiled here from LTO-IR fits the core's kernels too
   * (MKCCL_NET_DEVICE_MAX_REGS; relocatable inputs were built to it). */
  char regOpt[48];
  snprintf(regOpt, sizeof(regOpt), "-maxrregcount=%d", MKCCL_NET_DEVICE_MAX_REGS);
  const char* opts[] = {archOpt, regOpt, "-lto"};
  nvjl_handle_t h = NULL;
  int nopts = mode == NETDEV_LINK_LTO ? 3 : 2;
  int rc = nvjl.create(&h, (uint32_t)nopts, opts);
  if (rc != NVJL_SUCCESS)
    return MK_FAIL(ncclSystemError, "NETDEV: nvJitLinkCreate(%s %s%s) failed (%d)", archOpt, regOpt,
                   nopts == 3 ? " -lto" : "", rc);
  ncclResult_t res = ncclSuccess;
  char log[1024] = "";
  for (int i = 0; i < n && res == ncclSuccess; i++) {
    rc = nvjl.addData(h, NVJL_INPUT_ANY, inputs[i].data, inputs[i].size, inputs[i].name);
    if (rc != NVJL_SUCCESS) {
      nvjl_error_log(h, log, sizeof(log));
      res = MK_FAIL(ncclInvalidUsage, "NETDEV: nvJitLink refuses input '%s' (%zu bytes, error %d): %s", inputs[i].name,
                    inputs[i].size, rc, log);
    }
  }
  if (res == ncclSuccess && (rc = nvjl.complete(h)) != NVJL_SUCCESS) {
    nvjl_error_log(h, log, sizeof(log));
    res = MK_FAIL(ncclInvalidUsage, "NETDEV: nvJitLink could not link the device code for %s (error %d): %s", arch, rc,
                  log);
  }
  size_t bytes = 0;
  void* out = NULL;
  if (res == ncclSuccess && (nvjl.cubinSize(h, &bytes) != NVJL_SUCCESS || bytes == 0 || !(out = malloc(bytes)) ||
                             nvjl.cubin(h, out) != NVJL_SUCCESS)) {
    free(out);
    out = NULL;
    res = MK_FAIL(ncclSystemError, "NETDEV: nvJitLink linked but gave no cubin");
  }
  nvjl.destroy(&h);
  if (res != ncclSuccess) return res;
  *cubin = out;
  *size = bytes;
  return ncclSuccess;
}
