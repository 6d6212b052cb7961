/* Name tables of the profiler ABI (NCCL's spellings). */
#include "profile/profile_names.h"

#include <string.h>

static const char* const names_func[] = {"Broadcast", "Reduce", "AllGather", "ReduceScatter",
                                         "AllReduce", "SendRecv", "Send", "Recv"};
static const char* const names_datatype[] = {"ncclInt8",    "ncclUint8",   "ncclInt32",   "ncclUint32",
                                             "ncclInt64",   "ncclUint64",  "ncclFloat16", "ncclFloat32",
                                             "ncclFloat64", "ncclBfloat16", "ncclFloat8e4m3", "ncclFloat8e5m2"};
static const char* const names_algo[] = {"Tree", "Ring", "CollNetDirect", "CollNetChain", "NVLS", "NVLSTree", "PAT",
                                         "Flat" /* mkccl's own (MK_ALGO_FLAT) */, "Symmetric" /* MK_ALGO_SYMM */};
static const char* const names_proto[] = {"LL", "LL128", "Simple"};

#define COUNT(a) (int)(sizeof(a) / sizeof(a[0]))

static const char* names_get(const char* const* t, int n, int i) { return i >= 0 && i < n ? t[i] : "Unknown"; }

static unsigned names_find(const char* const* t, int n, const char* s) {
  for (int i = 0; s && i < n; i++)
    if (strcmp(t[i], s) == 0) return (unsigned)i;
  return 0xff;
}

const char* profile_func_str(int f) { return names_get(names_func, COUNT(names_func), f); }
const char* profile_datatype_str(int d) { return names_get(names_datatype, COUNT(names_datatype), d); }
const char* profile_algo_str(int a) { return names_get(names_algo, COUNT(names_algo), a); }
const char* profile_proto_str(int p) { return names_get(names_proto, COUNT(names_proto), p); }
unsigned profile_func_code(const char* s) { return names_find(names_func, COUNT(names_func), s); }
unsigned profile_datatype_code(const char* s) { return names_find(names_datatype, COUNT(names_datatype), s); }
unsigned profile_algo_code(const char* s) { return names_find(names_algo, COUNT(names_algo), s); }
unsigned profile_proto_code(const char* s) { return names_find(names_proto, COUNT(names_proto), s); }
