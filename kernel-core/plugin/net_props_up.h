/* A net plugin's properties of ABI v6..v11 as ncclNetProperties_v12_t, with
 * NCCL's defaults for what a version lacks (net_adapt.h lists them). Net and
 * collnet plugins report the same properties, so both kinds' adapters use
 * these. `dev` is the device asked for: the vNIC of one device of versions
 * without vNICs. */
#ifndef MKCCL_PLUGIN_NET_PROPS_UP_H
#define MKCCL_PLUGIN_NET_PROPS_UP_H

#include "net/nccl_net.h"

void net_props_up_v6(const ncclNetProperties_v6_t* p, int dev, ncclNetProperties_v12_t* out);
void net_props_up_v7(const ncclNetProperties_v7_t* p, int dev, ncclNetProperties_v12_t* out);
void net_props_up_v8(const ncclNetProperties_v8_t* p, int dev, ncclNetProperties_v12_t* out);
void net_props_up_v9(const ncclNetProperties_v9_t* p, int dev, ncclNetProperties_v12_t* out);
void net_props_up_v10(const ncclNetProperties_v10_t* p, int dev, ncclNetProperties_v12_t* out);
void net_props_up_v11(const ncclNetProperties_v11_t* p, int dev, ncclNetProperties_v12_t* out);

#endif
