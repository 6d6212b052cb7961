/* Devices and their properties: listed, then sanity-checked one by one.
 * A property NCCL tolerates (an unknown speed) is a warning. */
#include <stdio.h>
#include <string.h>

#include "netcheck.h"

#define NC_PTR_KNOWN (NCCL_PTR_HOST | NCCL_PTR_CUDA | NCCL_PTR_DMABUF)

static void nc_append(char* buf, size_t cap, const char* what) {
  size_t n = strlen(buf);
  snprintf(buf + n, cap - n, "%s%s", n ? "; " : "", what);
}

/* One device's properties: what the kit fails (NCCL would misbehave or
 * refuse) into out[], what NCCL tolerates into odd[]; "" when none. */
static void netcheck_props_problems(const ncclNetProperties_v12_t* p, int dev, int ndev, char* out, size_t cap,
                                    char* odd, size_t oddCap) {
  char tmp[160];
  out[0] = odd[0] = 0;
  if (!p->name || !p->name[0]) nc_append(out, cap, "empty name");
  if (p->pciPath && p->pciPath[0] != '/') nc_append(out, cap, "pciPath is not an absolute path");
  /* NCCL's topology and mkccl's take a speed <= 0 as unknown: 10000 Mbps. */
  if (p->speed <= 0)
    snprintf(tmp, sizeof(tmp), "speed %d Mbps (unknown: NCCL and mkccl assume 10000)", p->speed), nc_append(odd, oddCap, tmp);
  if (p->port < 0) nc_append(out, cap, "negative port");
  if (!(p->ptrSupport & NCCL_PTR_HOST)) nc_append(out, cap, "ptrSupport lacks NCCL_PTR_HOST");
  /* NCCL tests the bits it knows and ignores the rest. */
  if (p->ptrSupport & ~NC_PTR_KNOWN)
    snprintf(tmp, sizeof(tmp), "unknown ptrSupport bits 0x%x (ignored)", p->ptrSupport & ~NC_PTR_KNOWN),
        nc_append(odd, oddCap, tmp);
  if ((p->ptrSupport & NCCL_PTR_DMABUF) && !(p->ptrSupport & NCCL_PTR_CUDA))
    nc_append(out, cap, "NCCL_PTR_DMABUF without NCCL_PTR_CUDA");
  if (p->maxRecvs < 1 || p->maxRecvs > 64) snprintf(tmp, sizeof(tmp), "maxRecvs %d", p->maxRecvs), nc_append(out, cap, tmp);
  if (p->maxComms < 1) snprintf(tmp, sizeof(tmp), "maxComms %d", p->maxComms), nc_append(out, cap, tmp);
  if (!(p->latency >= 0)) nc_append(out, cap, "negative or NaN latency");
  if (p->maxP2pBytes < 1 || p->maxP2pBytes > (size_t)NCCL_MAX_NET_SIZE_BYTES)
    snprintf(tmp, sizeof(tmp), "maxP2pBytes %zu out of (0, 1 TiB]", p->maxP2pBytes), nc_append(out, cap, tmp);
  if (p->maxCollBytes > (size_t)NCCL_MAX_NET_SIZE_BYTES)
    snprintf(tmp, sizeof(tmp), "maxCollBytes %zu over 1 TiB", p->maxCollBytes), nc_append(out, cap, tmp);
  if (p->netDeviceType != NCCL_NET_DEVICE_HOST && p->netDeviceType != NCCL_NET_DEVICE_UNPACK)
    snprintf(tmp, sizeof(tmp), "netDeviceType %d", (int)p->netDeviceType), nc_append(out, cap, tmp);
  if (p->netDeviceType == NCCL_NET_DEVICE_UNPACK && p->netDeviceVersion != NCCL_NET_DEVICE_UNPACK_VERSION)
    snprintf(tmp, sizeof(tmp), "UNPACK version 0x%x", p->netDeviceVersion), nc_append(out, cap, tmp);
  if (p->vProps.ndevs < 0 || p->vProps.ndevs > NCCL_NET_MAX_DEVS_PER_NIC_V12) {
    snprintf(tmp, sizeof(tmp), "vProps.ndevs %d", p->vProps.ndevs), nc_append(out, cap, tmp);
  } else {
    for (int i = 0; i < p->vProps.ndevs; i++)
      if (p->vProps.devs[i] < 0 || p->vProps.devs[i] >= ndev)
        snprintf(tmp, sizeof(tmp), "vProps.devs[%d] = %d out of range", i, p->vProps.devs[i]), nc_append(out, cap, tmp);
    if (p->vProps.ndevs == 1 && p->vProps.devs[0] != dev)
      snprintf(tmp, sizeof(tmp), "vProps names device %d, not itself", p->vProps.devs[0]), nc_append(out, cap, tmp);
  }
  if (p->maxMultiRequestSize < 1)
    snprintf(tmp, sizeof(tmp), "maxMultiRequestSize %d", p->maxMultiRequestSize), nc_append(out, cap, tmp);
}

void netcheck_props_check(const netcheck_plugin_t* p, int* ndevOut) {
  int ndev = -1;
  char detail[1024], odd[512];
  ncclResult_t res = p->net->devices(&ndev);
  snprintf(detail, sizeof(detail), "devices() returned %d, %d device(s)", (int)res, ndev);
  int ok = res == ncclSuccess && ndev >= 0;
  netcheck_line(ok ? "PASS" : "FAIL", "devices", detail);
  *ndevOut = ok ? ndev : -1;
  if (!ok) return;
  for (int d = 0; d < ndev; d++) {
    ncclNetProperties_v12_t props;
    memset(&props, 0xa5, sizeof(props)); /* fields left unset show up as garbage */
    char name[32];
    snprintf(name, sizeof(name), "props/dev%d", d);
    res = p->net->getProperties(d, &props);
    if (res != ncclSuccess) {
      snprintf(detail, sizeof(detail), "getProperties returned %d", (int)res);
      netcheck_line("FAIL", name, detail);
      continue;
    }
    printf("     dev %d: name %s pciPath %s guid 0x%llx speed %d Mbps port %d ptrSupport 0x%x%s%s%s maxComms %d "
           "maxRecvs %d regIsGlobal %d forceFlush %d latency %.1f maxP2pBytes %zu type %s vdevs %d\n",
           d, props.name ? props.name : "(null)", props.pciPath ? props.pciPath : "(none)",
           (unsigned long long)props.guid, props.speed, props.port, props.ptrSupport,
           props.ptrSupport & NCCL_PTR_HOST ? " HOST" : "", props.ptrSupport & NCCL_PTR_CUDA ? " CUDA" : "",
           props.ptrSupport & NCCL_PTR_DMABUF ? " DMABUF" : "", props.maxComms, props.maxRecvs, props.regIsGlobal,
           props.forceFlush, (double)props.latency, props.maxP2pBytes,
           props.netDeviceType == NCCL_NET_DEVICE_UNPACK ? "UNPACK" : "HOST", props.vProps.ndevs);
    netcheck_props_problems(&props, d, ndev, detail, sizeof(detail), odd, sizeof(odd));
    if (detail[0]) netcheck_line("FAIL", name, detail);
    if (odd[0]) netcheck_line("WARN", name, odd);
    if (!detail[0] && !odd[0]) netcheck_line("PASS", name, "sane");
  }
}
