/* Reading and writing the proxy backend's descriptors. Each of the 8
 * qwords carries a valid bit (bit 0) because the GPU stores the 64 bytes
 * as four 16-byte stores that may arrive in any order; a descriptor is
 * taken only when all 8 bits are set. Fields the GPU does not write for an
 * op (the inline value's upper bytes for a small value, the source of an
 * inline put) hold stack garbage and are read only where the op says. */
#include "gin/gin_gfd.h"

enum { Q_HEADER, Q_SRC_OFF, Q_SRC_WIN, Q_DST_OFF, Q_DST_WIN, Q_COMPLETION, Q_SIGNAL, Q_RESERVED };
#define Q_INLINE_LOW Q_SRC_OFF
#define Q_INLINE_HIGH Q_SRC_WIN

static uint64_t bits(uint64_t q, int at, int n) { return (q >> at) & (n == 64 ? ~0ull : ((1ull << n) - 1)); }

int gin_gfd_take(volatile uint64_t* slot, gin_gfd_t* out) {
  uint64_t q[GIN_GFD_QWORDS];
  for (int i = 0; i < GIN_GFD_QWORDS; i++) {
    q[i] = __atomic_load_n(&slot[i], __ATOMIC_ACQUIRE);
    if (!(q[i] & 1)) return 0;
  }
  gin_gfd_t g;
  g.op = (uint32_t)bits(q[Q_HEADER], 1, 6);
  g.size = q[Q_HEADER] >> 7;
  g.srcOff = g.srcWin = g.inlineValue = 0;
  if (g.op & GIN_OP_INLINE) {
    g.inlineValue = bits(q[Q_INLINE_LOW], 8, 32);
    if (g.size > 4) g.inlineValue |= bits(q[Q_INLINE_LOW], 40, 16) << 32;
    if (g.size > 6) g.inlineValue |= bits(q[Q_INLINE_HIGH], 8, 16) << 48;
  } else {
    g.srcOff = q[Q_SRC_OFF] >> 1;
    g.srcWin = q[Q_SRC_WIN] >> 1;
  }
  g.dstOff = q[Q_DST_OFF] >> 1;
  g.dstWin = q[Q_DST_WIN] >> 1;
  g.counterId = (uint32_t)bits(q[Q_COMPLETION], 8, 16);
  g.signalId = (uint32_t)bits(q[Q_COMPLETION], 24, 16);
  g.signalValue = bits(q[Q_COMPLETION], 40, 16) | bits(q[Q_SIGNAL], 8, 16) << 16 | bits(q[Q_SIGNAL], 24, 32) << 32;
  /* Cleared before the slot is handed back (cis), so the GPU's next
   * descriptor there is never mistaken for this one. */
  for (int i = 0; i < GIN_GFD_QWORDS; i++) __atomic_store_n(&slot[i], 0, __ATOMIC_RELAXED);
  *out = g;
  return 1;
}

void gin_gfd_write(volatile uint64_t* slot, const gin_gfd_t* g) {
  uint64_t q[GIN_GFD_QWORDS];
  q[Q_HEADER] = 1 | (uint64_t)(g->op & 0x3f) << 1 | g->size << 7;
  if (g->op & GIN_OP_INLINE) {
    q[Q_INLINE_LOW] = 1 | (g->inlineValue & 0xffffffffull) << 8 | (g->inlineValue >> 32 & 0xffff) << 40;
    q[Q_INLINE_HIGH] = 1 | (g->inlineValue >> 48 & 0xffff) << 8;
  } else {
    q[Q_SRC_OFF] = 1 | g->srcOff << 1;
    q[Q_SRC_WIN] = 1 | g->srcWin << 1;
  }
  q[Q_DST_OFF] = 1 | g->dstOff << 1;
  q[Q_DST_WIN] = 1 | g->dstWin << 1;
  q[Q_COMPLETION] = 1 | (uint64_t)(g->counterId & 0xffff) << 8 | (uint64_t)(g->signalId & 0xffff) << 24 |
                    (g->signalValue & 0xffff) << 40;
  q[Q_SIGNAL] = 1 | (g->signalValue >> 16 & 0xffff) << 8 | (g->signalValue >> 32) << 24;
  q[Q_RESERVED] = 1;
  /* The header last, as a GPU's stores may land: the reader must still
   * wait for every valid bit. */
  for (int i = GIN_GFD_QWORDS - 1; i >= 0; i--) __atomic_store_n(&slot[i], q[i], __ATOMIC_RELEASE);
}
