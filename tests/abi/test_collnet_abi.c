/* The collnet ABI headers against NCCL's layouts: every member of every
 * ncclCollNet_vN_t at its place in NCCL's order, each table's size, the
 * scattered-buffer entries, and the signatures that change between
 * versions. The offsets are checked twice: at compile time (a moved field
 * stops this file from building, naming the field) and at run time (the
 * test lists every mismatch). Real plugins cross this ABI, so a moved
 * member is a broken plugin. */
#include <stddef.h>

#include "check.h"
#include "collnet/nccl_collnet.h"

#define P sizeof(void*)

static int failures;

/* Member `field` of `type` is its idx-th pointer (name is the 0th). */
#define AT(type, field, idx)                                                                 \
  _Static_assert(offsetof(type, field) == (idx) * P, #type "." #field " is not member " #idx); \
  at_check(#type, #field, offsetof(type, field), (idx) * P)

static void at_check(const char* type, const char* field, size_t got, size_t want) {
  if (got == want) return;
  fprintf(stderr, "%s.%s at offset %zu, NCCL has it at %zu\n", type, field, got, want);
  failures++;
}

#define SAME_TYPE(a, b) __builtin_types_compatible_p(__typeof__(a), b)
#define MEMBER(type, field) (((type*)0)->field)

/* v6 and v7: the same 15 members; only the properties differ. */
#define CHECK_V6_SHAPE(T, PROPS)                                                                             \
  do {                                                                                                       \
    AT(T, name, 0);                                                                                          \
    AT(T, init, 1);                                                                                          \
    AT(T, devices, 2);                                                                                       \
    AT(T, getProperties, 3);                                                                                 \
    AT(T, listen, 4);                                                                                        \
    AT(T, connect, 5);                                                                                       \
    AT(T, reduceSupport, 6);                                                                                 \
    AT(T, regMr, 7);                                                                                         \
    AT(T, regMrDmaBuf, 8);                                                                                   \
    AT(T, deregMr, 9);                                                                                       \
    AT(T, iallreduce, 10);                                                                                   \
    AT(T, iflush, 11);                                                                                       \
    AT(T, test, 12);                                                                                         \
    AT(T, closeColl, 13);                                                                                    \
    AT(T, closeListen, 14);                                                                                  \
    _Static_assert(sizeof(T) == 15 * P, #T " has 15 members");                                               \
    _Static_assert(SAME_TYPE(MEMBER(T, getProperties), ncclResult_t (*)(int, PROPS*)), #T " properties");    \
    _Static_assert(SAME_TYPE(MEMBER(T, init), ncclResult_t (*)(ncclDebugLogger_t)), #T ".init");             \
    _Static_assert(SAME_TYPE(MEMBER(T, regMr), ncclResult_t (*)(void*, void*, int, int, void**)), #T ".regMr"); \
    _Static_assert(SAME_TYPE(MEMBER(T, iallreduce), ncclResult_t (*)(void*, void*, void*, int, ncclDataType_t, \
                                                                      ncclRedOp_t, void*, void*, void**)),   \
                   #T ".iallreduce count is int");                                                           \
  } while (0)

/* v8 on: iallgather and ireducescatter after iallreduce. */
#define CHECK_V8_SHAPE(T)              \
  do {                                 \
    AT(T, name, 0);                    \
    AT(T, init, 1);                    \
    AT(T, devices, 2);                 \
    AT(T, getProperties, 3);           \
    AT(T, listen, 4);                  \
    AT(T, connect, 5);                 \
    AT(T, reduceSupport, 6);           \
    AT(T, regMr, 7);                   \
    AT(T, regMrDmaBuf, 8);             \
    AT(T, deregMr, 9);                 \
    AT(T, iallreduce, 10);             \
    AT(T, iallgather, 11);             \
    AT(T, ireducescatter, 12);         \
    AT(T, iflush, 13);                 \
    AT(T, test, 14);                   \
    AT(T, closeColl, 15);              \
    AT(T, closeListen, 16);            \
  } while (0)

#define ALLREDUCE_SIZE_T \
  ncclResult_t (*)(void*, void*, void*, size_t, ncclDataType_t, ncclRedOp_t, void*, void*, void**)
#define INIT_CTX ncclResult_t (*)(void**, uint64_t, ncclDebugLogger_t)

static void check_v6_v7(void) {
  CHECK_V6_SHAPE(ncclCollNet_v6_t, ncclNetProperties_v6_t);
  CHECK_V6_SHAPE(ncclCollNet_v7_t, ncclNetProperties_v7_t);
}

static void check_v8(void) {
  CHECK_V8_SHAPE(ncclCollNet_v8_t);
  _Static_assert(sizeof(ncclCollNet_v8_t) == 17 * P, "v8 has 17 members");
  _Static_assert(SAME_TYPE(MEMBER(ncclCollNet_v8_t, regMr), ncclResult_t (*)(void*, void*, size_t, int, void**)),
                 "v8 regMr takes size_t");
  _Static_assert(SAME_TYPE(MEMBER(ncclCollNet_v8_t, iallreduce), ncclResult_t (*)(void*, void*, void*, int,
                                                                                  ncclDataType_t, ncclRedOp_t,
                                                                                  void*, void*, void**)),
                 "v8 iallreduce count is int");
  _Static_assert(SAME_TYPE(MEMBER(ncclCollNet_v8_t, getProperties), ncclResult_t (*)(int, ncclNetProperties_v8_t*)),
                 "v8 properties");
  /* The v8 SGE: a 32-bit size after two pointers, padded to 24. */
  AT(ncclNetSGE_v8_t, mhandle, 0);
  AT(ncclNetSGE_v8_t, address, 1);
  AT(ncclNetSGE_v8_t, size, 2);
  _Static_assert(sizeof(((ncclNetSGE_v8_t*)0)->size) == 4, "v8 SGE size is 32-bit");
  _Static_assert(sizeof(ncclNetSGE_v8_t) == 24, "v8 SGE is 24 bytes");
}

#define CHECK_VNIC(T, SGE, PROPS, VPROPS)                                                                       \
  do {                                                                                                          \
    CHECK_V8_SHAPE(T);                                                                                          \
    AT(T, makeVDevice, 17);                                                                                     \
    AT(SGE, mhandle, 0);                                                                                        \
    AT(SGE, address, 1);                                                                                        \
    AT(SGE, size, 2);                                                                                           \
    _Static_assert(SAME_TYPE(MEMBER(SGE, size), size_t), #SGE " size is size_t");                               \
    _Static_assert(sizeof(SGE) == 24, #SGE " is 24 bytes");                                                     \
    _Static_assert(SAME_TYPE(MEMBER(T, iallreduce), ALLREDUCE_SIZE_T), #T ".iallreduce count is size_t");       \
    _Static_assert(SAME_TYPE(MEMBER(T, getProperties), ncclResult_t (*)(int, PROPS*)), #T " properties");      \
    _Static_assert(SAME_TYPE(MEMBER(T, makeVDevice), ncclResult_t (*)(int*, VPROPS*)), #T ".makeVDevice");     \
    _Static_assert(SAME_TYPE(MEMBER(T, iallgather), ncclResult_t (*)(void*, void*, int, SGE*, size_t, size_t,   \
                                                                     size_t, void*, void**)),                   \
                   #T ".iallgather");                                                                           \
  } while (0)

static void check_v9_v10(void) {
  CHECK_VNIC(ncclCollNet_v9_t, ncclNetSGE_v9_t, ncclNetProperties_v9_t, ncclNetVDeviceProps_v9_t);
  CHECK_VNIC(ncclCollNet_v10_t, ncclNetSGE_v10_t, ncclNetProperties_v10_t, ncclNetVDeviceProps_v10_t);
  _Static_assert(sizeof(ncclCollNet_v9_t) == 18 * P, "v9 has 18 members");
  _Static_assert(sizeof(ncclCollNet_v10_t) == 18 * P, "v10 has 18 members");
  _Static_assert(SAME_TYPE(MEMBER(ncclCollNet_v10_t, init), ncclResult_t (*)(ncclDebugLogger_t)), "v10 init");
  _Static_assert(SAME_TYPE(MEMBER(ncclCollNet_v10_t, listen), ncclResult_t (*)(int, void*, void**)), "v10 listen");
}

static void check_v11_v12(void) {
  CHECK_VNIC(ncclCollNet_v11_t, ncclNetSGE_v11_t, ncclNetProperties_v11_t, ncclNetVDeviceProps_v11_t);
  CHECK_VNIC(ncclCollNet_v12_t, ncclNetSGE_v12_t, ncclNetProperties_v12_t, ncclNetVDeviceProps_v12_t);
  AT(ncclCollNet_v11_t, finalize, 18);
  AT(ncclCollNet_v12_t, finalize, 18);
  _Static_assert(sizeof(ncclCollNet_v11_t) == 19 * P, "v11 has 19 members");
  _Static_assert(sizeof(ncclCollNet_v12_t) == 19 * P, "v12 has 19 members");
  _Static_assert(SAME_TYPE(MEMBER(ncclCollNet_v11_t, init), INIT_CTX), "v11 init takes a ctx");
  _Static_assert(SAME_TYPE(MEMBER(ncclCollNet_v12_t, init), INIT_CTX), "v12 init takes a ctx");
  _Static_assert(SAME_TYPE(MEMBER(ncclCollNet_v12_t, listen), ncclResult_t (*)(void*, int, void*, void**)),
                 "v12 listen takes the ctx");
  _Static_assert(SAME_TYPE(MEMBER(ncclCollNet_v12_t, connect), ncclResult_t (*)(void**, int, int, void*, void**)),
                 "v12 connect");
}

int main(void) {
  CHECK_EQ_INT(sizeof(void*), 8); /* NCCL's plugins are LP64 */
  check_v6_v7();
  check_v8();
  check_v9_v10();
  check_v11_v12();
  CHECK(strcmp(NCCL_COLLNET_PLUGIN_SYMBOL_V8, "ncclCollNetPlugin_v8") == 0);
  CHECK(strcmp(NCCL_COLLNET_PLUGIN_SYMBOL_V12, "ncclCollNetPlugin_v12") == 0);
  CHECK_MSG(failures == 0, "%d members are not where NCCL has them", failures);
  return 0;
}
