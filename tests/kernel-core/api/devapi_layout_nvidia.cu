// The device API's layouts as NVIDIA's NCCL 2.28.9 headers have them
// (compiled by nvcc against those headers alone), and the values their
// inline code assumes.
#include <nccl.h>
#include <nccl_device.h>

#include "devapi_layout.h"

typedef ncclDevCommWindowTable devapi_window_table;
typedef ncclDevCommWindowTable::Entry devapi_window_entry;

extern "C" const devapi_layout_t devapi_layout_nvidia[] = {
    DEVAPI_LAYOUT(DEVAPI_SIZE, DEVAPI_FIELD)
    {"NCCL_GIN_MAX_CONTEXTS", NCCL_GIN_MAX_CONTEXTS},
    {"resource handle unit", ncclGetResourceBufferOffset(1)},
    {"NCCL_VERSION_CODE", NCCL_VERSION_CODE},
    {nullptr, 0}};
