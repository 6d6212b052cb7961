/* A program linked against libnccl.so.2 with a DT_RPATH to another copy, as
 * pip's torch is: prints the version it gets, whether mkccl is in the
 * process, and the version a later dlopen("libnccl.so.2") by name gets. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>

#include "nccl.h"

int main(void) {
  int v = 0, later = 0;
  if (ncclGetVersion(&v) != ncclSuccess) return 1;
  void* h = dlopen("libnccl.so.2", RTLD_NOW | RTLD_GLOBAL);
  ncclResult_t (*get)(int*) = h ? (ncclResult_t(*)(int*))dlsym(h, "ncclGetVersion") : NULL;
  if (!get || get(&later) != ncclSuccess) return 1;
  printf("version %d mkccl %s later %d\n", v, dlsym(RTLD_DEFAULT, "mkcclInfoReport") ? "yes" : "no", later);
  return 0;
}
