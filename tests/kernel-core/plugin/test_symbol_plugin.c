/* A plugin that only exports a symbol: -DTEST_SYMBOL=<name> (a struct
 * starting with `const char* name` = TEST_NAME), and with -DTEST_INFO_NAME
 * an mkcclPluginInfo_v1 of that name. Used for the loader's skip reasons
 * (no known symbol, versions too old or too new) and for the kinds whose
 * adapters have not landed (raw symbol and version). */
#include <stddef.h>

#include "mkccl_plugin_v1.h"

#define TS_EXPORT __attribute__((visibility("default")))

#ifndef TEST_NAME
#define TEST_NAME "test-symbol"
#endif

typedef struct {
  const char* name;
  int marker;
} test_symbol_t;

TS_EXPORT const test_symbol_t TEST_SYMBOL = {TEST_NAME, 0x5eed};

#ifdef TEST_INFO_NAME
/* The symbol has the type's name: an asm label gives the variable that name. */
TS_EXPORT const mkcclPluginInfo_v1_t ts_info __asm__(MKCCL_PLUGIN_INFO_SYMBOL) = {
    sizeof(mkcclPluginInfo_v1_t), MKCCL_PLUGIN_ABI_VERSION, TEST_INFO_NAME, "0.1", NULL, 0, NULL};
#endif
