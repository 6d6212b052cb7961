/* Interface discovery with NCCL_SOCKET_IFNAME / NCCL_SOCKET_FAMILY semantics.
 * The selection is a pure function of a candidate list, so it is tested
 * without the host's real interfaces. */
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "sock/sock_internal.h"

int sock_family_parse(const char* text, int* family) {
  if (!text || !*text) {
    *family = AF_UNSPEC;
  } else if (!strcasecmp(text, "AF_INET") || !strcasecmp(text, "ipv4") || !strcmp(text, "4")) {
    *family = AF_INET;
  } else if (!strcasecmp(text, "AF_INET6") || !strcasecmp(text, "ipv6") || !strcmp(text, "6")) {
    *family = AF_INET6;
  } else {
    return sock_fail(SOCK_EINVAL, "socket family '%s' is not AF_INET or AF_INET6", text);
  }
  return SOCK_OK;
}

int sock_iface_match(const char* ifname, const char* list) {
  if (!list || !*list) return 1;
  int exclude = list[0] == '^';
  if (exclude) list++;
  int exact = list[0] == '=';
  if (exact) list++;
  int found = 0;
  for (const char* p = list; *p && !found;) {
    const char* end = strchr(p, ',');
    size_t n = end ? (size_t)(end - p) : strlen(p);
    if (n > 0) found = exact ? (strlen(ifname) == n && strncmp(ifname, p, n) == 0) : strncmp(ifname, p, n) == 0;
    p += n;
    if (*p == ',') p++;
  }
  return exclude ? !found : found;
}

static int sock_ifaces_pass(const sock_iface_t* cands, int ncands, const char* list, int family, sock_iface_t* out,
                            int max) {
  int n = 0;
  for (int i = 0; i < ncands && n < max; i++) {
    const sock_iface_t* c = &cands[i];
    if (family != AF_UNSPEC && c->addr.sa.sa_family != family) continue;
    if (!sock_iface_match(c->name, list)) continue;
    int dup = 0;
    for (int j = 0; j < n; j++) dup |= strcmp(out[j].name, c->name) == 0;
    if (!dup) out[n++] = *c;
  }
  return n;
}

int sock_ifaces_select(const sock_iface_t* cands, int ncands, const char* list, int family, sock_iface_t* out,
                       int max, int* count) {
  /* Without a list: InfiniBand (IPoIB) first, then real interfaces, then
   * container bridges, and loopback last: a single-host job still runs. */
  static const char* const autoPasses[] = {"ib", "^docker,lo", "docker", "lo"};
  int n = 0;
  if (max <= 0) return sock_fail(SOCK_EINVAL, "no room for interfaces");
  if (list && *list) {
    n = sock_ifaces_pass(cands, ncands, list, family, out, max);
  } else {
    for (size_t p = 0; p < sizeof(autoPasses) / sizeof(autoPasses[0]) && n == 0; p++)
      n = sock_ifaces_pass(cands, ncands, autoPasses[p], family, out, max);
  }
  if (n == 0)
    return sock_fail(SOCK_ENOTFOUND, "no interface matches '%s'%s", list && *list ? list : "(automatic choice)",
                     family == AF_INET ? " for AF_INET" : family == AF_INET6 ? " for AF_INET6" : "");
  *count = n;
  return SOCK_OK;
}

int sock_ifaces_list(sock_iface_t* out, int max, int* count) {
  struct ifaddrs* ifas = NULL;
  if (getifaddrs(&ifas) != 0) return sock_fail(SOCK_ESYS, "getifaddrs failed: %s", strerror(errno));
  int n = 0;
  for (struct ifaddrs* ifa = ifas; ifa && n < max; ifa = ifa->ifa_next) {
    if (!ifa->ifa_addr || !(ifa->ifa_flags & IFF_UP)) continue;
    int fam = ifa->ifa_addr->sa_family;
    if (fam != AF_INET && fam != AF_INET6) continue;
    if (fam == AF_INET6 && IN6_IS_ADDR_LINKLOCAL(&((struct sockaddr_in6*)ifa->ifa_addr)->sin6_addr)) continue;
    sock_iface_t* e = &out[n++];
    memset(e, 0, sizeof(*e));
    snprintf(e->name, sizeof(e->name), "%s", ifa->ifa_name);
    size_t len = fam == AF_INET ? sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6);
    memcpy(&e->addr, ifa->ifa_addr, len);
    if (ifa->ifa_netmask) memcpy(&e->mask, ifa->ifa_netmask, len);
    e->mask.sa.sa_family = (sa_family_t)fam;
    sock_addr_set_port(&e->addr, 0);
  }
  freeifaddrs(ifas);
  *count = n;
  return SOCK_OK;
}

#define SOCK_IFACES_MAX 256

int sock_ifaces_find(const char* list, int family, sock_iface_t* out, int max, int* count) {
  sock_iface_t cands[SOCK_IFACES_MAX];
  int n = 0;
  int rc = sock_ifaces_list(cands, SOCK_IFACES_MAX, &n);
  if (rc != SOCK_OK) return rc;
  return sock_ifaces_select(cands, n, list, family, out, max, count);
}

static int sock_subnet_match(const sock_iface_t* c, const sock_addr_t* remote) {
  if (c->addr.sa.sa_family != remote->sa.sa_family) return 0;
  if (sock_addr_is_loopback(remote)) return sock_addr_is_loopback(&c->addr);
  if (remote->sa.sa_family == AF_INET) {
    uint32_t m = c->mask.sin.sin_addr.s_addr;
    return (c->addr.sin.sin_addr.s_addr & m) == (remote->sin.sin_addr.s_addr & m);
  }
  const uint8_t *a = c->addr.sin6.sin6_addr.s6_addr, *b = remote->sin6.sin6_addr.s6_addr,
                *m = c->mask.sin6.sin6_addr.s6_addr;
  for (int i = 0; i < 16; i++)
    if ((a[i] & m[i]) != (b[i] & m[i])) return 0;
  return 1;
}

int sock_ifaces_find_for_remote(const sock_addr_t* remote, sock_iface_t* out) {
  sock_iface_t cands[SOCK_IFACES_MAX];
  int n = 0;
  int rc = sock_ifaces_list(cands, SOCK_IFACES_MAX, &n);
  if (rc != SOCK_OK) return rc;
  for (int i = 0; i < n; i++) {
    if (sock_subnet_match(&cands[i], remote)) {
      *out = cands[i];
      return SOCK_OK;
    }
  }
  char text[SOCK_ADDR_STRLEN];
  return sock_fail(SOCK_ENOTFOUND, "no interface is on the subnet of %s",
                   sock_addr_to_string(remote, text, sizeof(text), 0));
}
