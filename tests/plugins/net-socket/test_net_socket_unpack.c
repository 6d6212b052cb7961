/* net-socket's unpack mode (MKCCL_SOCKET_UNPACK=1) as a producer of UNPACK
 * receives, through its v12 table with a device handle as the core makes
 * one: properties, accept filling the handle, receives landing as permuted
 * 4 KiB pages at skewed offsets of the bounce buffer with the posted buffer
 * left untouched, page metadata that reassembles every message exactly,
 * slots held until irecvConsumed (the queue of 16 fills up, then frees),
 * refused requests, and ordinary receives when accept gets no handle. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "net-device/mkccl_unpack_v7.h"
#include "net/nccl_net.h"
#include "ns_harness.h"

static const ncclNet_v12_t* net;
static void* ctx;

static void pair(void** sc, void** rc, ncclNetDeviceHandle_v12_t* dev) {
  char handle[NCCL_NET_HANDLE_MAXSIZE];
  void* lc = NULL;
  CHECK_EQ_INT(net->listen(ctx, 0, handle, &lc), ncclSuccess);
  *sc = *rc = NULL;
  ncclNetDeviceHandle_v12_t* sendDev = NULL;
  while (!*sc || !*rc) {
    if (!*sc) CHECK_EQ_INT(net->connect(ctx, 0, handle, sc, &sendDev), ncclSuccess);
    ncclNetDeviceHandle_v12_t* d = dev;
    if (!*rc) CHECK_EQ_INT(net->accept(lc, rc, &d), ncclSuccess);
  }
  CHECK_EQ_INT(net->closeListen(lc), ncclSuccess);
}

static void wait_req(void* req, int* size) {
  int done = 0;
  while (!done) CHECK_EQ_INT(net->test(req, &done, size), ncclSuccess);
}

/* One message of `bytes` through the unpack queue: returns its request. */
static void* one(void* sc, void* rc, ncclNetDeviceHandle_v12_t* dev, size_t bytes, uint32_t seed, uint64_t seq) {
  mkcclUnpackHandle_v7* h = dev->handle;
  char* msg = malloc(bytes + 1);
  char* posted = malloc(bytes + 1);
  CHECK(msg && posted);
  ns_fill(msg, bytes, seed);
  memset(posted, 0xEE, bytes + 1);
  void *sreq = NULL, *rreq = NULL;
  void* data = posted;
  size_t size = bytes;
  int tag = 3;
  CHECK_EQ_INT(net->irecv(rc, 1, &data, &size, &tag, NULL, NULL, &rreq), ncclSuccess);
  CHECK(rreq != NULL);
  while (!sreq) CHECK_EQ_INT(net->isend(sc, msg, bytes, tag, NULL, NULL, &sreq), ncclSuccess);
  int got = -1;
  wait_req(rreq, &got);
  wait_req(sreq, NULL);
  CHECK_EQ_INT(got, bytes);
  /* Only the consumer's unpack may fill the posted buffer. */
  for (size_t i = 0; i <= bytes; i++) CHECK_MSG((unsigned char)posted[i] == 0xEE, "posted buffer written at %zu", i);
  uint64_t slot = seq % MKCCL_UNPACK_QUEUE_DEPTH;
  uint64_t cnt = __atomic_load_n(&h->meta->cnt[slot], __ATOMIC_ACQUIRE);
  CHECK_EQ_INT(cnt, (bytes + 4095) / 4096);
  int ordered = 1;
  for (uint64_t i = 0; i < cnt; i++) {
    const mkcclUnpackLoadMeta_v7* m = &h->meta->mem[slot][i];
    CHECK_EQ_INT(m->dst_off, i * 4096);
    CHECK_EQ_INT(m->len, i + 1 < cnt ? 4096 : bytes - i * 4096);
    CHECK_EQ_INT(m->src_off % 16, seq % 16); /* the skew: every alignment class over 16 receives */
    if (i && m->src_off < h->meta->mem[slot][i - 1].src_off) ordered = 0;
    memcpy(posted + m->dst_off, (char*)h->bounce_buf + m->src_off, m->len);
  }
  CHECK_MSG(cnt < 2 || !ordered, "pages of receive %llu are in order", (unsigned long long)seq);
  CHECK_EQ_INT(ns_verify(posted, bytes, seed), -1);
  free(msg);
  free(posted);
  return rreq;
}

