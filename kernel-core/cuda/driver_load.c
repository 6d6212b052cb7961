/* Opening libcuda at run time: dlopen, cuGetProcAddress (dlsym as the
 * fallback), cuInit, once per process. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "base/err.h"
#include "base/param.h"
#include "cuda/driver.h"

/* cuGetProcAddress as of CUDA 12.0 (_v2: with the status argument) and 11.3. */
typedef cu_result_t (*cuda_get_proc_v2_t)(const char* symbol, void** pfn, int cudaVersion, uint64_t flags,
                                          int* symbolStatus);
typedef cu_result_t (*cuda_get_proc_v1_t)(const char* symbol, void** pfn, int cudaVersion, uint64_t flags);

static pthread_once_t cuda_once = PTHREAD_ONCE_INIT;
static ncclResult_t cuda_load_result = ncclSuccess;
static int cuda_available;
static void* cuda_lib;
static cuda_driver_t cuda_table;
static char cuda_reason[256] = "not loaded";

typedef struct {
  cuda_get_proc_v2_t v2;
  cuda_get_proc_v1_t v1;
  int version;
} cuda_resolver_t;

/* One entry point: cuGetProcAddress first (it picks the ABI we ask for),
 * dlsym second (drivers before 11.3, or a driver that refuses the query). */
static void* cuda_symbol_resolve(const cuda_resolver_t* r, const char* name, int* viaProc) {
  void* fn = NULL;
  if (r->v2) {
    int status = 0;
    if (r->v2(name, &fn, r->version, 0, &status) != CUDA_DRV_SUCCESS || status != 0) fn = NULL;
  } else if (r->v1) {
    if (r->v1(name, &fn, r->version, 0) != CUDA_DRV_SUCCESS) fn = NULL;
  }
  if (fn) return fn;
  *viaProc = 0;
  return dlsym(cuda_lib, name);
}

static cuda_resolver_t cuda_resolver_saved;
static const cuda_resolver_t* cuda_resolver;

/* Further entry points (cuda/gpu_load.c), resolved the same way. */
void* cuda_driver_symbol(const char* name) {
  if (!cuda_driver_available() || !cuda_resolver) return NULL;
  int viaProc = 1;
  return cuda_symbol_resolve(cuda_resolver, name, &viaProc);
}

int cuda_driver_symbols(const cuda_symbol_need_t* need, size_t n, char* missing, size_t missingLen) {
  for (size_t i = 0; i < n; i++) {
    *need[i].slot = cuda_driver_symbol(need[i].name);
    if (!*need[i].slot) {
      snprintf(missing, missingLen, "%s", need[i].name);
      return -1;
    }
  }
  return 0;
}

/* Required entry points, by name and place in the table. */
static ncclResult_t cuda_table_fill(const cuda_resolver_t* r, cuda_driver_t* t) {
  struct {
    const char* name;
    void** slot;
  } need[] = {
      {"cuInit", (void**)&t->init},
      {"cuDriverGetVersion", (void**)&t->driver_get_version},
      {"cuDeviceGetCount", (void**)&t->device_get_count},
      {"cuDeviceGet", (void**)&t->device_get},
      {"cuDeviceGetPCIBusId", (void**)&t->device_get_pci_bus_id},
      {"cuDeviceGetAttribute", (void**)&t->device_get_attribute},
      {"cuDeviceGetName", (void**)&t->device_get_name},
      {"cuCtxGetCurrent", (void**)&t->ctx_get_current},
      {"cuCtxGetDevice", (void**)&t->ctx_get_device},
      {"cuPointerGetAttribute", (void**)&t->pointer_get_attribute},
      {"cuDeviceCanAccessPeer", (void**)&t->device_can_access_peer},
  };
  int viaProc = (r->v1 || r->v2) ? 1 : 0;
  for (size_t i = 0; i < sizeof(need) / sizeof(need[0]); i++) {
    *need[i].slot = cuda_symbol_resolve(r, need[i].name, &viaProc);
    if (!*need[i].slot)
      return MK_FAIL(ncclSystemError, "CUDA driver: entry point %s not found in the driver library", need[i].name);
  }
  int optional = viaProc;
  t->get_error_string = (cu_result_t(*)(cu_result_t, const char**))cuda_symbol_resolve(r, "cuGetErrorString", &optional);
  t->viaProcAddress = viaProc;
  return ncclSuccess;
}

