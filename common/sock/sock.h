/* mkccl_sock (common/sock): small TCP socket utilities shared by the core (bootstrap) and by
 * plugins (net-socket). It depends on libc only: no core logging, no
 * parameters, no getenv. Callers pass configuration strings in and map the
 * status codes to their own error handling.
 *
 * Conventions:
 *  - Functions return a sock status: SOCK_OK (0) or a negative SOCK_E* code.
 *    On failure, sock_error() holds a one-line text (per thread) saying what
 *    and why; callers log it once, where they decide the error.
 *  - Outputs are written only on success.
 *  - Every descriptor is non-blocking and close-on-exec. Every blocking call
 *    takes an absolute deadline (sock_deadline_ms(), SOCK_NO_DEADLINE) and an
 *    abort flag (may be NULL) that is polled at least every 10 ms. */
#ifndef MKCCL_SOCK_SOCK_H
#define MKCCL_SOCK_SOCK_H

#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- status ---------------------------------------------------------------------------------- */
enum {
  SOCK_OK = 0,
  SOCK_ESYS = -1,      /* a system call failed; the text names it and errno */
  SOCK_ETIMEOUT = -2,  /* the deadline passed */
  SOCK_EABORT = -3,    /* the abort flag was raised */
  SOCK_ECLOSED = -4,   /* the peer closed the connection (or reset it) */
  SOCK_EINVAL = -5,    /* bad argument, unparsable text */
  SOCK_ENOTFOUND = -6, /* no such interface / address / sysfs entry */
  SOCK_EPROTO = -7     /* a hello with the wrong magic, type or version */
};

/* The text of this thread's last failure. */
const char* sock_error(void);
/* "SOCK_ETIMEOUT", ... */
const char* sock_status_name(int status);

/* ---- time ------------------------------------------------------------------------------------ */
#define SOCK_NO_DEADLINE INT64_MAX
/* CLOCK_MONOTONIC in nanoseconds. */
int64_t sock_time_ns(void);
/* now + ms; ms < 0 means no deadline. */
int64_t sock_deadline_ms(int64_t ms);

/* ---- addresses ------------------------------------------------------------------------------- */
typedef union {
  struct sockaddr sa;
  struct sockaddr_in sin;
  struct sockaddr_in6 sin6;
} sock_addr_t;

/* "1.2.3.4:5678" or "[fe80::1]:5678" (withPort) or just the host part. */
#define SOCK_ADDR_STRLEN 64
const char* sock_addr_to_string(const sock_addr_t* addr, char* buf, size_t len, int withPort);
/* Parses "host:port", "[v6]:port", "v4:port"; host may be a name (resolved,
 * IPv4 preferred unless family says otherwise). family: AF_UNSPEC, AF_INET,
 * AF_INET6. */
int sock_addr_parse(const char* text, int family, sock_addr_t* out);
socklen_t sock_addr_len(const sock_addr_t* addr);
int sock_addr_port(const sock_addr_t* addr);
void sock_addr_set_port(sock_addr_t* addr, int port);
int sock_addr_equal(const sock_addr_t* a, const sock_addr_t* b); /* family, address, port */
int sock_addr_is_loopback(const sock_addr_t* addr);
/* A valid IPv4/IPv6 address with a port (e.g. out of a received buffer). */
int sock_addr_valid(const sock_addr_t* addr);

/* ---- interfaces ------------------------------------------------------------------------------ */
#define SOCK_IFNAME_MAX 64
typedef struct {
  char name[SOCK_IFNAME_MAX];
  sock_addr_t addr; /* port 0 */
  sock_addr_t mask; /* netmask, same family */
} sock_iface_t;

/* NCCL_SOCKET_FAMILY: NULL/"" -> AF_UNSPEC, "AF_INET", "AF_INET6" (also
 * "4"/"6", "ipv4"/"ipv6"). Anything else: SOCK_EINVAL. */
int sock_family_parse(const char* text, int* family);

/* NCCL_SOCKET_IFNAME semantics for one name: list is a comma list of
 * prefixes; a leading '^' excludes the listed names instead of selecting them;
 * then a leading '=' makes the names exact instead of prefixes ("^=eth0").
 * A NULL or empty list matches everything. Returns 1 on a match. */
int sock_iface_match(const char* ifname, const char* list);

