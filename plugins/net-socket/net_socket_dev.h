/* The devices this plugin offers: the interfaces NCCL would choose
 * (NCCL_SOCKET_IFNAME, NCCL_SOCKET_FAMILY), found once per process. */
#ifndef NET_SOCKET_DEV_H
#define NET_SOCKET_DEV_H

#include "nccl.h"
#include "net/nccl_net.h"
#include "sock/sock.h"

#define NET_SOCKET_MAX_DEVS 16

typedef struct {
  char name[SOCK_IFNAME_MAX];
  sock_addr_t addr;  /* port 0 */
  char* pciPath;     /* NULL for a virtual interface */
  int speed;         /* Mbps, 10000 when /sys does not say */
  unsigned vendor;   /* PCI vendor id, 0 when none */
  int cpus;          /* CPUs the process may keep busy, read once with the devices (layout autodetection) */
} net_socket_dev_t;

/* Finds the interfaces on the first call; later calls return at once. */
ncclResult_t net_socket_devs_init(void);
int net_socket_devs_count(void);
/* NULL (and a WARN) for a device index out of range. */
const net_socket_dev_t* net_socket_dev_get(int dev);

#endif
