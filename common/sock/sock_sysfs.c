/* Interface facts from /sys/class/net: link speed and the PCI device path
 * (the net plugins report both in their properties). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sock/sock_internal.h"

static int sock_ifname_safe(const char* ifname) {
  return ifname && *ifname && !strchr(ifname, '/') && strcmp(ifname, ".") && strcmp(ifname, "..");
}

int sock_iface_speed_mbps(const char* ifname, int* mbps) {
  if (!sock_ifname_safe(ifname)) return sock_fail(SOCK_EINVAL, "bad interface name");
  char path[PATH_MAX];
  snprintf(path, sizeof(path), "/sys/class/net/%s/speed", ifname);
  FILE* f = fopen(path, "r");
  if (!f) return sock_fail(SOCK_ENOTFOUND, "%s: %s", path, strerror(errno));
  int v = -1;
  int got = fscanf(f, "%d", &v); /* virtual links fail the read with EINVAL */
  fclose(f);
  if (got != 1 || v <= 0) return sock_fail(SOCK_ENOTFOUND, "%s: no speed reported", path);
  *mbps = v;
  return SOCK_OK;
}

int sock_iface_pci_path(const char* ifname, char* path, size_t len) {
  if (!sock_ifname_safe(ifname)) return sock_fail(SOCK_EINVAL, "bad interface name");
  char link[PATH_MAX], real[PATH_MAX];
  snprintf(link, sizeof(link), "/sys/class/net/%s/device", ifname);
  if (!realpath(link, real)) return sock_fail(SOCK_ENOTFOUND, "%s: %s (virtual interface?)", link, strerror(errno));
  if (strlen(real) + 1 > len) return sock_fail(SOCK_EINVAL, "PCI path of %s is longer than %zu", ifname, len);
  memcpy(path, real, strlen(real) + 1);
  return SOCK_OK;
}
