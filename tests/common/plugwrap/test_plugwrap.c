/* common/plugwrap: the wrapped plugin is found by path, and each way of
 * not finding it gives its own result and says why.
 *   test_plugwrap NET_PLUGIN_PATH OTHER_PLUGIN_PATH   (the second exports no net) */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "plugwrap/plugwrap.h"

static void expect_fail(const char* plugin, ncclResult_t want, const char* says) {
  const ncclNet_v11_t* net = (const ncclNet_v11_t*)&net; /* must stay as it is */
  const ncclNet_v11_t* before = net;
  char why[512] = "";
  ncclResult_t res = plugwrap_open_net_v11(plugin, &net, why, sizeof(why));
  CHECK_MSG(res == want, "%s: result %d, not %d (%s)", plugin ? plugin : "(null)", (int)res, (int)want, why);
  CHECK_MSG(net == before, "%s: the output was set on failure", plugin ? plugin : "(null)");
  CHECK_MSG(strstr(why, says), "%s: the reason '%s' does not say '%s'", plugin ? plugin : "(null)", why, says);
}

int main(int argc, char** argv) {
  CHECK_MSG(argc == 3, "usage: test_plugwrap NET_PLUGIN_PATH OTHER_PLUGIN_PATH");
  const ncclNet_v11_t* net = NULL;
  char why[512] = "";
  CHECK_MSG(plugwrap_open_net_v11(argv[1], &net, why, sizeof(why)) == ncclSuccess, "%s", why);
  CHECK(net && net->name && net->init && net->isend);
  printf("opened %s: net '%s'\n", argv[1], net->name);
  expect_fail(NULL, ncclInvalidUsage, "no plugin");
  expect_fail("", ncclInvalidUsage, "no plugin");
  expect_fail("libmkccl-no-such-plugin.so", ncclSystemError, "cannot open the wrapped plugin libmkccl-no-such-plugin.so");
  expect_fail("/nonexistent/libx.so", ncclSystemError, "/nonexistent/libx.so");
  expect_fail(argv[2], ncclInvalidUsage, "exports no ncclNetPlugin_v11");
  printf("plugwrap: found by path; no name, no file and no symbol each refused with its reason\n");
  return 0;
}
