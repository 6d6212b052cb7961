#include "fifo/work_fifo.h"

#include <sched.h>
#include <string.h>

#include "base/err.h"

ncclResult_t work_fifo_init(work_fifo_t* fifo, void* buf, uint32_t bytes) {
  if (bytes < 256 || (bytes & (bytes - 1)) || bytes >= (1u << 31))
    return MK_FAIL(ncclInvalidArgument, "work FIFO size %u must be a power of two in [256, 2^31)", bytes);
  memset(fifo, 0, sizeof(*fifo));
  fifo->buf = buf;
  fifo->bytes = bytes;
  return ncclSuccess;
}

void work_fifo_poll(work_fifo_t* fifo) {
  while (fifo->eventsHead && fifo->eventsHead->query(fifo->eventsHead)) {
    work_fifo_event_t* ev = fifo->eventsHead;
    fifo->eventsHead = ev->next;
    if (!fifo->eventsHead) fifo->eventsTail = NULL;
    ev->next = NULL;
    ev->queued = 0;
    /* Events complete in order, so consumed only moves forward. */
    if ((int32_t)(ev->consumedAfter - fifo->consumed) > 0) fifo->consumed = ev->consumedAfter;
  }
}

ncclResult_t work_fifo_wait_room(work_fifo_t* fifo, uint32_t bytes, volatile uint32_t* abortFlag) {
  if (bytes > fifo->bytes)
    return MK_FAIL(ncclInvalidUsage, "work of %u bytes does not fit the %u-byte work FIFO (NCCL_WORK_FIFO_BYTES)",
                   bytes, fifo->bytes);
  work_fifo_poll(fifo);
  while (!work_fifo_has_room(fifo, bytes)) {
    if (abortFlag && __atomic_load_n(abortFlag, __ATOMIC_ACQUIRE))
      return MK_FAIL(ncclRemoteError, "aborted while waiting for work FIFO space");
    if (!fifo->eventsHead)
      return MK_FAIL(ncclInternalError, "work FIFO full with no event to return space");
    sched_yield();
    work_fifo_poll(fifo);
  }
  return ncclSuccess;
}

uint32_t work_fifo_push(work_fifo_t* fifo, const void* data, uint32_t bytes) {
  uint32_t start = fifo->produced, mask = fifo->bytes - 1;
  const char* src = data;
  for (uint32_t done = 0; done < bytes;) {
    uint32_t at = (start + done) & mask;
    uint32_t n = fifo->bytes - at < bytes - done ? fifo->bytes - at : bytes - done;
    memcpy(fifo->buf + at, src + done, n);
    done += n;
  }
  __atomic_store_n(&fifo->produced, start + bytes, __ATOMIC_RELEASE);
  return start;
}

void work_fifo_read(const work_fifo_t* fifo, uint32_t offset, void* out, uint32_t bytes) {
  uint32_t mask = fifo->bytes - 1;
  char* dst = out;
  for (uint32_t done = 0; done < bytes;) {
    uint32_t at = (offset + done) & mask;
    uint32_t n = fifo->bytes - at < bytes - done ? fifo->bytes - at : bytes - done;
    memcpy(dst + done, fifo->buf + at, n);
    done += n;
  }
}

void work_fifo_event_add(work_fifo_t* fifo, work_fifo_event_t* ev) {
  ev->next = NULL;
  ev->queued = 1;
  if (fifo->eventsTail) fifo->eventsTail->next = ev;
  else fifo->eventsHead = ev;
  fifo->eventsTail = ev;
}
