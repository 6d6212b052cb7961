/* Parameter table and mkcclPluginInfo_v1: what mkccl reads before init. */
#include "net_socket_params.h"

#include "mkccl_plugin_params.h"
#include "net_socket_log.h"

static const mkcclParamDecl_v1 net_socket_param_decls[] = {
    {NET_SOCKET_PARAM_IFNAME, MKCCL_PARAM_STRING, "",
     "Interfaces to use: comma-separated name prefixes, '^' to exclude, '=' for exact names"},
    {NET_SOCKET_PARAM_FAMILY, MKCCL_PARAM_STRING, "", "Address family of the interfaces: AF_INET or AF_INET6"},
    {NET_SOCKET_PARAM_NSOCKS, MKCCL_PARAM_INT64, "-2",
     "Data sockets per helper thread (-2: detect from the NIC vendor; total capped at 64)"},
    {NET_SOCKET_PARAM_NTHREADS, MKCCL_PARAM_INT64, "-2",
     "Helper threads per connection, 0..16 (-2: detect from the NIC vendor, else 1 with 16+ CPUs and 2 with 32+; 0: the caller of test moves all data)"},
    {NET_SOCKET_PARAM_HELPER_SPIN, MKCCL_PARAM_INT64, "100",
     "Microseconds a helper thread keeps polling its sockets (yielding) after data last moved, before it sleeps "
     "in poll() (0: sleep at once)"},
    {NET_SOCKET_PARAM_MIN_TASKSIZE, MKCCL_PARAM_INT64, "65536",
     "Smallest chunk a message is split into across the data sockets (bytes)"},
    {NET_SOCKET_PARAM_INLINE, MKCCL_PARAM_INT64, "16384",
     "Messages up to this size travel on the control socket with their header, moved by the caller of "
     "isend/test with no helper thread (bytes; NCCL's socket plugin uses 128)"},
    {NET_SOCKET_PARAM_UNEXPECTED_MAX, MKCCL_PARAM_INT64, "268435456",
     "Bytes a receive comm may hold of messages that came before their receive was posted while a receive of "
     "another tag waited behind them (0: none; such a message then stops the comm's stream until its receive is "
     "posted)"},
    {NET_SOCKET_PARAM_USER_TIMEOUT, MKCCL_PARAM_INT64, "0",
     "TCP_USER_TIMEOUT of every socket: unacknowledged data older than this kills the connection "
     "(ms, 0: kernel default)"},
    {NET_SOCKET_PARAM_UNPACK, MKCCL_PARAM_INT64, "0",
     "1: report the UNPACK net device type (0x7) and, where the core asks for it, land receives in a bounce "
     "buffer as permuted 4 KiB pages for the net-device plugin to unpack (tests the offload path)"},
    {NET_SOCKET_PARAM_TRACE, MKCCL_PARAM_INT64, "0",
     "1: log every isend/irecv and its completion at INFO (subsystem NET), to see where traffic stops"},
};

static plugin_params_t net_socket_params = {
    NULL, net_socket_param_decls, (int)(sizeof(net_socket_param_decls) / sizeof(net_socket_param_decls[0]))};

static void net_socket_params_bind(const mkcclServices_v1* services) {
  net_socket_params.services = services;
  if (services && services->log) net_socket_log_set(services->log);
}

int64_t net_socket_param_int(const char* name) { return plugin_param_int(&net_socket_params, name); }

int net_socket_trace(void) {
  /* Read once: it is asked on every request, by every thread that makes
   * them (the host executors' proxy lanes too), hence atomic. */
  static int trace = -1;
  int t = __atomic_load_n(&trace, __ATOMIC_RELAXED);
  if (t < 0) {
    t = net_socket_param_int(NET_SOCKET_PARAM_TRACE) != 0;
    __atomic_store_n(&trace, t, __ATOMIC_RELAXED);
  }
  return t;
}

const char* net_socket_param_str(const char* name) {
  const char* value = plugin_param_str(&net_socket_params, name);
  return value ? value : "";
}

/* The exported symbol shares its name with the type: an asm label names it. */
__attribute__((visibility("default"))) const mkcclPluginInfo_v1_t net_socket_plugin_info __asm__(
    MKCCL_PLUGIN_INFO_SYMBOL) = {
    sizeof(mkcclPluginInfo_v1_t),
    MKCCL_PLUGIN_ABI_VERSION,
    "net-socket",
    "0.1.0",
    net_socket_param_decls,
    (int)(sizeof(net_socket_param_decls) / sizeof(net_socket_param_decls[0])),
    net_socket_params_bind,
};
