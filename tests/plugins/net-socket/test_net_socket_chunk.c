/* Unit tests of the arithmetic both ends of a connection must agree on:
 * chunk sizes and bounds, and the threads/sockets layout. */
#include "check.h"
#include "net_socket_chunk.h"
#include "net_socket_layout.h"

/* Chunks cover [0, size) exactly, in order, none empty, none over chunkSize. */
static void check_cover(size_t size, int nSocks, size_t minChunk) {
  size_t cs = net_socket_chunk_size(size, nSocks, minChunk);
  int n = net_socket_chunk_count(size, cs);
  CHECK(n <= (nSocks < 1 ? 1 : nSocks));
  size_t next = 0;
  for (int i = 0; i < n; i++) {
    size_t off, len;
    net_socket_chunk_get(size, cs, i, &off, &len);
    CHECK_EQ_INT(off, next);
    CHECK(len > 0 && len <= cs);
    next = off + len;
  }
  CHECK_EQ_INT(next, size);
}

static void test_chunks(void) {
  /* Small messages: one chunk of at least minChunk. */
  CHECK_EQ_INT(net_socket_chunk_size(1000, 8, 65536), 65536);
  CHECK_EQ_INT(net_socket_chunk_count(1000, 65536), 1);
  /* Large ones: spread evenly over the sockets. */
  CHECK_EQ_INT(net_socket_chunk_size(8 << 20, 8, 65536), 1 << 20);
  CHECK_EQ_INT(net_socket_chunk_count(8 << 20, 1 << 20), 8);
  /* In between: as many minChunk chunks as needed, fewer than sockets. */
  CHECK_EQ_INT(net_socket_chunk_size(200000, 8, 65536), 65536);
  CHECK_EQ_INT(net_socket_chunk_count(200000, 65536), 4);
  /* Uneven: the last chunk is short, nothing is lost. */
  CHECK_EQ_INT(net_socket_chunk_size(1000001, 4, 1), 250001);
  size_t off, len;
  net_socket_chunk_get(1000001, 250001, 3, &off, &len);
  CHECK_EQ_INT(off, 750003);
  CHECK_EQ_INT(len, 249998);
  /* Empty messages have no chunk; a zero minChunk still makes progress. */
  CHECK_EQ_INT(net_socket_chunk_count(0, 65536), 0);
  CHECK(net_socket_chunk_size(10, 4, 0) >= 1);
  CHECK_EQ_INT(net_socket_chunk_size(10, 0, 0), 10); /* no sockets: one piece */
  const size_t sizes[] = {1, 2, 3, 4095, 4096, 65535, 65536, 65537, 1 << 20, (1 << 20) + 7, 64u << 20, 2147483647u};
  const int socks[] = {1, 2, 3, 7, 8, 16, 64};
  const size_t mins[] = {1, 4096, 65536};
  for (unsigned a = 0; a < sizeof(sizes) / sizeof(sizes[0]); a++)
    for (unsigned b = 0; b < sizeof(socks) / sizeof(socks[0]); b++)
      for (unsigned c = 0; c < sizeof(mins) / sizeof(mins[0]); c++) check_cover(sizes[a], socks[b], mins[c]);
}

