/* net-ib as a loaded plugin: its symbols and parameter table; with no HCA
 * (here: no RDMA devices at all) it loads and reports 0 devices, and calls
 * on a device that does not exist are refused; with NCCL_IB_DISABLE bound
 * through the services table it reports 0 devices whatever the host has.
 * Usage: test_net_ib_load [disabled] */
#include <dlfcn.h>
#include <infiniband/verbs.h>

#include "check.h"
#include "mkccl_plugin_v1.h"
#include "net/nccl_net.h"

static int fake_int(const char* name, int64_t* value) {
  if (strcmp(name, "NCCL_IB_DISABLE") == 0) return *value = 1, 0;
  return -1;
}
static int fake_str(const char* name, const char** value) {
  (void)name, (void)value;
  return -1;
}

int main(int argc, char** argv) {
  int disabled = argc > 1 && strcmp(argv[1], "disabled") == 0;
  void* dl = dlopen(NET_IB_PLUGIN_PATH, RTLD_NOW | RTLD_LOCAL);
  CHECK_MSG(dl != NULL, "%s", dlerror());
  const ncclNet_v12_t* v12 = dlsym(dl, "ncclNetPlugin_v12");
  const ncclNet_v11_t* v11 = dlsym(dl, "ncclNetPlugin_v11");
  const ncclNet_v10_t* v10 = dlsym(dl, "ncclNetPlugin_v10");
  const mkcclPluginInfo_v1_t* info = dlsym(dl, MKCCL_PLUGIN_INFO_SYMBOL);
  CHECK(v12 && v11 && v10 && info);
  CHECK(strcmp(v12->name, "IB") == 0 && strcmp(v11->name, "IB") == 0);
  CHECK_EQ_INT(info->size, sizeof(mkcclPluginInfo_v1_t));
  CHECK(strcmp(info->name, "net-ib") == 0 && info->bind != NULL);
  const char* wanted[] = {"NCCL_IB_HCA", "NCCL_IB_GID_INDEX", "NCCL_IB_TC", "NCCL_IB_SL", "NCCL_IB_TIMEOUT",
                          "NCCL_IB_RETRY_CNT", "NCCL_IB_QPS_PER_CONNECTION", "NCCL_IB_DISABLE"};
  for (size_t w = 0; w < sizeof(wanted) / sizeof(wanted[0]); w++) {
    int found = 0;
    for (int i = 0; i < info->nParams; i++) found |= strcmp(info->params[i].name, wanted[w]) == 0;
    CHECK_MSG(found, "parameter %s not declared", wanted[w]);
  }
  mkcclServices_v1 services = {sizeof(services), NULL, fake_int, fake_str};
  if (disabled) info->bind(&services);

  void* ctx = NULL;
  CHECK_EQ_INT(v12->init(&ctx, 1, NULL, NULL, NULL), ncclSuccess);
  int ndev = -1;
  CHECK_EQ_INT(v12->devices(&ndev), ncclSuccess);
  int hw = 0;
  struct ibv_device** list = ibv_get_device_list(&hw);
  if (list) ibv_free_device_list(list);
  if (disabled || hw == 0) {
    CHECK_EQ_INT(ndev, 0);
  } else {
    CHECK(ndev >= 0);
    printf("test_net_ib_load: %d RDMA device(s), %d usable port(s)\n", hw, ndev);
  }
  /* the device past the last is refused, whatever the count */
  ncclNetProperties_v12_t props;
  CHECK(v12->getProperties(ndev, &props) != ncclSuccess);
  char handle[NCCL_NET_HANDLE_MAXSIZE];
  void* lc = NULL;
  CHECK(v12->listen(ctx, ndev, handle, &lc) != ncclSuccess && lc == NULL);
  memset(handle, 0, sizeof(handle));
  void* sc = NULL;
  CHECK(v12->connect(ctx, ndev, handle, &sc, NULL) != ncclSuccess && sc == NULL);
  /* v11 agrees */
  void* ctx11 = NULL;
  int ndev11 = -1;
  CHECK_EQ_INT(v11->init(&ctx11, 2, NULL, NULL, NULL), ncclSuccess);
  CHECK_EQ_INT(v11->devices(&ndev11), ncclSuccess);
  CHECK_EQ_INT(ndev11, ndev);
  CHECK_EQ_INT(v11->finalize(ctx11), ncclSuccess);
  CHECK_EQ_INT(v12->finalize(ctx), ncclSuccess);
  printf("test_net_ib_load: ok (%d devices%s)\n", ndev, disabled ? ", NCCL_IB_DISABLE" : "");
  return 0;
}
