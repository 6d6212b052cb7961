/* The exported tables, ncclNetPlugin_v6 to v12, all from the one v12
 * implementation (abi/net/mkccl_net_exports.h adapts it to each version). */
#include "net_socket_api.h"
#include "net_socket_comm.h"
#include "net_socket_ctx.h"
#include "net_socket_log.h"
#include "net_socket_setup.h"
#include "net_socket_test.h"
#include "net_socket_unpack.h"

#define MKCCL_NET_NAME "Socket"
#define MKCCL_NET_INIT net_socket_init_ctx
#define MKCCL_NET_INIT_NOCTX net_socket_init_noctx
#define MKCCL_NET_DEVICES net_socket_devices
#define MKCCL_NET_GET_PROPERTIES net_socket_props_get
#define MKCCL_NET_LISTEN net_socket_listen_ctx
#define MKCCL_NET_CONNECT net_socket_connect_ctx
#define MKCCL_NET_CONNECT_NOCTX net_socket_connect_noctx
#define MKCCL_NET_ACCEPT net_socket_accept_dev
#define MKCCL_NET_REG_MR net_socket_reg_mr
#define MKCCL_NET_REG_MR_DMA_BUF NULL /* no DMA-BUF: ptrSupport says host only */
#define MKCCL_NET_DEREG_MR net_socket_dereg_mr
#define MKCCL_NET_ISEND net_socket_isend_prof
#define MKCCL_NET_IRECV net_socket_irecv_prof
#define MKCCL_NET_IFLUSH net_socket_iflush
#define MKCCL_NET_TEST net_socket_test
#define MKCCL_NET_CLOSE_SEND net_socket_close_comm
#define MKCCL_NET_CLOSE_RECV net_socket_close_comm
#define MKCCL_NET_CLOSE_LISTEN net_socket_close_listen
#define MKCCL_NET_GET_DEVICE_MR NULL
#define MKCCL_NET_IRECV_CONSUMED net_socket_irecv_consumed
#define MKCCL_NET_FINALIZE net_socket_ctx_free
#define MKCCL_NET_SET_NET_ATTR net_socket_ctx_set_attr
#define MKCCL_NET_FAIL(res, ...) NS_FAIL(res, __VA_ARGS__)
#define MKCCL_NET_MAX_RECVS NET_SOCKET_MAX_RECVS
#include "net/mkccl_net_exports.h"

MKCCL_NET_EXPORT_FROM_V6(net_socket)