static void test_layout(void) {
  net_socket_layout_t l;
  /* Detected: unknown NIC, few CPUs -> no helper thread, no data socket (NCCL's default). */
  l = net_socket_layout_resolve(NET_SOCKET_LAYOUT_AUTO, NET_SOCKET_LAYOUT_AUTO, 0, 2, 0);
  CHECK_EQ_INT(l.nThreads, 0);
  CHECK_EQ_INT(l.nSocks, 0);
  /* ... unless the process has many CPUs: 1 thread x 1 socket, then 2 x 1. */
  l = net_socket_layout_resolve(NET_SOCKET_LAYOUT_AUTO, NET_SOCKET_LAYOUT_AUTO, 0, NET_SOCKET_AUTO_THREADS_CPUS, 0);
  CHECK_EQ_INT(l.nThreads, 1);
  CHECK_EQ_INT(l.nSocks, 1);
  l = net_socket_layout_resolve(NET_SOCKET_LAYOUT_AUTO, NET_SOCKET_LAYOUT_AUTO, 0, NET_SOCKET_AUTO_THREADS2_CPUS - 1, 0);
  CHECK_EQ_INT(l.nThreads, 1);
  l = net_socket_layout_resolve(NET_SOCKET_LAYOUT_AUTO, NET_SOCKET_LAYOUT_AUTO, 0, NET_SOCKET_AUTO_THREADS2_CPUS, 0);
  CHECK_EQ_INT(l.nThreads, 2);
  CHECK_EQ_INT(l.nSocks, 2);
  l = net_socket_layout_resolve(NET_SOCKET_LAYOUT_AUTO, NET_SOCKET_LAYOUT_AUTO, 0, NET_SOCKET_AUTO_THREADS_CPUS - 1, 0);
  CHECK_EQ_INT(l.nThreads, 0);
  l = net_socket_layout_resolve(NET_SOCKET_LAYOUT_AUTO, NET_SOCKET_LAYOUT_AUTO, 0x1d0f, 2, 0); /* AWS */
  CHECK_EQ_INT(l.nThreads, 2);
  CHECK_EQ_INT(l.nSocks, 16);
  l = net_socket_layout_resolve(NET_SOCKET_LAYOUT_AUTO, NET_SOCKET_LAYOUT_AUTO, 0x1ae0, 2, 0); /* GCP */
  CHECK_EQ_INT(l.nThreads, 4);
  CHECK_EQ_INT(l.nSocks, 4);
  /* Set threads, detected sockets per thread (1). */
  l = net_socket_layout_resolve(4, NET_SOCKET_LAYOUT_AUTO, 0, 2, 0);
  CHECK_EQ_INT(l.nThreads, 4);
  CHECK_EQ_INT(l.nSocks, 4);
  /* Limits: 16 threads, 64 sockets (sockets per thread shrink). */
  l = net_socket_layout_resolve(32, 1, 0, 2, 0);
  CHECK_EQ_INT(l.nThreads, 16);
  CHECK(l.clamped);
  l = net_socket_layout_resolve(16, 8, 0, 2, 0);
  CHECK_EQ_INT(l.nThreads, 16);
  CHECK_EQ_INT(l.nSocks, 64);
  CHECK(l.clamped);
  l = net_socket_layout_resolve(3, 30, 0, 2, 0);
  CHECK_EQ_INT(l.nSocks, 63);
  CHECK_EQ_INT(l.nSocks % l.nThreads, 0);
  /* Sockets without threads, or threads without sockets: neither. */
  l = net_socket_layout_resolve(0, 8, 0, 2, 0);
  CHECK_EQ_INT(l.nThreads, 0);
  CHECK_EQ_INT(l.nSocks, 0);
  l = net_socket_layout_resolve(2, 0, 0, 2, 0);
  CHECK_EQ_INT(l.nThreads, 0);
  CHECK_EQ_INT(l.nSocks, 0);
  l = net_socket_layout_resolve(-5, 1, 0, 2, 0);
  CHECK_EQ_INT(l.nThreads, 0);
  CHECK(l.clamped);
  /* setNetAttr's flows per peer cap what detection chose, the control socket counted. */
  l = net_socket_layout_resolve(NET_SOCKET_LAYOUT_AUTO, NET_SOCKET_LAYOUT_AUTO, 0, NET_SOCKET_AUTO_THREADS2_CPUS, 1);
  CHECK_EQ_INT(l.nThreads, 0);
  CHECK_EQ_INT(l.nSocks, 0);
  l = net_socket_layout_resolve(NET_SOCKET_LAYOUT_AUTO, NET_SOCKET_LAYOUT_AUTO, 0, NET_SOCKET_AUTO_THREADS2_CPUS, 2);
  CHECK_EQ_INT(l.nThreads, 1);
  CHECK_EQ_INT(l.nSocks, 1);
  l = net_socket_layout_resolve(NET_SOCKET_LAYOUT_AUTO, NET_SOCKET_LAYOUT_AUTO, 0x1d0f, 2, 6); /* AWS: 2 x 8 */
  CHECK_EQ_INT(l.nThreads, 2);
  CHECK_EQ_INT(l.nSocks, 4);
  l = net_socket_layout_resolve(NET_SOCKET_LAYOUT_AUTO, NET_SOCKET_LAYOUT_AUTO, 0, NET_SOCKET_AUTO_THREADS2_CPUS, 9);
  CHECK_EQ_INT(l.nThreads, 2); /* a cap above the layout changes nothing */
  CHECK_EQ_INT(l.nSocks, 2);
  /* ... and leaves explicit settings alone. */
  l = net_socket_layout_resolve(2, NET_SOCKET_LAYOUT_AUTO, 0, 2, 1);
  CHECK_EQ_INT(l.nThreads, 2);
  CHECK_EQ_INT(l.nSocks, 2);
}

int main(void) {
  test_chunks();
  test_layout();
  return 0;
}
