/* GID choice: NCCL_IB_GID_INDEX, RoCE v2 IPv4-mapped first, sysfs reading
 * from a fake tree. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "net_ib_gid.h"

static net_ib_gid_entry_t gid(int index, const char* text, int type) {
  net_ib_gid_entry_t e;
  e.index = index;
  e.type = type;
  CHECK_EQ_INT(net_ib_gid_parse(text, e.gid), 0);
  return e;
}

static void put(const char* dir, const char* name, const char* text) {
  char path[512];
  snprintf(path, sizeof(path), "%s/%s", dir, name);
  FILE* f = fopen(path, "w");
  CHECK(f != NULL);
  fputs(text, f);
  fclose(f);
}

static void mkdirs(const char* path) {
  char tmp[512];
  snprintf(tmp, sizeof(tmp), "%s", path);
  for (char* p = tmp + 1; *p; p++)
    if (*p == '/') *p = 0, mkdir(tmp, 0755), *p = '/';
  mkdir(tmp, 0755);
}

int main(void) {
  const char* ll = "fe80:0000:0000:0000:5054:00ff:fe12:3456";
  const char* v4 = "0000:0000:0000:0000:0000:ffff:c000:0201"; /* ::ffff:192.0.2.1 */
  const char* v6 = "2001:0db8:0000:0000:0000:0000:0000:0001";
  net_ib_gid_entry_t t[8];
  /* a typical RoCE table: v1/v2 pairs for link-local, IPv4, IPv6 */
  t[0] = gid(0, ll, IB_GID_TYPE_ROCE1);
  t[1] = gid(1, ll, IB_GID_TYPE_ROCE2);
  t[2] = gid(2, v4, IB_GID_TYPE_ROCE1);
  t[3] = gid(3, v4, IB_GID_TYPE_ROCE2);
  t[4] = gid(4, v6, IB_GID_TYPE_ROCE1);
  t[5] = gid(5, v6, IB_GID_TYPE_ROCE2);
  CHECK_EQ_INT(net_ib_gid_select(t, 6, 1, -1, 2), 3);  /* RoCE v2 + IPv4-mapped */
  CHECK_EQ_INT(net_ib_gid_select(t, 6, 1, -1, 1), 2);  /* asked for v1 */
  CHECK_EQ_INT(net_ib_gid_select(t, 6, 1, 4, 2), 4);   /* NCCL_IB_GID_INDEX wins */
  CHECK_EQ_INT(net_ib_gid_select(t, 6, 1, 9, 2), -1);  /* ... and must exist */
  /* without IPv4: v2 IPv6 global before link-local */
  net_ib_gid_entry_t u[4] = {t[0], t[1], t[4], t[5]};
  CHECK_EQ_INT(net_ib_gid_select(u, 4, 1, -1, 2), 5);
  /* only link-local v2 and IPv4 v1: the preferred version still wins */
  net_ib_gid_entry_t w[2] = {t[2], t[1]};
  CHECK_EQ_INT(net_ib_gid_select(w, 2, 1, -1, 2), 1);
  /* InfiniBand ports: index 0 */
  net_ib_gid_entry_t ib[2] = {gid(0, ll, IB_GID_TYPE_IB), gid(1, v6, IB_GID_TYPE_IB)};
  CHECK_EQ_INT(net_ib_gid_select(ib, 2, 0, -1, 2), 0);
  CHECK_EQ_INT(net_ib_gid_select(ib, 2, 0, 1, 2), 1);
  CHECK_EQ_INT(net_ib_gid_select(NULL, 0, 1, -1, 2), -1);
  CHECK_EQ_INT(net_ib_gid_parse("zz", t[0].gid), -1);

  /* sysfs: gids/<i> and gid_attrs/types/<i>; empty entries skipped */
  char root[] = "/tmp/test_net_ib_gid.XXXXXX";
  CHECK(mkdtemp(root) != NULL);
  char gids[600], types[600];
  snprintf(gids, sizeof(gids), "%s/class/infiniband/rxe0/ports/1/gids", root);
  snprintf(types, sizeof(types), "%s/class/infiniband/rxe0/ports/1/gid_attrs/types", root);
  mkdirs(gids);
  mkdirs(types);
  put(gids, "0", ll), put(types, "0", "IB/RoCE v1\n");
  put(gids, "1", ll), put(types, "1", "RoCE v2\n");
  put(gids, "2", "0000:0000:0000:0000:0000:0000:0000:0000\n"), put(types, "2", "");
  put(gids, "3", v4), put(types, "3", "RoCE v2\n");
  net_ib_gid_entry_t r[IB_GID_MAX];
  int n = net_ib_gid_read_sysfs(root, "rxe0", 1, 1, r, IB_GID_MAX);
  CHECK_EQ_INT(n, 3);
  CHECK(r[0].index == 0 && r[0].type == IB_GID_TYPE_ROCE1);
  CHECK(r[1].index == 1 && r[1].type == IB_GID_TYPE_ROCE2);
  CHECK(r[2].index == 3 && r[2].type == IB_GID_TYPE_ROCE2 && r[2].gid[10] == 0xff && r[2].gid[15] == 1);
  CHECK_EQ_INT(net_ib_gid_select(r, n, 1, -1, 2), 3);
  CHECK_EQ_INT(net_ib_gid_read_sysfs(root, "nodev", 1, 1, r, IB_GID_MAX), 0);
  char cmd[700];
  snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
  CHECK_EQ_INT(system(cmd), 0);
  printf("test_net_ib_gid: ok\n");
  return 0;
}
