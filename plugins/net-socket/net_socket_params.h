/* The plugin's parameters: declared once in net_socket_params.def (exported
 * with mkcclPluginInfo_v1 so mkccl lists and sets them), read here. Under
 * mkccl the core answers; hosted by NCCL the environment does. */
#ifndef NET_SOCKET_PARAMS_H
#define NET_SOCKET_PARAMS_H

#include <stdint.h>

#include "mkccl_plugin_params.h"

/* net_socket_param_<NAME>(): typed accessors over net_socket_params.def
 * (STRING ones never NULL). */
#define PLUGIN_PARAM(name, type, def, help) PLUGIN_PARAM_PROTO(net_socket_param_, name, type)
#include "net_socket_params.def"
#undef PLUGIN_PARAM

/* MKCCL_SOCKET_TRACE: every request's post and completion at INFO (NET). */
int net_socket_trace(void);

#endif
