/* CUDA host registration for unpack mode (net_socket_cuda.h). */
#include "net_socket_cuda.h"

#include <dlfcn.h>
#include <pthread.h>

#include "net_socket_log.h"

#define NS_CU_MEMHOSTREGISTER_PORTABLE 0x01
#define NS_CU_MEMHOSTREGISTER_DEVICEMAP 0x02

static struct {
  int (*ctxGetCurrent)(void** ctx);
  int (*hostRegister)(void* p, size_t bytes, unsigned int flags);
  int (*hostUnregister)(void* p);
} ns_cu;
static pthread_once_t ns_cu_once = PTHREAD_ONCE_INIT;

static void ns_cu_find(void) {
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (!lib) return;
  *(void**)&ns_cu.ctxGetCurrent = dlsym(lib, "cuCtxGetCurrent");
  *(void**)&ns_cu.hostRegister = dlsym(lib, "cuMemHostRegister_v2");
  *(void**)&ns_cu.hostUnregister = dlsym(lib, "cuMemHostUnregister");
  if (!ns_cu.ctxGetCurrent || !ns_cu.hostRegister || !ns_cu.hostUnregister) ns_cu.hostRegister = NULL;
}

int net_socket_cuda_register(void* p, size_t bytes) {
  pthread_once(&ns_cu_once, ns_cu_find);
  void* ctx = NULL;
  if (!ns_cu.hostRegister || ns_cu.ctxGetCurrent(&ctx) != 0 || !ctx) return 0;
  int rc = ns_cu.hostRegister(p, bytes, NS_CU_MEMHOSTREGISTER_PORTABLE | NS_CU_MEMHOSTREGISTER_DEVICEMAP);
  if (rc != 0) {
    NS_WARN("NET/Socket: cuMemHostRegister(%p, %zu) failed (%d): UNPACK pages not device-visible", p,
           bytes, rc);
    return -1;
  }
  return 1;
}

void net_socket_cuda_unregister(void* p) {
  if (ns_cu.hostUnregister) ns_cu.hostUnregister(p);
}
