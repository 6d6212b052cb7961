/* The net plugin conformance kit (mkccl-netcheck).
 *
 * The parent process is a referee: it loads the plugin to list and sanity-
 * check its devices, then runs each scenario as two fresh processes (this
 * same executable re-executed as role A and role B) joined to it by a
 * control socket. The referee relays handles and sync words between the
 * roles, kills a role when a scenario asks (peer death), prints the PASS /
 * FAIL / SKIP lines the roles report, and bounds every scenario: a role that
 * crashes or hangs fails its scenario, never the kit. Every check runs and
 * is reported: a device property the kit dislikes does not stop the
 * scenarios, and one NCCL tolerates is a WARN, not a FAIL. */
#ifndef NETCHECK_H
#define NETCHECK_H

#include <stddef.h>
#include <stdint.h>

#include "net/nccl_net.h"

/* ---- options ---- */
typedef struct {
  const char* path;  /* the plugin library */
  int abi;           /* 0: newest the plugin exports */
  int dev;           /* device the pair scenarios use */
  int quick;         /* smaller sizes */
  int timeoutSec;    /* per scenario */
  const char* only;  /* run only this scenario (NULL: all) */
} netcheck_opts_t;

extern int netcheck_verbose; /* --verbose: the plugin's INFO lines too */

/* ---- loading (netcheck_load.c): the one place that knows how ---- */
typedef struct {
  void* handle;             /* the loader's plugin_net_t */
  int abi;                  /* version of the symbol the loader took */
  const ncclNet_v12_t* net; /* the plugin, presented as v12 */
  void* ctx;                /* the loader's context */
  int maxRequests;          /* requests in flight per comm its ABI allows */
  char name[64];
} netcheck_plugin_t;

/* 0: loaded. 1: it loads but reports no devices, so the loader moved on
 * (why[] says so). -1: not loaded, why[] says why. abi 0: the newest the
 * plugin exports; else that version through its adapter. */
int netcheck_load(const char* path, int abi, netcheck_plugin_t* out, char* why, size_t whyLen);
void netcheck_unload(netcheck_plugin_t* p);
/* The NCCL_NET_MAX_REQUESTS the plugin's ABI promises. */
int netcheck_max_requests(const netcheck_plugin_t* p);

/* ---- verdict lines ---- */
/* PASS, FAIL, WARN (odd but tolerated by NCCL: never a failure) or SKIP. */
void netcheck_line(const char* verdict, const char* check, const char* detail);
int netcheck_failures(void);
typedef struct {
  int pass, fail, warn, skip;
} netcheck_counts_t;
netcheck_counts_t netcheck_counts(void);

/* ---- control frames between referee and roles (netcheck_ctl.c) ---- */
enum {
  NC_RELAY = 1,     /* role -> referee -> other role: handles, sync words */
  NC_CHECK = 2,     /* role -> referee: verdict, check name, detail */
  NC_KILL_PEER = 3, /* role -> referee: kill the other role */
  NC_KILLED = 4,    /* referee -> role: it is dead */
};
#define NC_FRAME_MAX 1024

int netcheck_ctl_send(int fd, uint32_t type, const void* data, uint32_t len);
/* Waits up to deadline (CLOCK_MONOTONIC ms) for a frame; returns its length,
 * -1 on error/EOF, -2 on timeout. */
int netcheck_ctl_recv(int fd, uint32_t* type, void* data, uint32_t cap, int64_t deadlineMs);
int64_t netcheck_now_ms(void);

/* ---- a role process ---- */
typedef struct {
  netcheck_plugin_t plugin;
  ncclNetProperties_v12_t props;
  int dev;
  int ctl;
  int quick;
  int64_t deadlineMs;  /* every wait of the role ends by then */
  const char* scenario;
  char roleName;       /* 'A' or 'B' */
} netcheck_role_t;

/* Reports one check to the referee; returns ok. */
int netcheck_check(netcheck_role_t* r, int ok, const char* check, const char* fmt, ...)
    __attribute__((format(printf, 4, 5)));
