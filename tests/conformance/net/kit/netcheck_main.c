/* mkccl-netcheck PLUGIN.so [--abi N] [--dev D] [--quick] [--timeout S] [--only NAME]
 * Loads the plugin, checks its devices, runs every scenario in two real
 * processes, prints one PASS/FAIL/WARN/SKIP line per check and the totals.
 * Exit 0: conformant (warnings allowed); 1: a check failed; 77: nothing was
 * tested (the plugin has no devices); 2: bad usage. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "netcheck.h"

const netcheck_scenario_t netcheck_scenarios[] = {
    {"connect", netcheck_connect_a, netcheck_connect_b, 0, "listen/connect/accept, regMr/deregMr, close"},
    {"sizes", netcheck_sizes_a, netcheck_sizes_b, 0, "0, 1, odd, 4 KB +-1 ... 64 MB, data verified"},
    {"larger-recv", netcheck_larger_a, netcheck_larger_b, 0, "receive larger than the message: size reported"},
    {"inflight", netcheck_inflight_a, netcheck_inflight_b, 0, "NCCL_NET_MAX_REQUESTS in flight, in order"},
    {"tags", netcheck_tags_a, netcheck_tags_b, 0, "single receives with varied tags"},
    {"multirecv", netcheck_multirecv_a, netcheck_multirecv_b, 0, "grouped receives matched by tag"},
    {"many-to-one", netcheck_order_a, netcheck_order_b, 0, "3 connections into one receiver, mixed sizes in flight"},
    {"close-listen", netcheck_close_listen_a, NULL, 0, "listen only, then close"},
    {"close-unaccepted", netcheck_close_unaccepted_a, netcheck_close_unaccepted_b, 0, "connect, never accepted, close"},
    {"close-after-send", netcheck_close_after_send_a, netcheck_close_after_send_b, 0,
     "sender closes and exits after its sends complete; receives posted later get every message"},
    {"close-inflight", netcheck_close_inflight_a, netcheck_close_inflight_b, 0, "closeRecv with receives in flight"},
    {"peer-killed-recv", netcheck_killed_recv_a, netcheck_killed_recv_b, 1, "sender killed: receive fails"},
    {"peer-killed-send", netcheck_killed_send_a, netcheck_killed_send_b, 1, "receiver killed: sends fail"},
    {"bad-args", netcheck_badargs_a, netcheck_badargs_b, 0, "out-of-range devices, too many receives, bad type"},
    {"gpu-memory", netcheck_gpu_a, netcheck_gpu_b, 0,
     "NCCL_PTR_CUDA claimed: regMr of GPU memory, isend from it, irecv into it, iflush (skipped without a GPU)"},
};
const int netcheck_nscenarios = (int)(sizeof(netcheck_scenarios) / sizeof(netcheck_scenarios[0]));

static void netcheck_usage(void) {
  fprintf(stderr,
          "usage: mkccl-netcheck PLUGIN.so [--abi N] [--dev D] [--quick] [--timeout SEC] [--only SCENARIO] [--verbose] [--list]\n");
}

int netcheck_main(int argc, char** argv) {
  for (int i = 1; i < argc; i++)
    if (!strcmp(argv[i], "--role")) return netcheck_role_main(argc, argv);
  netcheck_opts_t o = {NULL, 0, 0, 0, 60, NULL};
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--abi") && i + 1 < argc) o.abi = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--dev") && i + 1 < argc) o.dev = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--timeout") && i + 1 < argc) o.timeoutSec = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--only") && i + 1 < argc) o.only = argv[++i];
    else if (!strcmp(argv[i], "--quick")) o.quick = 1;
    else if (!strcmp(argv[i], "--verbose")) netcheck_verbose = 1;
    else if (!strcmp(argv[i], "--list")) {
      for (int s = 0; s < netcheck_nscenarios; s++) printf("%-18s %s\n", netcheck_scenarios[s].name, netcheck_scenarios[s].what);
      return 0;
    } else if (argv[i][0] == '-') {
      netcheck_usage();
      return 2;
    } else {
      o.path = argv[i];
    }
  }
  if (!o.path || o.timeoutSec < 5 || (o.abi && (o.abi < 6 || o.abi > 12))) {
    netcheck_usage();
    return 2;
  }
  int known = !o.only;
  for (int s = 0; s < netcheck_nscenarios && !known; s++) known = strcmp(o.only, netcheck_scenarios[s].name) == 0;
  if (!known) {
    fprintf(stderr, "mkccl-netcheck: no scenario named %s (--list)\n", o.only);
    return 2;
  }
  char self[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
  if (n <= 0) {
    fprintf(stderr, "mkccl-netcheck: cannot find its own executable\n");
    return 2;
  }
  self[n] = 0;
  char path[PATH_MAX];
  if (!realpath(o.path, path)) snprintf(path, sizeof(path), "%s", o.path); /* a soname: dlopen searches */
  o.path = path;

  netcheck_plugin_t p;
  char why[700], detail[1024];
  const char* nothing = NULL; /* why nothing was tested */
  int loaded = netcheck_load(o.path, o.abi, &p, why, sizeof(why));
  if (loaded < 0) {
    netcheck_line("FAIL", "load", why);
  } else if (loaded > 0) { /* loads, no devices: the loader moved on, as it should */
    snprintf(detail, sizeof(detail), "%s: %s", o.path, why);
    netcheck_line("PASS", "load", detail);
    netcheck_line("SKIP", "devices", "0 device(s): no property to check, nothing to connect");
    nothing = "the plugin reports no devices";
  } else {
    snprintf(detail, sizeof(detail), "%s: ncclNetPlugin_v%d \"%s\" through the core's loader%s", o.path, p.abi, p.name,
             p.abi < 12 ? " and its v12 adapter" : "");
    netcheck_line(p.name[0] ? "PASS" : "FAIL", "load", p.name[0] ? detail : "the plugin has no name");
    if (o.abi && p.abi != o.abi) {
      snprintf(detail, sizeof(detail), "--abi %d asked, the loader took v%d", o.abi, p.abi);
      netcheck_line("FAIL", "load-abi", detail);
    }
    int ndev = 0;
    netcheck_props_check(&p, &ndev);
    netcheck_unload(&p);
    /* Whatever the properties said, the scenarios run: they show what the
     * plugin does, which a property the kit dislikes may not spoil. */
    if (ndev == 0) {
      nothing = "devices() reports 0";
    } else if (ndev > 0 && (o.dev < 0 || o.dev >= ndev)) {
      snprintf(detail, sizeof(detail), "--dev %d but the plugin has %d device(s)", o.dev, ndev);
      netcheck_line("FAIL", "pairs", detail);
    } else if (ndev > 0) {
      netcheck_counts_t before = netcheck_counts();
      for (int s = 0; s < netcheck_nscenarios; s++) {
        if (o.only && strcmp(o.only, netcheck_scenarios[s].name) != 0) continue;
        netcheck_referee_run(&o, &netcheck_scenarios[s], self);
      }
      /* --only a scenario that skipped every check (gpu-memory on a host
       * without a GPU): nothing was tested. */
      netcheck_counts_t after = netcheck_counts();
      if (o.only && after.pass == before.pass && after.fail == before.fail && after.skip > before.skip)
        nothing = "every check of the scenario was skipped (the SKIP lines say why)";
    }
  }
  netcheck_counts_t c = netcheck_counts();
  printf("mkccl-netcheck: %d passed, %d failed, %d warning(s), %d skipped\n", c.pass, c.fail, c.warn, c.skip);
  if (c.fail) {
    printf("mkccl-netcheck: %s: FAILED\n", o.path);
    return 1;
  }
  if (nothing) { /* not conformant either: a skip (exit 77), the reason on stderr */
    fprintf(stderr, "mkccl-netcheck: %s: nothing tested: %s\n", o.path, nothing);
    return 77;
  }
  printf("mkccl-netcheck: %s: conformant\n", o.path); /* warnings or not: NCCL takes what they name */
  return 0;
}
