/* Connection FIFO and step arithmetic: slots, credits, publish/release
 * order, base rounding and slices; plus a two-thread stress that checks no
 * slot is reused before it is released and no data read before published. */
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "transport/mkccl_conn_fifo_v1.h"
#include "device/common/steps.h"

#define STRESS_STEPS 200000
static mkcclSendMem_v1 sendMem;
static mkcclRecvMem_v1 recvMem;
static uint64_t slots[MKCCL_STEPS];

static void* producer(void* arg) {
  (void)arg;
  for (uint64_t s = 0; s < STRESS_STEPS; s++) {
    while (!conn_fifo_can_produce(&sendMem.head, s)) {
    }
    slots[conn_fifo_slot(s)] = s * 7 + 1; /* data first */
    conn_fifo_publish(recvMem.connFifo, &recvMem.tail, s, 1, 8);
  }
  return NULL;
}

int main(void) {
  CHECK_EQ_INT(conn_fifo_slot(0), 0);
  CHECK_EQ_INT(conn_fifo_slot(13), 5);
  CHECK_EQ_INT(conn_fifo_slot(UINT64_MAX), (int)(UINT64_MAX % MKCCL_STEPS));

  mkcclConnFifo_v1 fifo[MKCCL_STEPS];
  conn_fifo_init(fifo);
  for (int i = 0; i < MKCCL_STEPS; i++) CHECK_EQ_INT(fifo[i].size, -1);
  /* A head or tail word is followed by its sleepers' count (conn_fifo_waiters). */
  volatile uint64_t head[2] = {0, 0}, tail[2] = {0, 0};
  /* All 8 slots free at start, the 9th waits for a release. */
  CHECK(conn_fifo_can_produce(head, 7));
  CHECK(!conn_fifo_can_produce(head, 8));
  conn_fifo_publish(fifo, tail, 0, 2, 1000);
  CHECK_EQ_INT(fifo[0].size, 1000);
  CHECK_EQ_INT(tail[0], 2);
  CHECK(conn_fifo_can_consume(tail, 1));
  CHECK(!conn_fifo_can_consume(tail, 2));
  conn_fifo_release(fifo, head, 0, 2);
  CHECK_EQ_INT(fifo[0].size, -1);
  CHECK_EQ_INT(head[0], 2);
  CHECK(conn_fifo_can_produce(head, 9));
  CHECK(!conn_fifo_can_produce(head, 10));

  /* Bases round up to chunkSteps; slices cover a chunk exactly. */
  CHECK_EQ_INT(steps_op_base(0, 4), 0);
  CHECK_EQ_INT(steps_op_base(5, 4), 8);
  CHECK_EQ_INT(steps_op_base(8, 4), 8);
  steps_shape_t shape = {4, 2, 1024};
  CHECK_EQ_INT(steps_slices_per_chunk(shape), 2);
  CHECK_EQ_INT(steps_slice_len(shape, 4096, 0), 2048); /* a full chunk: full slices */
  CHECK_EQ_INT(steps_slice_len(shape, 4096, 1), 2048);
  CHECK_EQ_INT(steps_slice_len(shape, 3000, 0), 1504); /* small chunk: shared by both slices */
  CHECK_EQ_INT(steps_slice_len(shape, 3000, 1), 1496);
  CHECK_EQ_INT(steps_slice_len(shape, 8, 0), 8);
  CHECK_EQ_INT(steps_slice_len(shape, 8, 1), 0);
  CHECK_EQ_INT(steps_slice_len(shape, 0, 0), 0);

  /* Stress: the consumer sees every step's data exactly as written. */
  conn_fifo_init(recvMem.connFifo);
  pthread_t t;
  pthread_create(&t, NULL, producer, NULL);
  for (uint64_t s = 0; s < STRESS_STEPS; s++) {
    while (!conn_fifo_can_consume(&recvMem.tail, s)) {
    }
    CHECK_EQ_INT(conn_fifo_size_load(recvMem.connFifo, conn_fifo_slot(s)), 8);
    CHECK_EQ_INT(slots[conn_fifo_slot(s)], s * 7 + 1);
    uint64_t outstanding = conn_fifo_load(&recvMem.tail) - conn_fifo_load(&sendMem.head); /* the producer writes tail */
    CHECK(outstanding <= MKCCL_STEPS);
    conn_fifo_release(recvMem.connFifo, &sendMem.head, s, 1);
  }
  pthread_join(t, NULL);
  return 0;
}