void netcheck_skip(netcheck_role_t* r, const char* check, const char* why);
int netcheck_relay_send(netcheck_role_t* r, const void* data, uint32_t len);
int netcheck_relay_recv(netcheck_role_t* r, void* data, uint32_t len);
/* A sync word: both roles pass the same point. */
int netcheck_sync(netcheck_role_t* r, uint32_t word);

/* listen, hand the handle to the peer, accept until done (bounded). */
int netcheck_pair_accept(netcheck_role_t* r, void** recvComm);
/* take the peer's handle, connect until done (bounded). */
int netcheck_pair_connect(netcheck_role_t* r, void** sendComm);
/* test until done or error or the deadline: 0 done, else the result (or -1 on timeout). */
int netcheck_wait(netcheck_role_t* r, void* request, int* sizes, ncclResult_t* res);
/* isend/irecv retried while the plugin hands back a NULL request. */
ncclResult_t netcheck_isend(netcheck_role_t* r, void* comm, void* data, size_t size, int tag, void* mh, void** req);
ncclResult_t netcheck_irecv(netcheck_role_t* r, void* comm, int n, void** data, size_t* sizes, int* tags, void** mh,
                            void** req);

void netcheck_fill(void* buf, size_t size, uint32_t seed);
/* Index of the first wrong byte, or -1. */
long netcheck_verify(const void* buf, size_t size, uint32_t seed);

/* ---- scenarios ---- */
typedef struct {
  const char* name;
  int (*roleA)(netcheck_role_t* r);
  int (*roleB)(netcheck_role_t* r); /* NULL: A alone */
  int bKilled;                      /* B is killed on purpose */
  const char* what;
} netcheck_scenario_t;

extern const netcheck_scenario_t netcheck_scenarios[];
extern const int netcheck_nscenarios;

/* ---- the parts ---- */
/* Lists the devices and checks each one's properties (a line per device);
 * *ndev is the count, -1 when devices() failed. */
void netcheck_props_check(const netcheck_plugin_t* p, int* ndev);
int netcheck_referee_run(const netcheck_opts_t* o, const netcheck_scenario_t* s, const char* self);
int netcheck_role_main(int argc, char** argv);
int netcheck_main(int argc, char** argv);

/* Scenario roles, by file. */
int netcheck_connect_a(netcheck_role_t* r);
int netcheck_connect_b(netcheck_role_t* r);
int netcheck_sizes_a(netcheck_role_t* r);
int netcheck_sizes_b(netcheck_role_t* r);
int netcheck_larger_a(netcheck_role_t* r);
int netcheck_larger_b(netcheck_role_t* r);
int netcheck_inflight_a(netcheck_role_t* r);
int netcheck_inflight_b(netcheck_role_t* r);
int netcheck_tags_a(netcheck_role_t* r);
int netcheck_tags_b(netcheck_role_t* r);
int netcheck_close_after_send_a(netcheck_role_t* r);
int netcheck_close_after_send_b(netcheck_role_t* r);
int netcheck_multirecv_a(netcheck_role_t* r);
int netcheck_multirecv_b(netcheck_role_t* r);
int netcheck_order_a(netcheck_role_t* r);
int netcheck_order_b(netcheck_role_t* r);
int netcheck_close_listen_a(netcheck_role_t* r);
int netcheck_close_unaccepted_a(netcheck_role_t* r);
int netcheck_close_unaccepted_b(netcheck_role_t* r);
int netcheck_close_inflight_a(netcheck_role_t* r);
int netcheck_close_inflight_b(netcheck_role_t* r);
int netcheck_killed_recv_a(netcheck_role_t* r);
int netcheck_killed_recv_b(netcheck_role_t* r);
int netcheck_killed_send_a(netcheck_role_t* r);
int netcheck_killed_send_b(netcheck_role_t* r);
int netcheck_badargs_a(netcheck_role_t* r);
int netcheck_badargs_b(netcheck_role_t* r);
int netcheck_gpu_a(netcheck_role_t* r);
int netcheck_gpu_b(netcheck_role_t* r);

#endif
