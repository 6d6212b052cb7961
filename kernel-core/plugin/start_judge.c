/* The judgement net-like plugins (net, collnet) share at start: a table
 * with the calls every caller needs, init's result, and devices(). Each
 * returns 0 to go on, or sets c's outcome and reason and returns -1. */
#include <stdio.h>

#include "plugin/loader.h"

int plugin_start_table(plugin_candidate_t* c, int complete) {
  if (complete) return 0;
  c->outcome = PLUGIN_INIT_FAILED;
  snprintf(c->reason, sizeof(c->reason), "its table has no init, devices or getProperties");
  return -1;
}

int plugin_start_init(plugin_candidate_t* c, ncclResult_t res) {
  if (res == ncclSuccess) return 0;
  c->outcome = PLUGIN_INIT_FAILED;
  snprintf(c->reason, sizeof(c->reason), "init returned %d (%s)", (int)res, ncclGetErrorString(res));
  return -1;
}

int plugin_start_devices(plugin_candidate_t* c, const plugin_lib_t* lib, ncclResult_t res, int ndev) {
  if (res != ncclSuccess) {
    c->outcome = PLUGIN_INIT_FAILED;
    snprintf(c->reason, sizeof(c->reason), "devices returned %d (%s)", (int)res, ncclGetErrorString(res));
    return -1;
  }
  if (ndev <= 0) {
    c->outcome = PLUGIN_NO_DEVICES;
    snprintf(c->reason, sizeof(c->reason), "devices() reports %d", ndev);
    return -1;
  }
  snprintf(c->reason, sizeof(c->reason), "%d device%s, %s", ndev, ndev == 1 ? "" : "s", lib->abiDesc->symbol);
  return 0;
}