static void test_queue(void) {
  ncclNetDeviceHandle_v12_t dev = {NCCL_NET_DEVICE_UNPACK, NCCL_NET_DEVICE_UNPACK_VERSION, NULL, 0, 0};
  void *sc, *rc;
  pair(&sc, &rc, &dev);
  CHECK(dev.handle != NULL);
  CHECK_EQ_INT(dev.size, sizeof(mkcclUnpackHandle_v7));
  CHECK_EQ_INT(dev.needsProxyProgress, 1);
  const size_t sizes[] = {0, 1, 4095, 4096, 4097, 3 * 4096 + 17, 100000, 1 << 20};
  void* held[MKCCL_UNPACK_QUEUE_DEPTH];
  uint64_t seq = 0;
  /* Three rounds around the queue: each fills all 16 slots first. */
  for (int round = 0; round < 3; round++) {
    for (int k = 0; k < MKCCL_UNPACK_QUEUE_DEPTH; k++, seq++)
      held[k] = one(sc, rc, &dev, sizes[seq % 8], (uint32_t)seq + 1, seq);
    /* Every slot awaits irecvConsumed: no receive can be posted. */
    char buf[16];
    void* data = buf;
    size_t size = sizeof(buf);
    int tag = 3;
    void* req = (void*)1;
    CHECK_EQ_INT(net->irecv(rc, 1, &data, &size, &tag, NULL, NULL, &req), ncclSuccess);
    CHECK(req == NULL);
    for (int k = 0; k < MKCCL_UNPACK_QUEUE_DEPTH; k++) {
      CHECK_EQ_INT(net->irecvConsumed(rc, 1, held[k]), ncclSuccess);
      CHECK_EQ_INT(((mkcclUnpackHandle_v7*)dev.handle)->meta->cnt[k], 0);
    }
    CHECK_EQ_INT(net->irecvConsumed(rc, 1, held[0]), ncclInvalidArgument); /* already released */
  }
  /* One buffer per receive, at most 4 MiB. */
  char* big = malloc((4u << 20) + 1);
  void* two[2] = {big, big + 8};
  size_t twoSizes[2] = {8, 8}, bigSize = (4u << 20) + 1;
  int tags[2] = {3, 3};
  void* req = NULL;
  CHECK_EQ_INT(net->irecv(rc, 2, two, twoSizes, tags, NULL, NULL, &req), ncclInvalidUsage);
  CHECK_EQ_INT(net->irecv(rc, 1, two, &bigSize, tags, NULL, NULL, &req), ncclInvalidUsage);
  free(big);
  CHECK_EQ_INT(net->closeSend(sc), ncclSuccess);
  CHECK_EQ_INT(net->closeRecv(rc), ncclSuccess);
}

/* No handle from the core (UNPACK refused): ordinary receives. */
static void test_no_handle(void) {
  void *sc, *rc;
  pair(&sc, &rc, NULL);
  char out[10000], in[10000];
  ns_fill(out, sizeof(out), 77);
  void *sreq = NULL, *rreq = NULL, *data = in;
  size_t size = sizeof(in);
  int tag = 1, got = 0;
  CHECK_EQ_INT(net->irecv(rc, 1, &data, &size, &tag, NULL, NULL, &rreq), ncclSuccess);
  while (!sreq) CHECK_EQ_INT(net->isend(sc, out, sizeof(out), tag, NULL, NULL, &sreq), ncclSuccess);
  wait_req(rreq, &got);
  wait_req(sreq, NULL);
  CHECK_EQ_INT(got, sizeof(out));
  CHECK_EQ_INT(ns_verify(in, sizeof(in), 77), -1);
  /* A HOST comm: a no-op that succeeds, since NCCL 2.28 calls irecvConsumed
   * after every receive of a plugin that has it (seen on NCCL 2.28.9). */
  CHECK_EQ_INT(net->irecvConsumed(rc, 1, rreq), ncclSuccess);
  CHECK_EQ_INT(net->closeSend(sc), ncclSuccess);
  CHECK_EQ_INT(net->closeRecv(rc), ncclSuccess);
}

int main(void) {
  ns_watchdog(120);
  setenv("MKCCL_SOCKET_UNPACK", "1", 1); /* standalone: the plugin reads its parameters from the environment */
  void* lib = dlopen(NS_PLUGIN_PATH, RTLD_NOW | RTLD_LOCAL);
  CHECK_MSG(lib, "%s", dlerror());
  net = dlsym(lib, "ncclNetPlugin_v12");
  CHECK(net && net->irecvConsumed);
  CHECK_EQ_INT(net->init(&ctx, 1, NULL, ns_logger, NULL), ncclSuccess);
  ncclNetProperties_v12_t p;
  CHECK_EQ_INT(net->getProperties(0, &p), ncclSuccess);
  CHECK_EQ_INT(p.netDeviceType, NCCL_NET_DEVICE_UNPACK);
  CHECK_EQ_INT(p.netDeviceVersion, MKCCL_UNPACK_VERSION);
  CHECK_EQ_INT(p.maxRecvs, 1);
  test_queue();
  test_no_handle();
  CHECK_EQ_INT(net->finalize(ctx), ncclSuccess);
  return 0;
}