static void cuda_unavailable(const char* fmt, const char* detail) {
  snprintf(cuda_reason, sizeof(cuda_reason), fmt, detail);
  MK_INFO(NCCL_INIT, "CUDA driver unavailable (%s): host buffers only", cuda_reason);
}

static void cuda_driver_load_once(void) {
  if (param_MKCCL_CUDA_DISABLE()) {
    cuda_unavailable("%s", "disabled by MKCCL_CUDA_DISABLE");
    return;
  }
  const char* name = param_MKCCL_CUDA_LIBRARY();
  if (!name || !*name) name = "libcuda.so.1";
  cuda_lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
  if (!cuda_lib) {
    const char* why = dlerror();
    cuda_unavailable("%s", why ? why : name);
    return;
  }

  cuda_resolver_t r = {0};
  r.version = CUDA_DRV_ABI_VERSION;
  cuda_resolver = &cuda_resolver_saved;
  cu_result_t (*getVersion)(int*) = (cu_result_t(*)(int*))dlsym(cuda_lib, "cuDriverGetVersion");
  int driverVersion = 0;
  if (getVersion && getVersion(&driverVersion) == CUDA_DRV_SUCCESS && driverVersion > 0 &&
      driverVersion < r.version)
    r.version = driverVersion; /* never ask an old driver for an ABI it does not know */
  r.v2 = (cuda_get_proc_v2_t)dlsym(cuda_lib, "cuGetProcAddress_v2");
  if (!r.v2) r.v1 = (cuda_get_proc_v1_t)dlsym(cuda_lib, "cuGetProcAddress");

  cuda_driver_t t = {0};
  ncclResult_t res = cuda_table_fill(&r, &t);
  if (res != ncclSuccess) {
    snprintf(cuda_reason, sizeof(cuda_reason), "%s: entry point missing", name);
    cuda_load_result = res;
    goto fail;
  }
  cu_result_t cres = t.init(0);
  if (cres != CUDA_DRV_SUCCESS) {
    /* A driver library without a usable GPU (containers, CPU nodes): host only. */
    char detail[128];
    const char* text = NULL;
    if (!t.get_error_string || t.get_error_string(cres, &text) != CUDA_DRV_SUCCESS || !text) text = "";
    snprintf(detail, sizeof(detail), "cuInit returned %d %s", cres, text);
    cuda_unavailable("%s", detail);
    goto fail;
  }
  if (t.driver_get_version(&t.driverVersion) != CUDA_DRV_SUCCESS) t.driverVersion = driverVersion;
  cuda_table = t;
  cuda_resolver_saved = r;
  cuda_reason[0] = '\0';
  __atomic_store_n(&cuda_available, 1, __ATOMIC_RELEASE);
  MK_INFO(NCCL_INIT, "CUDA driver %d.%d loaded from %s (entry points via %s)", t.driverVersion / 1000,
          (t.driverVersion % 1000) / 10, name, t.viaProcAddress ? "cuGetProcAddress" : "dlsym");
  return;
fail:
  dlclose(cuda_lib);
  cuda_lib = NULL;
}

ncclResult_t cuda_driver_load(void) {
  pthread_once(&cuda_once, cuda_driver_load_once);
  return cuda_load_result;
}

int cuda_driver_available(void) {
  cuda_driver_load();
  return __atomic_load_n(&cuda_available, __ATOMIC_ACQUIRE);
}

const cuda_driver_t* cuda_driver(void) { return cuda_driver_available() ? &cuda_table : NULL; }

const char* cuda_driver_reason(void) {
  cuda_driver_load();
  return cuda_reason;
}
