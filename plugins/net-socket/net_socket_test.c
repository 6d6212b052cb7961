/* test(): progress the control socket of the request's comm, then report
 * whether the request is complete and with which sizes; close: a comm's end
 * (a receive comm's through the receive path, which frees what it kept). */
#include "net_socket_test.h"

#include "net_socket_comm.h"
#include "net_socket_log.h"
#include "net_socket_params.h"
#include "net_socket_prof.h"
#include "net_socket_recv.h"
#include "net_socket_send.h"
#include "net_socket_unpack.h"

static int net_socket_request_complete(const net_socket_request_t* r) {
  if (r->comm->isSend && !r->ctrlDone) return 0;
  for (int i = 0; i < r->n; i++) {
    const net_socket_sub_t* sub = &r->subs[i];
    if (!r->comm->isSend && !sub->matched) return 0;
    if (atomic_load_explicit(&sub->pending, memory_order_acquire) != 0) return 0;
  }
  return 1;
}

ncclResult_t net_socket_test(void* request, int* done, int* sizes) {
  net_socket_request_t* r = request;
  if (!r || !r->used || !done) return NS_FAIL(ncclInvalidArgument, "test: not a pending request");
  net_socket_comm_t* comm = r->comm;
  ncclResult_t err = (ncclResult_t)atomic_load(&comm->error);
  if (err != ncclSuccess) return err; /* logged where it was decided */
  NS_CHECK(comm->isSend ? net_socket_tx_progress(comm) : net_socket_rx_progress(comm));
  if (!net_socket_request_complete(r)) {
    for (int i = 0; i < r->n && comm->rxClosed; i++)
      if (!r->subs[i].matched) {
        NS_WARN("receive (tag %d): the peer closed the connection before sending it", r->subs[i].tag);
        return net_socket_comm_fail(comm, ncclRemoteError);
      }
    *done = 0;
    return ncclSuccess;
  }
  if (sizes)
    for (int i = 0; i < r->n; i++) sizes[i] = (int)(comm->isSend ? r->subs[i].size : r->subs[i].received);
  if (net_socket_trace())
    NS_INFO(NCCL_NET, "trace: %s %p done: %d B tag %d (of %d)", comm->isSend ? "send" : "recv", (void*)r,
            (int)(comm->isSend ? r->subs[0].size : r->subs[0].received), r->subs[0].tag, r->n);
  net_socket_prof_stop(r);
  if (comm->unpack && !comm->isSend) net_socket_unpack_publish(comm, r); /* held until irecvConsumed */
  else r->used = 0;
  *done = 1;
  return ncclSuccess;
}

ncclResult_t net_socket_close_comm(void* c) {
  net_socket_comm_t* comm = c;
  if (comm && !comm->isSend) net_socket_recv_free(comm);
  else net_socket_comm_free(comm);
  return ncclSuccess;
}
