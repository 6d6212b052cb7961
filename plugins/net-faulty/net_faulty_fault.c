/* When a fault fires, and what it does to a connection or a request. */
#include <time.h>

#include "net_faulty.h"

static int64_t faulty_calls[FAULTY_OP_N]; /* atomic: the proxy and helping waiters call concurrently */

int64_t faulty_tick(faulty_op_t op) { return __atomic_add_fetch(&faulty_calls[op], 1, __ATOMIC_RELAXED); }

int faulty_from(faulty_op_t op, int64_t nth) {
  return faulty_config.mode != FAULTY_NONE && op == faulty_config.op && nth >= faulty_config.at;
}

int faulty_fires(faulty_op_t op, int64_t nth) {
  return faulty_config.mode != FAULTY_NONE && op == faulty_config.op && nth == faulty_config.at;
}

int64_t faulty_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void faulty_comm_close(faulty_comm_t* c, const char* why) {
  if (__atomic_exchange_n(&c->closed, 1, __ATOMIC_ACQ_REL)) return;
  faulty_log(NCCL_LOG_WARN, "injected fault: closing a %s connection at %s", c->isSend ? "send" : "receive", why);
  if (c->isSend) faulty_inner->closeSend(c->inner);
  else faulty_inner->closeRecv(c->inner);
  c->inner = NULL;
}

int faulty_release(faulty_req_t* r) {
  if (!r->faulty) return 1;
  if (faulty_config.mode == FAULTY_DELAY) return faulty_now_ns() - r->postNs >= faulty_config.delayMs * 1000000;
  if (faulty_config.mode == FAULTY_REORDER && r->held > 0) {
    r->held--;
    return 0;
  }
  return 1;
}
