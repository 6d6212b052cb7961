/* Net properties of ABI v6..v11 as v12's (net_props_up.h). */
#include "plugin/net_props_up.h"

#include "plugin/net_adapt_common.h"

void net_props_up_v6(const ncclNetProperties_v6_t* p, int dev, ncclNetProperties_v12_t* out) {
  net_adapt_props_defaults(out, dev);
  out->name = p->name;
  out->pciPath = p->pciPath;
  out->guid = p->guid;
  out->ptrSupport = p->ptrSupport;
  out->speed = p->speed;
  out->port = p->port;
  out->latency = p->latency;
  out->maxComms = p->maxComms;
  out->maxRecvs = p->maxRecvs;
}

void net_props_up_v7(const ncclNetProperties_v7_t* p, int dev, ncclNetProperties_v12_t* out) {
  net_adapt_props_defaults(out, dev);
  out->name = p->name;
  out->pciPath = p->pciPath;
  out->guid = p->guid;
  out->ptrSupport = p->ptrSupport;
  out->speed = p->speed;
  out->port = p->port;
  out->latency = p->latency;
  out->maxComms = p->maxComms;
  out->maxRecvs = p->maxRecvs;
  out->netDeviceType = p->netDeviceType;
  out->netDeviceVersion = p->netDeviceVersion;
}

void net_props_up_v8(const ncclNetProperties_v8_t* p, int dev, ncclNetProperties_v12_t* out) {
  net_adapt_props_defaults(out, dev);
  out->name = p->name;
  out->pciPath = p->pciPath;
  out->guid = p->guid;
  out->ptrSupport = p->ptrSupport;
  out->regIsGlobal = p->regIsGlobal;
  out->speed = p->speed;
  out->port = p->port;
  out->latency = p->latency;
  out->maxComms = p->maxComms;
  out->maxRecvs = p->maxRecvs;
  out->netDeviceType = p->netDeviceType;
  out->netDeviceVersion = p->netDeviceVersion;
}

void net_props_up_v9(const ncclNetProperties_v9_t* p, int dev, ncclNetProperties_v12_t* out) {
  net_adapt_props_defaults(out, dev);
  out->name = p->name;
  out->pciPath = p->pciPath;
  out->guid = p->guid;
  out->ptrSupport = p->ptrSupport;
  out->regIsGlobal = p->regIsGlobal;
  out->forceFlush = p->forceFlush;
  out->speed = p->speed;
  out->port = p->port;
  out->latency = p->latency;
  out->maxComms = p->maxComms;
  out->maxRecvs = p->maxRecvs;
  out->netDeviceType = p->netDeviceType;
  out->netDeviceVersion = p->netDeviceVersion;
  net_adapt_vprops_up(p->vProps.ndevs, p->vProps.devs, NCCL_NET_MAX_DEVS_PER_NIC_V9, &out->vProps);
  out->maxP2pBytes = p->maxP2pBytes;
  out->maxCollBytes = p->maxCollBytes;
}

void net_props_up_v10(const ncclNetProperties_v10_t* p, int dev, ncclNetProperties_v12_t* out) {
  net_adapt_props_defaults(out, dev);
  out->name = p->name;
  out->pciPath = p->pciPath;
  out->guid = p->guid;
  out->ptrSupport = p->ptrSupport;
  out->regIsGlobal = p->regIsGlobal;
  out->forceFlush = p->forceFlush;
  out->speed = p->speed;
  out->port = p->port;
  out->latency = p->latency;
  out->maxComms = p->maxComms;
  out->maxRecvs = p->maxRecvs;
  out->netDeviceType = p->netDeviceType;
  out->netDeviceVersion = p->netDeviceVersion;
  net_adapt_vprops_up(p->vProps.ndevs, p->vProps.devs, NCCL_NET_MAX_DEVS_PER_NIC_V10, &out->vProps);
  out->maxP2pBytes = p->maxP2pBytes;
  out->maxCollBytes = p->maxCollBytes;
}

void net_props_up_v11(const ncclNetProperties_v11_t* p, int dev, ncclNetProperties_v12_t* out) {
  net_adapt_props_defaults(out, dev);
  out->name = p->name;
  out->pciPath = p->pciPath;
  out->guid = p->guid;
  out->ptrSupport = p->ptrSupport;
  out->regIsGlobal = p->regIsGlobal;
  out->forceFlush = p->forceFlush;
  out->speed = p->speed;
  out->port = p->port;
  out->latency = p->latency;
  out->maxComms = p->maxComms;
  out->maxRecvs = p->maxRecvs;
  out->netDeviceType = p->netDeviceType;
  out->netDeviceVersion = p->netDeviceVersion;
  net_adapt_vprops_up(p->vProps.ndevs, p->vProps.devs, NCCL_NET_MAX_DEVS_PER_NIC_V11, &out->vProps);
  out->maxP2pBytes = p->maxP2pBytes;
  out->maxCollBytes = p->maxCollBytes;
  out->maxMultiRequestSize = p->maxMultiRequestSize;
}
