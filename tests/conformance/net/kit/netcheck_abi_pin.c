/* An ABI pin for `mkccl-netcheck --abi N`: a library exporting only
 * ncclNetPlugin_v<NETCHECK_ABI>, a copy of that table of the plugin named
 * by MKCCL_NETCHECK_TARGET, made when the library loads. The core's loader
 * always takes a plugin's newest version; through the pin it meets the
 * plugin at version N and runs it through that version's adapter. Test
 * machinery: reading the environment here is how the kit hands it over. */
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "net/nccl_net.h"

#define NC_CAT3(a, b, c) a##b##c
#define NC_TYPE(v) NC_CAT3(ncclNet_v, v, _t)
#define NC_SYM(v) NC_CAT3(ncclNetPlugin_v, v, )
#define NC_STR2(x) #x
#define NC_STR(x) NC_STR2(x)

__attribute__((visibility("default"))) NC_TYPE(NETCHECK_ABI) NC_SYM(NETCHECK_ABI);

__attribute__((constructor)) static void netcheck_pin_load(void) {
  const char* target = getenv("MKCCL_NETCHECK_TARGET");
  void* lib = target ? dlopen(target, RTLD_NOW | RTLD_LOCAL) : NULL;
  const void* table = lib ? dlsym(lib, "ncclNetPlugin_v" NC_STR(NETCHECK_ABI)) : NULL;
  if (table) memcpy(&NC_SYM(NETCHECK_ABI), table, sizeof(NC_SYM(NETCHECK_ABI)));
  /* else the table stays empty: the loader refuses it ("no init") */
}
