/* IPv4/IPv6 socket addresses: text in and out, comparison. */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sock/sock_internal.h"

socklen_t sock_addr_len(const sock_addr_t* addr) {
  return addr->sa.sa_family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
}

int sock_addr_port(const sock_addr_t* addr) {
  if (addr->sa.sa_family == AF_INET) return ntohs(addr->sin.sin_port);
  if (addr->sa.sa_family == AF_INET6) return ntohs(addr->sin6.sin6_port);
  return -1;
}

void sock_addr_set_port(sock_addr_t* addr, int port) {
  if (addr->sa.sa_family == AF_INET) addr->sin.sin_port = htons((uint16_t)port);
  if (addr->sa.sa_family == AF_INET6) addr->sin6.sin6_port = htons((uint16_t)port);
}

int sock_addr_valid(const sock_addr_t* addr) {
  return addr->sa.sa_family == AF_INET || addr->sa.sa_family == AF_INET6;
}

int sock_addr_equal(const sock_addr_t* a, const sock_addr_t* b) {
  if (a->sa.sa_family != b->sa.sa_family) return 0;
  if (a->sa.sa_family == AF_INET)
    return a->sin.sin_port == b->sin.sin_port && a->sin.sin_addr.s_addr == b->sin.sin_addr.s_addr;
  if (a->sa.sa_family == AF_INET6)
    return a->sin6.sin6_port == b->sin6.sin6_port &&
           memcmp(&a->sin6.sin6_addr, &b->sin6.sin6_addr, sizeof(struct in6_addr)) == 0;
  return 0;
}

int sock_addr_is_loopback(const sock_addr_t* addr) {
  if (addr->sa.sa_family == AF_INET) return (ntohl(addr->sin.sin_addr.s_addr) >> 24) == 127;
  if (addr->sa.sa_family == AF_INET6) {
    const struct in6_addr* a6 = &addr->sin6.sin6_addr;
    if (IN6_IS_ADDR_LOOPBACK(a6)) return 1;
    return IN6_IS_ADDR_V4MAPPED(a6) && a6->s6_addr[12] == 127;
  }
  return 0;
}

const char* sock_addr_to_string(const sock_addr_t* addr, char* buf, size_t len, int withPort) {
  char host[INET6_ADDRSTRLEN] = "?";
  if (!buf || len == 0) return "";
  if (addr->sa.sa_family == AF_INET) {
    inet_ntop(AF_INET, &addr->sin.sin_addr, host, sizeof(host));
    if (withPort) snprintf(buf, len, "%s:%d", host, sock_addr_port(addr));
    else snprintf(buf, len, "%s", host);
  } else if (addr->sa.sa_family == AF_INET6) {
    inet_ntop(AF_INET6, &addr->sin6.sin6_addr, host, sizeof(host));
    if (withPort) snprintf(buf, len, "[%s]:%d", host, sock_addr_port(addr));
    else snprintf(buf, len, "%s", host);
  } else {
    snprintf(buf, len, "<family %d>", (int)addr->sa.sa_family);
  }
  return buf;
}

static int sock_port_parse(const char* text, int* port) {
  char* end = NULL;
  errno = 0;
  long v = strtol(text, &end, 10);
  if (!*text || errno || *end || v < 0 || v > 65535) return -1;
  *port = (int)v;
  return 0;
}

/* Numeric first, then the resolver. */
static int sock_host_resolve(const char* host, int family, sock_addr_t* out) {
  memset(out, 0, sizeof(*out));
  if ((family == AF_UNSPEC || family == AF_INET) && inet_pton(AF_INET, host, &out->sin.sin_addr) == 1) {
    out->sin.sin_family = AF_INET;
    return SOCK_OK;
  }
  if ((family == AF_UNSPEC || family == AF_INET6) && inet_pton(AF_INET6, host, &out->sin6.sin6_addr) == 1) {
    out->sin6.sin6_family = AF_INET6;
    return SOCK_OK;
  }
  struct addrinfo hints, *res = NULL;
  memset(&hints, 0, sizeof(hints));
  hints.ai_family = family;
  hints.ai_socktype = SOCK_STREAM;
  int rc = getaddrinfo(host, NULL, &hints, &res);
  if (rc != 0) return sock_fail(SOCK_ENOTFOUND, "cannot resolve host '%s': %s", host, gai_strerror(rc));
  const struct addrinfo* pick = NULL;
  for (const struct addrinfo* ai = res; ai; ai = ai->ai_next)
    if (ai->ai_family == AF_INET && !pick) pick = ai; /* IPv4 first, as most launchers expect */
  for (const struct addrinfo* ai = res; ai && !pick; ai = ai->ai_next)
    if (ai->ai_family == AF_INET6) pick = ai;
  if (pick) memcpy(out, pick->ai_addr, pick->ai_addrlen <= sizeof(*out) ? pick->ai_addrlen : sizeof(*out));
  freeaddrinfo(res);
  if (!pick) return sock_fail(SOCK_ENOTFOUND, "host '%s' has no IPv4/IPv6 address", host);
  return SOCK_OK;
}

int sock_addr_parse(const char* text, int family, sock_addr_t* out) {
  char host[256];
  const char* portText;
  if (!text || !*text) return sock_fail(SOCK_EINVAL, "empty address");
  if (text[0] == '[') {
    const char* close = strchr(text, ']');
    if (!close || close[1] != ':' || (size_t)(close - text - 1) >= sizeof(host))
      return sock_fail(SOCK_EINVAL, "address '%s' is not [ipv6]:port", text);
    memcpy(host, text + 1, (size_t)(close - text - 1));
    host[close - text - 1] = '\0';
    portText = close + 2;
    if (family == AF_INET) return sock_fail(SOCK_EINVAL, "address '%s' is IPv6, IPv4 was asked for", text);
    family = AF_INET6;
  } else {
    const char* colon = strrchr(text, ':');
    if (!colon || strchr(text, ':') != colon)
      return sock_fail(SOCK_EINVAL, "address '%s' is not host:port (IPv6 needs [addr]:port)", text);
    if ((size_t)(colon - text) >= sizeof(host) || colon == text)
      return sock_fail(SOCK_EINVAL, "address '%s' has no host", text);
    memcpy(host, text, (size_t)(colon - text));
    host[colon - text] = '\0';
    portText = colon + 1;
  }
  int port;
  if (sock_port_parse(portText, &port) != 0) return sock_fail(SOCK_EINVAL, "address '%s' has a bad port", text);
  sock_addr_t addr;
  int rc = sock_host_resolve(host, family, &addr);
  if (rc != SOCK_OK) return rc;
  sock_addr_set_port(&addr, port);
  *out = addr;
  return SOCK_OK;
}
