/* RC queue pairs: create in INIT, then RTR towards the peer's QP (LID on
 * InfiniBand, GRH with GID, traffic class and hop limit on RoCE) and RTS
 * with NCCL_IB_TIMEOUT / NCCL_IB_RETRY_CNT. */
#include <errno.h>
#include <string.h>

#include "net_ib.h"

ncclResult_t net_ib_qp_create(net_ib_dev_t* d, struct ibv_cq* cq, int maxRecv, struct ibv_qp** out) {
  struct ibv_qp_init_attr init;
  memset(&init, 0, sizeof(init));
  init.send_cq = cq;
  init.recv_cq = cq;
  init.qp_type = IBV_QPT_RC;
  /* each slot: up to IB_MAX_RECVS data writes, the sizes write, the immediate */
  int wr = IB_MAX_REQUESTS * (IB_MAX_RECVS + 2);
  init.cap.max_send_wr = (uint32_t)(wr < d->maxQpWr ? wr : d->maxQpWr);
  init.cap.max_recv_wr = (uint32_t)(maxRecv < d->maxQpWr ? maxRecv : d->maxQpWr);
  init.cap.max_send_sge = 1;
  init.cap.max_recv_sge = 1;
  struct ibv_qp* qp = ibv_create_qp(d->pd, &init);
  if (!qp) {
    IB_WARN("%s:%d: ibv_create_qp failed: %s", d->name, d->port, strerror(errno));
    return ncclSystemError;
  }
  struct ibv_qp_attr attr;
  memset(&attr, 0, sizeof(attr));
  attr.qp_state = IBV_QPS_INIT;
  attr.pkey_index = (uint16_t)net_ib_param_NCCL_IB_PKEY();
  attr.port_num = (uint8_t)d->port;
  attr.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
  int rc = ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
  if (rc != 0) {
    IB_WARN("%s:%d: QP to INIT failed: %s", d->name, d->port, strerror(rc));
    ibv_destroy_qp(qp);
    return ncclSystemError;
  }
  *out = qp;
  return ncclSuccess;
}

ncclResult_t net_ib_qp_connect(net_ib_dev_t* d, struct ibv_qp* qp, uint32_t localPsn, const net_ib_meta_t* remote,
                               uint32_t remoteQpn, int trafficClass) {
  struct ibv_qp_attr attr;
  memset(&attr, 0, sizeof(attr));
  attr.qp_state = IBV_QPS_RTR;
  attr.path_mtu = remote->mtu < d->mtu ? (enum ibv_mtu)remote->mtu : d->mtu;
  attr.dest_qp_num = remoteQpn;
  attr.rq_psn = remote->psn;
  attr.max_dest_rd_atomic = 1;
  attr.min_rnr_timer = 12;
  attr.ah_attr.port_num = (uint8_t)d->port;
  attr.ah_attr.sl = (uint8_t)net_ib_param_NCCL_IB_SL();
  if (d->linkLayer == IB_LINK_ETH) {
    attr.ah_attr.is_global = 1;
    memcpy(attr.ah_attr.grh.dgid.raw, remote->gid, 16);
    attr.ah_attr.grh.sgid_index = (uint8_t)d->gidIndex;
    attr.ah_attr.grh.hop_limit = 255;
    attr.ah_attr.grh.traffic_class = (uint8_t)trafficClass;
  } else {
    attr.ah_attr.dlid = remote->lid;
  }
  int rc = ibv_modify_qp(qp, &attr,
                         IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                             IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
  if (rc != 0) {
    IB_WARN("%s:%d: QP to RTR (remote QPN %u) failed: %s", d->name, d->port, remoteQpn, strerror(rc));
    return ncclSystemError;
  }
  memset(&attr, 0, sizeof(attr));
  attr.qp_state = IBV_QPS_RTS;
  attr.timeout = (uint8_t)net_ib_param_NCCL_IB_TIMEOUT();
  attr.retry_cnt = (uint8_t)net_ib_param_NCCL_IB_RETRY_CNT();
  attr.rnr_retry = 7;
  attr.sq_psn = localPsn;
  attr.max_rd_atomic = 1;
  rc = ibv_modify_qp(qp, &attr,
                     IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
                         IBV_QP_MAX_QP_RD_ATOMIC);
  if (rc != 0) {
    IB_WARN("%s:%d: QP to RTS failed: %s", d->name, d->port, strerror(rc));
    return ncclSystemError;
  }
  return ncclSuccess;
}

void net_ib_meta_local(net_ib_dev_t* d, net_ib_meta_t* m) {
  memset(m, 0, sizeof(*m));
  m->linkLayer = (uint8_t)d->linkLayer;
  m->mtu = (uint8_t)d->mtu;
  m->lid = d->lid;
  memcpy(m->gid, d->gid, 16);
  m->guid = d->guid;
}
