/* libnccl.so.2 exports every function of NCCL 2.28's nccl.h, each as nccl*
 * and as its profiling alias pnccl*, so a program linked against NCCL (or a
 * tool interposing the pnccl names) resolves every symbol on mkccl. The list
 * is NCCL 2.28's, written here independently of include/nccl.h. */
#include <dlfcn.h>
#include <stdio.h>

#include "check.h"

static const char* const nccl228[] = {
    "MemAlloc", "MemFree", "GetVersion", "GetUniqueId", "CommInitRankConfig", "CommInitRank",
    "CommInitAll", "CommFinalize", "CommDestroy", "CommAbort", "CommRevoke", "CommSplit", "CommShrink",
    "CommInitRankScalable", "GetErrorString", "GetLastError", "ResetDebugInit", "CommGetAsyncError",
    "CommCount", "CommCuDevice", "CommUserRank", "CommRegister", "CommDeregister", "CommWindowRegister",
    "CommWindowDeregister", "RedOpCreatePreMulSum", "RedOpDestroy", "Reduce", "Bcast", "Broadcast",
    "AllReduce", "ReduceScatter", "AllGather", "AlltoAll", "Gather", "Scatter", "Send", "Recv",
    "GroupStart", "GroupEnd", "GroupSimulateEnd"};

int main(int argc, char** argv) {
  CHECK(argc > 1);
  void* lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  CHECK_MSG(lib != NULL, "%s", dlerror());
  int missing = 0;
  for (size_t i = 0; i < sizeof(nccl228) / sizeof(nccl228[0]); i++) {
    for (int profiling = 0; profiling < 2; profiling++) {
      char name[64];
      snprintf(name, sizeof(name), "%snccl%s", profiling ? "p" : "", nccl228[i]);
      if (!dlsym(lib, name)) {
        fprintf(stderr, "%s: %s not exported\n", argv[1], name);
        missing++;
      }
    }
  }
  CHECK_EQ_INT(missing, 0);
  /* Both names are the same function. */
  CHECK(dlsym(lib, "ncclAllReduce") == dlsym(lib, "pncclAllReduce"));
  dlclose(lib);
  return 0;
}
