/* Adapter slots (see adapt_slot.h). */
#include "plugin/adapt_slot.h"

#include <pthread.h>

static pthread_mutex_t adapt_slot_lock = PTHREAD_MUTEX_INITIALIZER;

ncclResult_t adapt_slot_take(adapt_slot_t* slot, const void* plugin) {
  ncclResult_t res = ncclSuccess;
  pthread_mutex_lock(&adapt_slot_lock);
  if (slot->plugin && slot->plugin != plugin) {
    res = ncclInvalidUsage;
  } else {
    slot->plugin = plugin;
    slot->refs++;
  }
  pthread_mutex_unlock(&adapt_slot_lock);
  return res;
}

void adapt_slot_drop(adapt_slot_t* slot) {
  pthread_mutex_lock(&adapt_slot_lock);
  if (slot->refs > 0 && --slot->refs == 0) slot->plugin = NULL;
  pthread_mutex_unlock(&adapt_slot_lock);
}
