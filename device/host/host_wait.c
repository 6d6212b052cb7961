/* The slow side of host waits: the timeout that turns a dead or stuck peer
 * into an error instead of a hang. */
#include "host_wait.h"

#include "base/err.h"

int64_t host_wait_timeout_ns;
uint32_t host_ll_polls;

void host_wait_timed_out(volatile uint32_t* abortFlag, const char* what) {
  MK_WARN("host executor: no progress waiting for %s for %lld s (MKCCL_TIMEOUT): a peer died or stopped; "
          "the communicator is aborted",
          what, (long long)(__atomic_load_n(&host_wait_timeout_ns, __ATOMIC_RELAXED) / 1000000000));
  __atomic_store_n(abortFlag, 1, __ATOMIC_RELEASE);
}
