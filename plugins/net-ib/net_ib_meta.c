/* Handshake frames (see net_ib_meta.h). */
#include "net_ib_meta.h"

#include <string.h>

static uint8_t* put16(uint8_t* p, uint16_t v) { p[0] = (uint8_t)(v >> 8), p[1] = (uint8_t)v; return p + 2; }
static uint8_t* put32(uint8_t* p, uint32_t v) { p = put16(p, (uint16_t)(v >> 16)); return put16(p, (uint16_t)v); }
static uint8_t* put64(uint8_t* p, uint64_t v) { p = put32(p, (uint32_t)(v >> 32)); return put32(p, (uint32_t)v); }
static uint16_t get16(const uint8_t** p) { uint16_t v = (uint16_t)((*p)[0] << 8 | (*p)[1]); *p += 2; return v; }
static uint32_t get32(const uint8_t** p) { uint32_t hi = get16(p); return hi << 16 | get16(p); }
static uint64_t get64(const uint8_t** p) { uint64_t hi = get32(p); return hi << 32 | get32(p); }

static int net_ib_meta_valid(const net_ib_meta_t* m) {
  return (m->type == IB_META_SENDER || m->type == IB_META_RECEIVER) && m->nqps >= 1 && m->nqps <= IB_MAX_QPS &&
         (m->linkLayer == IB_LINK_IB || m->linkLayer == IB_LINK_ETH) && m->mtu >= 1 && m->mtu <= 5 &&
         m->psn < (1u << 24);
}

uint32_t net_ib_meta_checksum(const uint8_t* frame) {
  uint32_t h = 2166136261u;
  for (size_t i = 0; i < IB_META_BYTES - 4; i++) h = (h ^ frame[i]) * 16777619u;
  return h;
}

int net_ib_meta_encode(const net_ib_meta_t* m, uint8_t* out) {
  if (!net_ib_meta_valid(m)) return -1;
  uint8_t* p = put32(out, IB_META_MAGIC);
  p = put16(p, IB_META_VERSION);
  p = put16(p, m->type);
  p = put16(p, m->nqps);
  *p++ = m->linkLayer;
  *p++ = m->mtu;
  p = put16(p, m->lid);
  memcpy(p, m->gid, 16);
  p += 16;
  p = put32(p, m->psn);
  for (int q = 0; q < IB_MAX_QPS; q++) p = put32(p, q < m->nqps ? m->qpn[q] : 0);
  p = put64(p, m->addr);
  p = put32(p, m->rkey);
  p = put64(p, m->guid);
  put32(p, net_ib_meta_checksum(out));
  return 0;
}

int net_ib_meta_decode(const uint8_t* in, size_t len, uint16_t wantType, net_ib_meta_t* out) {
  if (len < IB_META_BYTES) return -1;
  const uint8_t* p = in;
  if (get32(&p) != IB_META_MAGIC || get16(&p) != IB_META_VERSION) return -1;
  const uint8_t* end = in + IB_META_BYTES - 4;
  if (get32(&end) != net_ib_meta_checksum(in)) return -1;
  net_ib_meta_t m;
  memset(&m, 0, sizeof(m));
  m.type = get16(&p);
  m.nqps = get16(&p);
  m.linkLayer = *p++;
  m.mtu = *p++;
  m.lid = get16(&p);
  memcpy(m.gid, p, 16);
  p += 16;
  m.psn = get32(&p);
  for (int q = 0; q < IB_MAX_QPS; q++) m.qpn[q] = get32(&p);
  m.addr = get64(&p);
  m.rkey = get32(&p);
  m.guid = get64(&p);
  if (!net_ib_meta_valid(&m) || m.type != wantType) return -1;
  for (int q = m.nqps; q < IB_MAX_QPS; q++)
    if (m.qpn[q] != 0) return -1;
  *out = m;
  return 0;
}
