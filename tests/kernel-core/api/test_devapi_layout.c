/* mkccl's device API structs (kernel-core/api/device_api.h) against
 * NVIDIA's NCCL 2.28.9 headers (devapi_layout_nvidia.cu): every size and
 * offset the same, or kernels built against NVIDIA's headers read the
 * wrong fields of what mkccl fills. */
#include <stdio.h>
#include <string.h>

#include "api/device_api.h"
#include "check.h"
#include "devapi_layout.h"

extern const devapi_layout_t devapi_layout_nvidia[];

typedef mk_window_table_t devapi_window_table;
typedef mk_window_table_entry_t devapi_window_entry;

static const devapi_layout_t devapi_layout_mkccl[] = {
    DEVAPI_LAYOUT(DEVAPI_SIZE, DEVAPI_FIELD)
    {"NCCL_GIN_MAX_CONTEXTS", MK_GIN_MAX_CONTEXTS},
    {"resource handle unit", MK_RESOURCE_UNIT},
    {"NCCL_VERSION_CODE", NCCL_VERSION_CODE},
    {NULL, 0}};

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
  printf("%d sizes, offsets and constants agree with NVIDIA's headers\n", n);
  return 0;
}
