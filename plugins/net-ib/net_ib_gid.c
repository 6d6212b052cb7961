/* GID choice and sysfs reading (see net_ib_gid.h). */
#include "net_ib_gid.h"

#include <stdio.h>
#include <string.h>

static int net_ib_gid_zero(const uint8_t* g) {
  for (int i = 0; i < 16; i++)
    if (g[i]) return 0;
  return 1;
}

static int net_ib_gid_v4mapped(const uint8_t* g) {
  static const uint8_t prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  return memcmp(g, prefix, 12) == 0;
}

static int net_ib_gid_linklocal(const uint8_t* g) { return g[0] == 0xfe && (g[1] & 0xc0) == 0x80; }

/* Higher is better; 0 is unusable. */
static int net_ib_gid_score(const net_ib_gid_entry_t* e, int rocever) {
  if (net_ib_gid_zero(e->gid)) return 0;
  int wanted = (rocever == 1 && e->type == IB_GID_TYPE_ROCE1) || (rocever != 1 && e->type == IB_GID_TYPE_ROCE2);
  int addr = net_ib_gid_v4mapped(e->gid) ? 3 : net_ib_gid_linklocal(e->gid) ? 1 : 2;
  return (wanted ? 10 : 0) + addr;
}

int net_ib_gid_select(const net_ib_gid_entry_t* table, int n, int ethernet, int wantIndex, int rocever) {
  if (wantIndex >= 0) {
    for (int i = 0; i < n; i++)
      if (table[i].index == wantIndex && !net_ib_gid_zero(table[i].gid)) return wantIndex;
    return -1;
  }
  if (!ethernet) { /* InfiniBand: the port GID, index 0 */
    for (int i = 0; i < n; i++)
      if (table[i].index == 0) return 0;
    return n > 0 ? table[0].index : -1;
  }
  int best = -1, bestScore = 0;
  for (int i = 0; i < n; i++) {
    int s = net_ib_gid_score(&table[i], rocever);
    if (s > bestScore || (s == bestScore && s > 0 && table[i].index < best)) best = table[i].index, bestScore = s;
  }
  return best;
}

int net_ib_gid_parse(const char* text, uint8_t gid[16]) {
  unsigned v[8];
  if (sscanf(text, "%4x:%4x:%4x:%4x:%4x:%4x:%4x:%4x", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]) != 8)
    return -1;
  for (int i = 0; i < 8; i++) gid[2 * i] = (uint8_t)(v[i] >> 8), gid[2 * i + 1] = (uint8_t)v[i];
  return 0;
}

static int net_ib_gid_read_line(const char* path, char* buf, int cap) {
  FILE* f = fopen(path, "r");
  if (!f) return -1;
  int ok = fgets(buf, cap, f) != NULL; /* an unset entry reads as an error (EINVAL) */
  fclose(f);
  if (!ok) return -1;
  buf[strcspn(buf, "\n")] = 0;
  return 0;
}

int net_ib_gid_read_sysfs(const char* root, const char* dev, int port, int ethernet, net_ib_gid_entry_t* table, int max) {
  int n = 0;
  for (int i = 0; i < IB_GID_MAX && n < max; i++) {
    char path[512], line[128];
    snprintf(path, sizeof(path), "%s/class/infiniband/%s/ports/%d/gids/%d", root, dev, port, i);
    if (net_ib_gid_read_line(path, line, sizeof(line)) != 0) {
      if (i == 0) break; /* no table at all */
      continue;
    }
    net_ib_gid_entry_t* e = &table[n];
    if (net_ib_gid_parse(line, e->gid) != 0 || net_ib_gid_zero(e->gid)) continue;
    e->index = i;
    e->type = IB_GID_TYPE_IB;
    if (ethernet) {
      snprintf(path, sizeof(path), "%s/class/infiniband/%s/ports/%d/gid_attrs/types/%d", root, dev, port, i);
      if (net_ib_gid_read_line(path, line, sizeof(line)) != 0) continue;
      e->type = strstr(line, "v2") ? IB_GID_TYPE_ROCE2 : IB_GID_TYPE_ROCE1;
    }
    n++;
  }
  return n;
}
