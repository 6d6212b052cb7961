/* net-faulty: a net plugin (NCCL net v11) that wraps another net plugin and,
 * by parameter, injects one kind of fault from a chosen call on:
 *
 *   delay    requests report completion MKCCL_NET_FAULTY_DELAY_MS after posting
 *   reorder  every other request reports completion late (held for some test
 *            calls), so later requests complete first
 *   error    the chosen call returns ncclSystemError
 *   close    the chosen call's connection is closed under the caller: the
 *            peer sees its socket close, every later call on it fails
 *
 * MKCCL_NET_FAULTY_OP picks the counted call (isend, irecv or test) and
 * MKCCL_NET_FAULTY_AT the first faulty one (1-based, per process). For tests
 * only: it is never installed. */
#ifndef MKCCL_NET_FAULTY_H
#define MKCCL_NET_FAULTY_H

#include <stdint.h>

#include "mkccl_plugin_v1.h"
#include "net/nccl_net_v11.h"

typedef enum { FAULTY_NONE, FAULTY_DELAY, FAULTY_REORDER, FAULTY_ERROR, FAULTY_CLOSE } faulty_mode_t;
typedef enum { FAULTY_OP_ISEND, FAULTY_OP_IRECV, FAULTY_OP_TEST, FAULTY_OP_N } faulty_op_t;

#define FAULTY_MAX_RECVS 16
#define FAULTY_REORDER_HOLD 64 /* test calls a held completion waits */

/* A connection of the inner plugin, and whether a fault closed it. */
typedef struct {
  void* inner;
  int isSend;
  int closed; /* atomic */
} faulty_comm_t;

/* A request of the inner plugin with what the fault needs to know. */
typedef struct {
  void* inner;
  faulty_comm_t* comm;
  int faulty;     /* delay/reorder apply */
  int64_t postNs;
  int innerDone;  /* the inner plugin said done; sizes saved */
  int held;       /* reorder: test calls still to answer "not done" */
  int n;
  int sizes[FAULTY_MAX_RECVS];
} faulty_req_t;

/* ---- parameters (net_faulty_params.c) ---- */
typedef struct {
  faulty_mode_t mode;
  faulty_op_t op;
  int64_t at;
  int64_t delayMs;
  const char* plugin;
} faulty_config_t;
extern faulty_config_t faulty_config;
void faulty_config_read(void); /* once, at init */
void faulty_log(int level, const char* fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- the inner plugin (net_faulty_inner.c) ---- */
extern const ncclNet_v11_t* faulty_inner;
ncclResult_t faulty_inner_load(const char* plugin);

/* ---- fault decisions (net_faulty_fault.c) ---- */
/* Counts a call of `op`: its number, from 1. */
int64_t faulty_tick(faulty_op_t op);
/* Whether call `nth` of `op` is at or past MKCCL_NET_FAULTY_AT (delay, reorder). */
int faulty_from(faulty_op_t op, int64_t nth);
/* Whether it is exactly the one MKCCL_NET_FAULTY_AT names (error, close). */
int faulty_fires(faulty_op_t op, int64_t nth);
int64_t faulty_now_ns(void);
/* Closes the inner connection under the caller (close mode). */
void faulty_comm_close(faulty_comm_t* c, const char* why);
/* Whether a request the inner plugin finished may say so yet. */
int faulty_release(faulty_req_t* r);

#endif
