/* Unique ids: a random magic plus the root's address, or NCCL_COMM_ID's
 * address; and the interface bootstrap traffic uses. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>

#include "base/param.h"
#include "bootstrap/bootstrap_internal.h"

_Static_assert(sizeof(bootstrap_handle_t) <= NCCL_UNIQUE_ID_BYTES, "handle must fit in ncclUniqueId");

ncclResult_t bootstrap_iface_get(sock_iface_t* iface) {
  const char* ifname = param_NCCL_SOCKET_IFNAME();
  const char* famText = param_NCCL_SOCKET_FAMILY();
  int family;
  if (sock_family_parse(famText, &family) != SOCK_OK)
    return MK_FAIL(ncclInvalidArgument, "NCCL_SOCKET_FAMILY: %s", sock_error());
  sock_iface_t found;
  int n = 0;
  if (!ifname || !*ifname) {
    /* NCCL_COMM_ID hints at the network the root is on. */
    const char* commId = param_NCCL_COMM_ID();
    sock_addr_t remote;
    if (commId && *commId && sock_addr_parse(commId, family, &remote) == SOCK_OK &&
        sock_ifaces_find_for_remote(&remote, &found) == SOCK_OK) {
      n = 1;
    }
  }
  if (n == 0 && sock_ifaces_find(ifname, family, &found, 1, &n) != SOCK_OK)
    return MK_FAIL(ncclSystemError, "bootstrap: no usable network interface: %s (NCCL_SOCKET_IFNAME=%s)",
                   sock_error(), ifname && *ifname ? ifname : "unset");
  char text[SOCK_ADDR_STRLEN];
  MK_INFO(NCCL_INIT | NCCL_BOOTSTRAP, "Bootstrap: using %s:%s", found.name,
          sock_addr_to_string(&found.addr, text, sizeof(text), 0));
  *iface = found;
  return ncclSuccess;
}

static ncclResult_t bootstrap_random(void* buf, size_t len) {
  size_t done = 0;
  while (done < len) {
    ssize_t n = getrandom((char*)buf + done, len - done, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return MK_SYSFAIL("getrandom");
    done += (size_t)n;
  }
  return ncclSuccess;
}

ncclResult_t bootstrap_handle_create(bootstrap_handle_t* handle, int useEnv) {
  bootstrap_handle_t h;
  memset(&h, 0, sizeof(h));
  const char* env = useEnv ? param_NCCL_COMM_ID() : NULL;
  if (env && *env) {
    int family;
    if (sock_family_parse(param_NCCL_SOCKET_FAMILY(), &family) != SOCK_OK) family = AF_UNSPEC;
    MK_INFO(NCCL_ENV, "NCCL_COMM_ID set by environment to %s", env);
    if (sock_addr_parse(env, family, &h.addr) != SOCK_OK)
      return MK_FAIL(ncclInvalidArgument, "NCCL_COMM_ID=%s: %s", env, sock_error());
    if (sock_addr_port(&h.addr) == 0)
      return MK_FAIL(ncclInvalidArgument, "NCCL_COMM_ID=%s: the port must not be 0", env);
    h.magic = BOOTSTRAP_MAGIC_COMM_ID;
    *handle = h;
    return ncclSuccess;
  }
  do {
    MK_CHECK(bootstrap_random(&h.magic, sizeof(h.magic)));
  } while (h.magic == 0 || h.magic == BOOTSTRAP_MAGIC_COMM_ID);
  sock_iface_t iface;
  MK_CHECK(bootstrap_iface_get(&iface));
  h.addr = iface.addr;
  sock_addr_set_port(&h.addr, 0);
  MK_CHECK(bootstrap_root_start(&h));
  *handle = h;
  return ncclSuccess;
}

ncclResult_t bootstrap_handle_from_id(const ncclUniqueId* id, bootstrap_handle_t* handle) {
  bootstrap_handle_t h;
  memcpy(&h, id->internal, sizeof(h));
  int tailZero = 1;
  for (size_t i = sizeof(h); i < NCCL_UNIQUE_ID_BYTES; i++) tailZero &= id->internal[i] == 0;
  if (h.magic == 0 || !sock_addr_valid(&h.addr) || sock_addr_port(&h.addr) <= 0 || !tailZero)
    return MK_FAIL(ncclInvalidArgument, "the ncclUniqueId is not valid (was it made by ncclGetUniqueId?)");
  *handle = h;
  return ncclSuccess;
}

void bootstrap_handle_to_id(const bootstrap_handle_t* handle, ncclUniqueId* id) {
  memset(id, 0, sizeof(*id));
  memcpy(id->internal, handle, sizeof(*handle));
}

int bootstrap_handle_is_env(const bootstrap_handle_t* handle) { return handle->magic == BOOTSTRAP_MAGIC_COMM_ID; }

ncclResult_t bootstrap_result(int sockStatus) {
  switch (sockStatus) {
    case SOCK_OK: return ncclSuccess;
    case SOCK_EABORT: return ncclInternalError;
    case SOCK_ETIMEOUT:
    case SOCK_ECLOSED:
    case SOCK_EPROTO: return ncclRemoteError;
    case SOCK_EINVAL: return ncclInvalidArgument;
    default: return ncclSystemError;
  }
}

const char* bootstrap_sock_error(int sockStatus) {
  static __thread char text[640];
  snprintf(text, sizeof(text), "%s%s", sock_error(), sockStatus == SOCK_ETIMEOUT ? " (MKCCL_BOOTSTRAP_TIMEOUT)" : "");
  return text;
}

int64_t bootstrap_deadline(const bootstrap_state_t* state) { return sock_deadline_ms(state->timeoutMs); }
