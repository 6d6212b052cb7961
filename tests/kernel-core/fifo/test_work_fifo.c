/* Work FIFO arithmetic: wrap-around of the ring and of the 32-bit counters,
 * back-pressure, and space returned by event callbacks in order. */
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "fifo/work_fifo.h"

typedef struct {
  work_fifo_event_t ev;
  int happened;
} test_event_t;

static int test_event_query(work_fifo_event_t* ev) { return ((test_event_t*)ev)->happened; }

int main(void) {
  static char buf[256];
  work_fifo_t f;
  CHECK_EQ_INT(work_fifo_init(&f, buf, 100), ncclInvalidArgument);
  CHECK_EQ_INT(work_fifo_init(&f, buf, 128), ncclInvalidArgument);
  CHECK_EQ_INT(work_fifo_init(&f, buf, 256), ncclSuccess);

  /* Counters near the 32-bit wrap: differences stay exact. */
  f.produced = f.consumed = 0xFFFFFFF0u;
  CHECK(work_fifo_has_room(&f, 256));
  CHECK(!work_fifo_has_room(&f, 257));

  char item[96], back[96];
  test_event_t evs[8];
  for (int i = 0; i < 8; i++) {
    memset(item, 'a' + i, sizeof(item));
    if (!work_fifo_has_room(&f, sizeof(item))) {
      /* Full: the oldest event has not happened, so polling returns nothing. */
      work_fifo_poll(&f);
      CHECK(!work_fifo_has_room(&f, sizeof(item)));
      evs[i - 2].happened = 1; /* the executor consumed item i-2 */
      CHECK_EQ_INT(work_fifo_wait_room(&f, sizeof(item), NULL), ncclSuccess);
    }
    uint32_t off = work_fifo_push(&f, item, sizeof(item));
    work_fifo_read(&f, off, back, sizeof(back));
    CHECK(memcmp(item, back, sizeof(item)) == 0); /* including items that wrapped the ring */
    evs[i].happened = 0;
    evs[i].ev.query = test_event_query;
    evs[i].ev.consumedAfter = off + sizeof(item);
    work_fifo_event_add(&f, &evs[i].ev);
    CHECK(work_fifo_used(&f) <= 256);
  }
  /* The counters wrapped past zero. */
  CHECK(f.produced < 0xFFFFFFF0u);

  /* Events complete in order: a later happened event does not jump ahead. */
  evs[7].happened = 1;
  uint32_t before = f.consumed;
  work_fifo_poll(&f);
  CHECK_EQ_INT(f.consumed, before);
  for (int i = 0; i < 8; i++) evs[i].happened = 1;
  work_fifo_poll(&f);
  CHECK_EQ_INT(work_fifo_used(&f), 0);

  /* More than the ring can ever hold is refused, not waited for. */
  CHECK_EQ_INT(work_fifo_wait_room(&f, 512, NULL), ncclInvalidUsage);
  /* Full with nothing that could return space: an error, not a hang. */
  static char big[256];
  work_fifo_push(&f, big, 256);
  CHECK_EQ_INT(work_fifo_wait_room(&f, 16, NULL), ncclInternalError);
  /* Aborted while waiting. */
  test_event_t never = {{0}, 0};
  never.ev.query = test_event_query;
  never.ev.consumedAfter = f.produced;
  work_fifo_event_add(&f, &never.ev);
  volatile uint32_t abortFlag = 1;
  CHECK_EQ_INT(work_fifo_wait_room(&f, 16, &abortFlag), ncclRemoteError);
  return 0;
}
