/* NCCL_IB_HCA (and NCCL_SOCKET_IFNAME) lists: "mlx5_0:1,mlx5_1" takes
 * devices whose name starts with an entry (and the port, when given);
 * a leading '^' excludes them instead; '=' asks for exact names ("^=" both).
 * An empty list takes everything. No hardware needed: unit-tested alone. */
#ifndef NET_IB_HCA_H
#define NET_IB_HCA_H

#define IB_HCA_MAX 32
#define IB_HCA_NAME_MAX 64

typedef struct {
  char name[IB_HCA_NAME_MAX];
  int port; /* -1: any port */
} net_ib_hca_entry_t;

typedef struct {
  int exclude;
  int exact;
  int n;
  net_ib_hca_entry_t e[IB_HCA_MAX];
} net_ib_hca_list_t;

/* 0 on success; -1 for a malformed list (bad port, too many or too long). */
int net_ib_hca_parse(const char* text, net_ib_hca_list_t* out);
/* 1 if the list takes device `name`, port `port` (port -1: any). */
int net_ib_hca_match(const net_ib_hca_list_t* list, const char* name, int port);

#endif
