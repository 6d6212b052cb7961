/* Handshake frames: round trip, and every kind of garbage refused. */
#include "check.h"
#include "net_ib_meta.h"

static net_ib_meta_t sample(void) {
  net_ib_meta_t m;
  memset(&m, 0, sizeof(m));
  m.type = IB_META_SENDER;
  m.nqps = 3;
  m.linkLayer = IB_LINK_ETH;
  m.mtu = 5;
  m.lid = 0x1234;
  for (int i = 0; i < 16; i++) m.gid[i] = (uint8_t)(0xa0 + i);
  m.psn = 0xabcdef;
  m.qpn[0] = 0x111, m.qpn[1] = 0xfffffe, m.qpn[2] = 7;
  m.addr = 0x7f0012345678ULL;
  m.rkey = 0xdeadbeef;
  m.guid = 0x0102030405060708ULL;
  return m;
}

int main(void) {
  uint8_t frame[IB_META_BYTES], copy[IB_META_BYTES];
  net_ib_meta_t m = sample(), got;
  CHECK_EQ_INT(net_ib_meta_encode(&m, frame), 0);
  CHECK_EQ_INT(net_ib_meta_decode(frame, sizeof(frame), IB_META_SENDER, &got), 0);
  CHECK(memcmp(&m, &got, sizeof(m)) == 0); /* every field back, padding zero on both */
  /* big-endian on the wire: the magic reads "MKIB" */
  CHECK(memcmp(frame, "MKIB", 4) == 0);
  /* the other side's type is refused */
  CHECK_EQ_INT(net_ib_meta_decode(frame, sizeof(frame), IB_META_RECEIVER, &got), -1);
  /* short */
  CHECK_EQ_INT(net_ib_meta_decode(frame, sizeof(frame) - 1, IB_META_SENDER, &got), -1);
  /* any single flipped byte */
  for (size_t i = 0; i < sizeof(frame); i++) {
    memcpy(copy, frame, sizeof(frame));
    copy[i] ^= 0x40;
    CHECK_MSG(net_ib_meta_decode(copy, sizeof(copy), IB_META_SENDER, &got) == -1, "flipped byte %zu accepted", i);
  }
  /* garbage with a valid checksum but fields out of range (nqps 0, then 17) */
  for (int bad = 0; bad < 2; bad++) {
    memcpy(copy, frame, sizeof(frame));
    copy[8] = 0, copy[9] = bad ? IB_MAX_QPS + 1 : 0; /* nqps, after magic, version and type */
    uint32_t h = net_ib_meta_checksum(copy);
    copy[IB_META_BYTES - 4] = (uint8_t)(h >> 24), copy[IB_META_BYTES - 3] = (uint8_t)(h >> 16);
    copy[IB_META_BYTES - 2] = (uint8_t)(h >> 8), copy[IB_META_BYTES - 1] = (uint8_t)h;
    CHECK_EQ_INT(net_ib_meta_decode(copy, sizeof(copy), IB_META_SENDER, &got), -1);
  }
  /* a QPN beyond nqps (stale bytes) is refused too */
  memcpy(copy, frame, sizeof(frame));
  size_t qpn3 = 4 + 2 + 2 + 2 + 1 + 1 + 2 + 16 + 4 + 4 * 3;
  copy[qpn3 + 3] = 9;
  uint32_t h = net_ib_meta_checksum(copy);
  for (int k = 0; k < 4; k++) copy[IB_META_BYTES - 4 + k] = (uint8_t)(h >> (24 - 8 * k));
  CHECK_EQ_INT(net_ib_meta_decode(copy, sizeof(copy), IB_META_SENDER, &got), -1);
  /* random bytes */
  unsigned seed = 12345;
  for (int t = 0; t < 1000; t++) {
    for (size_t i = 0; i < sizeof(copy); i++) seed = seed * 1103515245u + 12345u, copy[i] = (uint8_t)(seed >> 16);
    CHECK_EQ_INT(net_ib_meta_decode(copy, sizeof(copy), IB_META_SENDER, &got), -1);
  }
  /* the encoder refuses what the decoder would */
  net_ib_meta_t bad = sample();
  bad.nqps = 0;
  CHECK_EQ_INT(net_ib_meta_encode(&bad, frame), -1);
  bad = sample(), bad.mtu = 6;
  CHECK_EQ_INT(net_ib_meta_encode(&bad, frame), -1);
  bad = sample(), bad.psn = 1u << 24;
  CHECK_EQ_INT(net_ib_meta_encode(&bad, frame), -1);
  bad = sample(), bad.linkLayer = 0;
  CHECK_EQ_INT(net_ib_meta_encode(&bad, frame), -1);
  /* the receiver's frame */
  m = sample();
  m.type = IB_META_RECEIVER, m.nqps = IB_MAX_QPS;
  for (int q = 0; q < IB_MAX_QPS; q++) m.qpn[q] = (uint32_t)(q + 100);
  CHECK_EQ_INT(net_ib_meta_encode(&m, frame), 0);
  CHECK_EQ_INT(net_ib_meta_decode(frame, sizeof(frame), IB_META_RECEIVER, &got), 0);
  CHECK_EQ_INT(got.qpn[IB_MAX_QPS - 1], 100 + IB_MAX_QPS - 1);
  printf("test_net_ib_meta: ok\n");
  return 0;
}
