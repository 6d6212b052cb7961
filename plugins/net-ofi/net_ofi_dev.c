/* A device's endpoint: fabric, domain, CQ, AV and one RDM endpoint, opened
 * when the first comm needs it, shared by all comms of the device, closed
 * when the plugin finalizes. The CQ is read here and each completion handed
 * to the operation whose context it carries. */
#include <stdio.h>
#include <string.h>

#include <rdma/fi_cm.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_tagged.h>

#include "net_ofi.h"

static net_ofi_dev_t net_ofi_devs[OFI_MAX_DEVS];
static int net_ofi_devs_open[OFI_MAX_DEVS];
static pthread_mutex_t net_ofi_devs_lock = PTHREAD_MUTEX_INITIALIZER;

uint32_t net_ofi_dev_new_id(net_ofi_dev_t* d) {
  d->nextId = (d->nextId + 1) & net_ofi_id_mask(d->nic);
  if (d->nextId == 0) d->nextId = 1;
  return d->nextId;
}

static ncclResult_t net_ofi_probe_post(net_ofi_dev_t* d) {
  d->probeRecv.kind = OFI_OP_PROBE_RECV;
  d->probeRecv.owner = d;
  uint64_t tag = net_ofi_ctrl_tag(d->nic, OFI_CTRL_PROBE, 0);
  int rc = (int)fi_trecv(d->ep, NULL, 0, NULL, FI_ADDR_UNSPEC, tag, 0xffffffffULL, &d->probeRecv.fctx);
  if (rc == -FI_EAGAIN) return ncclSuccess; /* re-posted on the next progress */
  if (rc != 0) {
    OFI_WARN("%s: posting the probe receive failed: %s", d->nic->name, fi_strerror(-rc));
    return ncclSystemError;
  }
  d->probeRecv.inFlight = 1;
  return ncclSuccess;
}

#define OFI_TRY(call, what, label)                                                        \
  do {                                                                                    \
    int rc_ = (int)(call);                                                                \
    if (rc_ != 0) {                                                                       \
      OFI_WARN("%s: %s failed: %s", d->nic->name, what, fi_strerror(rc_ < 0 ? -rc_ : rc_)); \
      goto label;                                                                         \
    }                                                                                     \
  } while (0)

static ncclResult_t net_ofi_dev_open(net_ofi_dev_t* d, const net_ofi_nic_t* nic) {
  struct fi_info* fi = nic->info;
  d->nic = nic;
  d->mrMode = fi->domain_attr->mr_mode |
              ((uint64_t)net_ofi_param_MKCCL_OFI_MR_MODE_ADD() & (FI_MR_LOCAL | FI_MR_ENDPOINT));
  OFI_TRY(fi_fabric(fi->fabric_attr, &d->fabric, NULL), "fi_fabric", fail);
  OFI_TRY(fi_domain(d->fabric, fi, &d->domain, NULL), "fi_domain", fail_fabric);
  struct fi_cq_attr cqAttr = {.format = FI_CQ_FORMAT_TAGGED, .wait_obj = FI_WAIT_NONE};
  OFI_TRY(fi_cq_open(d->domain, &cqAttr, &d->cq, NULL), "fi_cq_open", fail_domain);
  struct fi_av_attr avAttr = {.type = FI_AV_TABLE};
  OFI_TRY(fi_av_open(d->domain, &avAttr, &d->av, NULL), "fi_av_open", fail_cq);
  OFI_TRY(fi_endpoint(d->domain, fi, &d->ep, NULL), "fi_endpoint", fail_av);
  OFI_TRY(fi_ep_bind(d->ep, &d->cq->fid, FI_TRANSMIT | FI_RECV), "binding the CQ", fail_ep);
  OFI_TRY(fi_ep_bind(d->ep, &d->av->fid, 0), "binding the AV", fail_ep);
  OFI_TRY(fi_enable(d->ep), "fi_enable", fail_ep);
  d->addrLen = sizeof(d->addr);
  OFI_TRY(fi_getname(&d->ep->fid, d->addr, &d->addrLen), "fi_getname (address longer than 96 bytes?)", fail_ep);
  d->self = FI_ADDR_NOTAVAIL;
  if (nic->rma && fi_av_insert(d->av, d->addr, 1, &d->self, 0, NULL) != 1) {
    OFI_WARN("%s: inserting our own address for flush reads failed", nic->name);
    goto fail_ep;
  }
  if (net_ofi_probe_post(d) != ncclSuccess) goto fail_ep;
  OFI_INFO(NCCL_INIT | NCCL_NET, "%s: endpoint open (provider %s, mr_mode 0x%lx)", nic->name,
           fi->fabric_attr->prov_name, (unsigned long)d->mrMode);
  return ncclSuccess;
fail_ep:
  fi_close(&d->ep->fid);
fail_av:
  fi_close(&d->av->fid);
fail_cq:
  fi_close(&d->cq->fid);
fail_domain:
  fi_close(&d->domain->fid);
fail_fabric:
  fi_close(&d->fabric->fid);
fail:
  d->ep = NULL;
  return ncclSystemError;
}

