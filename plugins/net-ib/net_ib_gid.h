/* Which GID a RoCE port uses. NCCL_IB_GID_INDEX wins when set; otherwise
 * the preferred RoCE version (NCCL_IB_ROCE_VERSION_NUM, 2 by default) with
 * an IPv4-mapped address first (routable, what RoCE v2 fabrics expect),
 * then a global IPv6 one, then the other version, never a link-local or
 * empty GID when something better exists. GIDs and their types are read
 * from sysfs (root configurable so tests can fake it). No hardware needed. */
#ifndef NET_IB_GID_H
#define NET_IB_GID_H

#include <stdint.h>

#define IB_GID_TYPE_IB 0    /* "IB/RoCE v1" on IB ports */
#define IB_GID_TYPE_ROCE1 1 /* "IB/RoCE v1" on Ethernet ports */
#define IB_GID_TYPE_ROCE2 2 /* "RoCE v2" */
#define IB_GID_MAX 256

typedef struct {
  int index;
  uint8_t gid[16];
  int type;
} net_ib_gid_entry_t;

/* The chosen GID index, or -1 when none is usable. */
int net_ib_gid_select(const net_ib_gid_entry_t* table, int n, int ethernet, int wantIndex, int rocever);
/* Reads <root>/class/infiniband/<dev>/ports/<port>/{gids,gid_attrs/types}/<i>;
 * returns the number of valid entries written to table (at most max). */
int net_ib_gid_read_sysfs(const char* root, const char* dev, int port, int ethernet, net_ib_gid_entry_t* table, int max);
/* "fe80:0000:...:0001" -> 16 bytes; 0 on success. */
int net_ib_gid_parse(const char* text, uint8_t gid[16]);

#endif