/* Chooses from candidates (one entry per address, getifaddrs order) as NCCL
 * does: with a non-empty list, the interfaces the list selects; without one,
 * "ib*" first, then anything but "docker*"/"lo*", then "docker*", then "lo*".
 * family filters (AF_UNSPEC: both). One address per interface name (the first
 * that fits). Writes at most max entries; *count is how many were written.
 * SOCK_ENOTFOUND when none fits. */
int sock_ifaces_select(const sock_iface_t* cands, int ncands, const char* list, int family, sock_iface_t* out,
                       int max, int* count);
/* All usable addresses of this host's interfaces that are up (IPv6
 * link-local skipped: it needs a scope id that means nothing to a peer). */
int sock_ifaces_list(sock_iface_t* out, int max, int* count);
/* sock_ifaces_list + sock_ifaces_select. */
int sock_ifaces_find(const char* list, int family, sock_iface_t* out, int max, int* count);
/* The interface whose subnet holds remote (NCCL_COMM_ID without
 * NCCL_SOCKET_IFNAME); loopback remotes match "lo". */
int sock_ifaces_find_for_remote(const sock_addr_t* remote, sock_iface_t* out);

/* /sys/class/net/<if>/speed in Mb/s; SOCK_ENOTFOUND when unknown (virtual
 * interfaces report -1 or nothing: callers pick their default, NCCL uses
 * 10000). */
int sock_iface_speed_mbps(const char* ifname, int* mbps);
/* realpath of /sys/class/net/<if>/device ("/sys/devices/pci0000:00/..."),
 * SOCK_ENOTFOUND for virtual interfaces. */
int sock_iface_pci_path(const char* ifname, char* path, size_t len);

/* ---- connections ----------------------------------------------------------------------------- */
/* Listens on addr (port 0: an ephemeral port). *bound gets the real address. */
int sock_listen(const sock_addr_t* addr, int backlog, int* fd, sock_addr_t* bound);
/* Connects, retrying refused/unreachable with back-off (1 ms doubling to
 * 256 ms) until the deadline. TCP_NODELAY is set. */
int sock_connect(const sock_addr_t* addr, int64_t deadline, volatile uint32_t* abortFlag, int* fd);
/* Waits for and accepts one connection. peer may be NULL. */
int sock_accept(int listenFd, int64_t deadline, volatile uint32_t* abortFlag, int* fd, sock_addr_t* peer);
/* Accepts one connection if one is pending: SOCK_OK with *fd >= 0, or SOCK_OK
 * with *fd = -1 when none is. */
int sock_accept_try(int listenFd, int* fd, sock_addr_t* peer);

/* Blocking transfers of exactly len bytes. */
int sock_send_all(int fd, const void* buf, size_t len, int64_t deadline, volatile uint32_t* abortFlag);
int sock_recv_all(int fd, void* buf, size_t len, int64_t deadline, volatile uint32_t* abortFlag);
/* Sends on one descriptor while receiving on another (a ring step), so two
 * peers that both send first cannot block each other on full buffers. */
int sock_sendrecv_all(int sendFd, const void* sbuf, size_t slen, int recvFd, void* rbuf, size_t rlen,
                      int64_t deadline, volatile uint32_t* abortFlag);
/* Non-blocking progress: moves what it can, advancing *done towards len.
 * SOCK_OK also when nothing moved; SOCK_ECLOSED when the peer is gone. */
int sock_send_some(int fd, const void* buf, size_t len, size_t* done);
int sock_recv_some(int fd, void* buf, size_t len, size_t* done);
/* Waits until fd is ready for events (POLLIN / POLLOUT). */
int sock_wait(int fd, short events, int64_t deadline, volatile uint32_t* abortFlag);
/* close() and set *fd = -1; ignores fd < 0. */
void sock_close(int* fd);

/* ---- hello ----------------------------------------------------------------------------------- */
/* The first bytes on a connection: who may talk to whom. The accepting side
 * checks magic, type and version before it trusts anything else. arg is the
 * sender's own (a rank, say). */
typedef struct {
  uint64_t magic;
  uint32_t type;
  uint32_t version;
  uint64_t arg;
} sock_hello_t;

int sock_hello_send(int fd, uint64_t magic, uint32_t type, uint32_t version, uint64_t arg, int64_t deadline,
                    volatile uint32_t* abortFlag);
/* Checks a received hello: SOCK_EPROTO with a text naming the field. */
int sock_hello_check(const sock_hello_t* hello, uint64_t magic, uint32_t type, uint32_t version);

#ifdef __cplusplus
}
#endif
#endif
