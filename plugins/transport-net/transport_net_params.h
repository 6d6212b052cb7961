/* transport-net's parameters: declared once in transport_net_params.def
 * (exported with mkcclPluginInfo_v1, so the core lists and sets them) and
 * read through the services table an init gets: the core answers, and a
 * name it does not answer gets the declared default. */
#ifndef TRANSPORT_NET_PARAMS_H
#define TRANSPORT_NET_PARAMS_H

#include <stdint.h>

#include "mkccl_plugin_params.h"
#include "transport/mkccl_transport_v1.h"

/* transport_net_param_<NAME>(services): typed accessors over
 * transport_net_params.def (STRING ones never NULL). */
#define PLUGIN_PARAM(name, type, def, help) \
  PLUGIN_PARAM_CTYPE_##type transport_net_param_##name(const mkcclTransportServices_v1* services);
#include "transport_net_params.def"
#undef PLUGIN_PARAM

#endif
