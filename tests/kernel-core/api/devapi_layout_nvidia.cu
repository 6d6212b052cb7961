// The device API's layouts as NVIDIA's NCCL 2.28.9 headers have them
// (compiled by nvcc against those headers alone), and the values their
// inline code assumes.
#include <nccl.h>
#include <nccl_device.h>
#include <nccl_device/gin/proxy/gin_proxy_device_host_common.h>
#include <string.h>

#include "devapi_layout.h"

typedef ncclDevCommWindowTable devapi_window_table;
typedef ncclDevCommWindowTable::Entry devapi_window_entry;
typedef ncclGinProxyGpuCtx_t devapi_gin_ctx;

extern "C" const devapi_layout_t devapi_layout_nvidia[] = {
    DEVAPI_LAYOUT(DEVAPI_SIZE, DEVAPI_FIELD)
    {"NCCL_GIN_MAX_CONTEXTS", NCCL_GIN_MAX_CONTEXTS},
    {"resource handle unit", ncclGetResourceBufferOffset(1)},
    {"NCCL_VERSION_CODE", NCCL_VERSION_CODE},
    {"NCCL_NET_DEVICE_GIN_PROXY", NCCL_NET_DEVICE_GIN_PROXY},
    {"NCCL_NET_DEVICE_GIN_GDAKI", NCCL_NET_DEVICE_GIN_GDAKI},
    {"NCCL_GIN_PROXY_VERSION", NCCL_GIN_PROXY_VERSION},
    {"ncclGinProxyOpPut", ncclGinProxyOpPut},
    {"ncclGinProxyOpWithInline", ncclGinProxyOpWithInline},
    {"ncclGinProxyOpWithCounter", ncclGinProxyOpWithCounter},
    {"ncclGinProxyOpWithSignalInc", ncclGinProxyOpWithSignalInc},
    {"ncclGinProxyOpWithSignalAdd", ncclGinProxyOpWithSignalAdd},
    {"sizeof(ncclGinProxyGfd_t)", sizeof(ncclGinProxyGfd_t)},
    {"ncclGinSignalInc", ncclGinSignalInc},
    {"ncclGinSignalAdd", ncclGinSignalAdd},
    {nullptr, 0}};

// The descriptor the GPU's put writes (gin_proxy.h's buildGfd sets these
// fields, each qword's valid bit included), through NVIDIA's own unions:
// the host's reading of those bits is checked against it.
extern "C" void devapi_nvidia_gfd(const devapi_gfd_fields_t* f, unsigned long long out[8]) {
  ncclGinProxyGfd_t g;
  memset(&g, 0, sizeof(g));
  g.qword[ncclGinProxyGfdHeader].header.flag = 1;
  g.qword[ncclGinProxyGfdHeader].header.op = f->op;
  g.qword[ncclGinProxyGfdHeader].header.size = f->size;
  if (f->hasInline) {
    g.qword[ncclGinProxyGfdInlineLow].inlineLow.flag = 1;
    g.qword[ncclGinProxyGfdInlineLow].inlineLow.inlineValLow = (uint32_t)f->inlineValue;
    g.qword[ncclGinProxyGfdInlineLow].inlineLow.inlineValLow2 = (uint16_t)(f->inlineValue >> 32);
    g.qword[ncclGinProxyGfdInlineHigh].inlineHigh.flag = 1;
    g.qword[ncclGinProxyGfdInlineHigh].inlineHigh.inlineValHigh = (uint16_t)(f->inlineValue >> 48);
  } else {
    g.qword[ncclGinProxyGfdSrcOff].srcOff.flag = 1;
    g.qword[ncclGinProxyGfdSrcOff].srcOff.srcOff = f->srcOff;
    g.qword[ncclGinProxyGfdSrcHandle].srcHandle.flag = 1;
    g.qword[ncclGinProxyGfdSrcHandle].srcHandle.srcHandle = f->srcWin;
  }
  g.qword[ncclGinProxyGfdDstOff].dstOff.flag = 1;
  g.qword[ncclGinProxyGfdDstOff].dstOff.dstOff = f->dstOff;
  g.qword[ncclGinProxyGfdDstHandle].dstHandle.flag = 1;
  g.qword[ncclGinProxyGfdDstHandle].dstHandle.dstHandle = f->dstWin;
  g.qword[ncclGinProxyGfdCompletion].completion.flag = 1;
  g.qword[ncclGinProxyGfdCompletion].completion.counterId = (uint16_t)f->counterId;
  g.qword[ncclGinProxyGfdCompletion].completion.signalId = (uint16_t)f->signalId;
  g.qword[ncclGinProxyGfdCompletion].completion.signalValLow = (uint16_t)f->signalValue;
  g.qword[ncclGinProxyGfdSignalVal].signalVal.flag = 1;
  g.qword[ncclGinProxyGfdSignalVal].signalVal.signalValLow2 = (uint16_t)(f->signalValue >> 16);
  g.qword[ncclGinProxyGfdSignalVal].signalVal.signalValHigh = (uint32_t)(f->signalValue >> 32);
  g.qword[ncclGinProxyGfdReserved].flag.v = 1;
  for (int i = 0; i < ncclGinProxyGfdQwords; i++) out[i] = g.qword[i].raw;
}
