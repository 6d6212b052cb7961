/* The plugin's parameters: declared once in net_socket_params.c (exported
 * with mkcclPluginInfo_v1 so mkccl lists and sets them), read here. Under
 * mkccl the core answers; hosted by NCCL the environment does. */
#ifndef NET_SOCKET_PARAMS_H
#define NET_SOCKET_PARAMS_H

#include <stdint.h>

#define NET_SOCKET_PARAM_IFNAME "NCCL_SOCKET_IFNAME"
#define NET_SOCKET_PARAM_FAMILY "NCCL_SOCKET_FAMILY"
#define NET_SOCKET_PARAM_NSOCKS "NCCL_NSOCKS_PERTHREAD"
#define NET_SOCKET_PARAM_NTHREADS "NCCL_SOCKET_NTHREADS"
#define NET_SOCKET_PARAM_MIN_TASKSIZE "NCCL_SOCKET_MIN_TASKSIZE"
#define NET_SOCKET_PARAM_INLINE "NCCL_SOCKET_INLINE"
#define NET_SOCKET_PARAM_USER_TIMEOUT "MKCCL_SOCKET_USER_TIMEOUT_MS"
#define NET_SOCKET_PARAM_UNPACK "MKCCL_SOCKET_UNPACK"
#define NET_SOCKET_PARAM_TRACE "MKCCL_SOCKET_TRACE"
#define NET_SOCKET_PARAM_HELPER_SPIN "MKCCL_SOCKET_HELPER_SPIN_US"
#define NET_SOCKET_PARAM_UNEXPECTED_MAX "MKCCL_SOCKET_UNEXPECTED_MAX_BYTES"

int64_t net_socket_param_int(const char* name);
/* MKCCL_SOCKET_TRACE: every request's post and completion at INFO (NET). */
int net_socket_trace(void);
const char* net_socket_param_str(const char* name); /* never NULL */

#endif