ncclResult_t net_ofi_dev_acquire(int dev, net_ofi_dev_t** out) {
  const net_ofi_nic_t* nic = net_ofi_nic_get(dev);
  if (!nic) {
    OFI_WARN("device %d out of range (%d devices)", dev, net_ofi_nic_count());
    return ncclInvalidArgument;
  }
  ncclResult_t res = ncclSuccess;
  pthread_mutex_lock(&net_ofi_devs_lock);
  net_ofi_dev_t* d = &net_ofi_devs[dev];
  if (!net_ofi_devs_open[dev]) {
    memset(d, 0, sizeof(*d));
    pthread_mutex_init(&d->lock, NULL);
    res = net_ofi_dev_open(d, nic);
    if (res == ncclSuccess) net_ofi_devs_open[dev] = 1;
    else pthread_mutex_destroy(&d->lock);
  }
  if (res == ncclSuccess) {
    d->refs++;
    *out = d;
  }
  pthread_mutex_unlock(&net_ofi_devs_lock);
  return res;
}

void net_ofi_dev_acquire_ref(net_ofi_dev_t* d) {
  pthread_mutex_lock(&net_ofi_devs_lock);
  d->refs++;
  pthread_mutex_unlock(&net_ofi_devs_lock);
}

void net_ofi_dev_release(net_ofi_dev_t* d) {
  pthread_mutex_lock(&net_ofi_devs_lock);
  d->refs--;
  pthread_mutex_unlock(&net_ofi_devs_lock);
}

/* Closing the endpoint drops every operation still posted; comms that were
 * waiting for theirs (zombies) can go after it. Returns how many stay open. */
int net_ofi_devs_close(void) {
  int kept = 0;
  pthread_mutex_lock(&net_ofi_devs_lock);
  for (int i = 0; i < OFI_MAX_DEVS; i++) {
    net_ofi_dev_t* d = &net_ofi_devs[i];
    if (!net_ofi_devs_open[i]) continue;
    if (d->refs > 0) {
      OFI_INFO(NCCL_NET, "%s: %d comm(s) still open at finalize: endpoint kept", d->nic->name, d->refs);
      kept++;
      continue;
    }
    fi_close(&d->ep->fid);
    fi_close(&d->av->fid);
    fi_close(&d->cq->fid);
    fi_close(&d->domain->fid);
    fi_close(&d->fabric->fid);
    while (d->zombies) {
      net_ofi_obj_t* o = d->zombies;
      d->zombies = o->nextZombie;
      net_ofi_obj_free(o);
    }
    pthread_mutex_destroy(&d->lock);
    net_ofi_devs_open[i] = 0;
  }
  pthread_mutex_unlock(&net_ofi_devs_lock);
  return kept;
}

static void net_ofi_dispatch(net_ofi_dev_t* d, net_ofi_op_t* op, int err, size_t len) {
  if (op == &d->probeRecv) {
    op->inFlight = 0;
    net_ofi_probe_post(d); /* keep one posted; EAGAIN leaves it for the next round */
    return;
  }
  net_ofi_op_done(op, err, len);
}

/* Frees zombies whose last operation has completed. */
static void net_ofi_reap(net_ofi_dev_t* d) {
  net_ofi_obj_t** p = &d->zombies;
  while (*p) {
    net_ofi_obj_t* o = *p;
    if (o->inFlight == 0) {
      *p = o->nextZombie;
      net_ofi_obj_free(o);
    } else {
      p = &o->nextZombie;
    }
  }
}

ncclResult_t net_ofi_dev_progress(net_ofi_dev_t* d) {
  struct fi_cq_tagged_entry entries[16];
  for (;;) {
    ssize_t n = fi_cq_read(d->cq, entries, 16);
    if (n == -FI_EAGAIN) break;
    if (n == -FI_EAVAIL) {
      struct fi_cq_err_entry e;
      memset(&e, 0, sizeof(e));
      ssize_t rc = fi_cq_readerr(d->cq, &e, 0);
      if (rc < 0) {
        OFI_WARN("%s: fi_cq_readerr failed: %s", d->nic->name, fi_strerror((int)-rc));
        return ncclSystemError;
      }
      if (e.err != FI_ECANCELED)
        OFI_INFO(NCCL_NET, "%s: operation failed: %s (%s)", d->nic->name, fi_strerror(e.err),
                 fi_cq_strerror(d->cq, e.prov_errno, e.err_data, NULL, 0));
      if (e.op_context) net_ofi_dispatch(d, e.op_context, e.err ? e.err : FI_EIO, e.len);
      continue;
    }
    if (n < 0) {
      OFI_WARN("%s: fi_cq_read failed: %s", d->nic->name, fi_strerror((int)-n));
      return ncclSystemError;
    }
    for (ssize_t i = 0; i < n; i++)
      if (entries[i].op_context) net_ofi_dispatch(d, entries[i].op_context, 0, entries[i].len);
    if (n < 16) break;
  }
  if (!d->probeRecv.inFlight && net_ofi_probe_post(d) != ncclSuccess) return ncclSystemError;
  if (d->zombies) net_ofi_reap(d);
  return ncclSuccess;
}
