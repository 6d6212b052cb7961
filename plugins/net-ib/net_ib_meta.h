/* What the two sides of a connection tell each other over the handshake
 * socket: their QPs and address (LID or GID), MTU, first PSN, and the one
 * buffer the other side writes into (sender: its FIFO; receiver: its sizes
 * FIFO) with its rkey. Encoded big-endian in a fixed frame that ends in a
 * checksum, so a stray connection or a corrupted frame is rejected. No
 * hardware needed: unit-tested alone. */
#ifndef NET_IB_META_H
#define NET_IB_META_H

#include <stddef.h>
#include <stdint.h>

#include "net_ib_fifo.h"

#define IB_META_MAGIC 0x4d4b4942u /* "MKIB" */
#define IB_META_VERSION 1
#define IB_META_SENDER 1
#define IB_META_RECEIVER 2
#define IB_LINK_IB 1
#define IB_LINK_ETH 2

typedef struct {
  uint16_t type;       /* IB_META_SENDER / IB_META_RECEIVER */
  uint16_t nqps;       /* 1..IB_MAX_QPS */
  uint8_t linkLayer;   /* IB_LINK_IB / IB_LINK_ETH */
  uint8_t mtu;         /* enum ibv_mtu, 1..5 */
  uint16_t lid;
  uint8_t gid[16];
  uint32_t psn;        /* 24 bits */
  uint32_t qpn[IB_MAX_QPS];
  uint64_t addr;       /* the buffer the peer writes to */
  uint32_t rkey;
  uint64_t guid;       /* for logs */
} net_ib_meta_t;

#define IB_META_BYTES (4 + 2 + 2 + 2 + 1 + 1 + 2 + 16 + 4 + 4 * IB_MAX_QPS + 8 + 4 + 8 + 4)

/* 0 and the frame in out[IB_META_BYTES]; -1 if m is out of range. */
int net_ib_meta_encode(const net_ib_meta_t* m, uint8_t* out);
/* 0 and *m; -1 for a short, corrupted, foreign or out-of-range frame. */
int net_ib_meta_decode(const uint8_t* in, size_t len, uint16_t wantType, net_ib_meta_t* m);
/* FNV-1a over the frame's bytes before the checksum (exposed for tests). */
uint32_t net_ib_meta_checksum(const uint8_t* frame);

#endif
