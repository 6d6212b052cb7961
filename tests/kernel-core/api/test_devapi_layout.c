/* mkccl's device API structs (kernel-core/api/device_api.h) against
 * NVIDIA's NCCL 2.28.9 headers (devapi_layout_nvidia.cu): every size and
 * offset the same, or kernels built against NVIDIA's headers read the
 * wrong fields of what mkccl fills. */
#include <stdio.h>
#include <string.h>

#include "api/device_api.h"
#include "check.h"
#include "devapi_layout.h"
#include "gin/gin_gfd.h"

extern const devapi_layout_t devapi_layout_nvidia[];
void devapi_nvidia_gfd(const devapi_gfd_fields_t* f, unsigned long long out[8]);

typedef mk_window_table_t devapi_window_table;
typedef mk_window_table_entry_t devapi_window_entry;
typedef gin_gpu_ctx_t devapi_gin_ctx;

static const devapi_layout_t devapi_layout_mkccl[] = {
    DEVAPI_LAYOUT(DEVAPI_SIZE, DEVAPI_FIELD)
    {"NCCL_GIN_MAX_CONTEXTS", MK_GIN_MAX_CONTEXTS},
    {"resource handle unit", MK_RESOURCE_UNIT},
    {"NCCL_VERSION_CODE", NCCL_VERSION_CODE},
    {"NCCL_NET_DEVICE_GIN_PROXY", GIN_TYPE_PROXY},
    {"NCCL_NET_DEVICE_GIN_GDAKI", GIN_TYPE_GDAKI},
    {"NCCL_GIN_PROXY_VERSION", GIN_PROXY_VERSION},
    {"ncclGinProxyOpPut", GIN_OP_PUT},
    {"ncclGinProxyOpWithInline", GIN_OP_INLINE},
    {"ncclGinProxyOpWithCounter", GIN_OP_COUNTER},
    {"ncclGinProxyOpWithSignalInc", GIN_OP_SIGNAL_INC},
    {"ncclGinProxyOpWithSignalAdd", GIN_OP_SIGNAL_ADD},
    {"sizeof(ncclGinProxyGfd_t)", GIN_GFD_BYTES},
    {"ncclGinSignalInc", 0},
    {"ncclGinSignalAdd", 1},
    {NULL, 0}};

/* A descriptor written by NVIDIA's bitfields reads back field for field,
 * and mkccl's writer (tests that play the GPU) makes the same bits. */
static void check_gfd(devapi_gfd_fields_t f) {
  unsigned long long q[GIN_GFD_QWORDS];
  devapi_nvidia_gfd(&f, q);
  uint64_t slot[GIN_GFD_QWORDS];
  for (int i = 0; i < GIN_GFD_QWORDS; i++) slot[i] = q[i];
  gin_gfd_t g;
  CHECK_EQ_INT(gin_gfd_take(slot, &g), 1);
  for (int i = 0; i < GIN_GFD_QWORDS; i++) CHECK(slot[i] == 0); /* cleared for the GPU's next round */
  CHECK(g.op == f.op && g.size == f.size && g.dstOff == f.dstOff && g.dstWin == f.dstWin);
  CHECK(g.counterId == f.counterId && g.signalId == f.signalId && g.signalValue == f.signalValue);
  if (f.hasInline) CHECK(g.inlineValue == f.inlineValue);
  else CHECK(g.srcOff == f.srcOff && g.srcWin == f.srcWin);
  gin_gfd_t w = {f.op, f.size, f.srcOff, f.srcWin, f.dstOff, f.dstWin, f.inlineValue, f.counterId, f.signalId,
                 f.signalValue};
  gin_gfd_write(slot, &w);
  for (int i = 0; i < GIN_GFD_QWORDS; i++) CHECK(slot[i] == q[i]);
  /* Any qword still without its valid bit: not taken, not cleared. */
  slot[5] &= ~1ull;
  CHECK_EQ_INT(gin_gfd_take(slot, &g), 0);
  CHECK(slot[0] == q[0]);
}

int main(void) {
  int n = 0, bad = 0;
  for (; devapi_layout_mkccl[n].name; n++) {
    const devapi_layout_t* m = &devapi_layout_mkccl[n];
    const devapi_layout_t* v = &devapi_layout_nvidia[n];
    CHECK(v->name != NULL);
    CHECK(strcmp(v->name, m->name) == 0);
    if (v->value != m->value) {
      fprintf(stderr, "%s: NVIDIA's headers %zu, mkccl %zu\n", m->name, v->value, m->value);
      bad++;
    }
  }
  CHECK(devapi_layout_nvidia[n].name == NULL);
  CHECK_EQ_INT(bad, 0);
  check_gfd((devapi_gfd_fields_t){0, GIN_OP_PUT | GIN_OP_SIGNAL_ADD | GIN_OP_COUNTER, (1ull << 40) + 3,
                                  0x7edcba9876543210ull, 0x1234567, (1ull << 62) + 5, 17, 0, 0xfedcba9876543210ull,
                                  0xbeef, 0xcafe});
  check_gfd((devapi_gfd_fields_t){1, GIN_OP_PUT | GIN_OP_INLINE | GIN_OP_SIGNAL_INC, 8, 0, 0, 4096, 3,
                                  0x8877665544332211ull, 1, 0, 65535});
  check_gfd((devapi_gfd_fields_t){0, GIN_OP_PUT | GIN_OP_SIGNAL_INC, 0, 0, 0, 0, 0, 0, 1, 0, 7});
  printf("%d sizes, offsets and constants agree with NVIDIA's headers\n", n);
  return 0;
}
