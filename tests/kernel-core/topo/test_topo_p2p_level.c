/* NCCL_P2P_LEVEL / NCCL_P2P_DISABLE: parsing, and what they allow on the
 * 2-socket machine (levels are read when a system is built). */
#include <stdlib.h>

#include "base/err.h"
#include "topo_fixture.h"

static void check_parse(void) {
  static const struct {
    const char* text;
    int level;
  } good[] = {
      {"LOC", TOPO_PATH_LOC}, {"NVL", TOPO_PATH_NVL}, {"NVB", TOPO_PATH_NVB}, {"C2C", TOPO_PATH_C2C},
      {"PIX", TOPO_PATH_PIX}, {"PXB", TOPO_PATH_PXB}, {"P2C", TOPO_PATH_P2C}, {"PXN", TOPO_PATH_PXN},
      {"PHB", TOPO_PATH_PHB}, {"SYS", TOPO_PATH_SYS}, {"PATH_SYS", TOPO_PATH_SYS}, {"PATH_PIX", TOPO_PATH_PIX},
      /* NCCL's old numbers: 0 LOC, 1 PIX, 2 PXB, 3 PHB, 4 and up SYS. */
      {"0", TOPO_PATH_LOC}, {"1", TOPO_PATH_PIX}, {"2", TOPO_PATH_PXB}, {"3", TOPO_PATH_PHB},
      {"4", TOPO_PATH_SYS}, {"5", TOPO_PATH_SYS}, {"42", TOPO_PATH_SYS},
  };
  for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
    int level = -1;
    CHECK_MSG(topo_p2p_level_parse(good[i].text, &level) == 0, "%s", good[i].text);
    CHECK_MSG(level == good[i].level, "%s -> %d, expected %d", good[i].text, level, good[i].level);
  }
  static const char* bad[] = {"", "NET", "DIS", "pix", "PATH_", "-1", "x3", "PIXX"};
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    int level = 77;
    CHECK_MSG(topo_p2p_level_parse(bad[i], &level) == -1, "'%s' accepted", bad[i]);
    CHECK_EQ_INT(level, 77);
  }
  CHECK(topo_p2p_level_parse(NULL, NULL) == -1);
  CHECK(strcmp(topo_path_name(TOPO_PATH_PXN), "PXN") == 0);
  CHECK(strcmp(topo_path_name(12), "?") == 0);
}

static topo_system_t* build(const char* level, int nvlinks) {
  static const topo_nvlink_input_t chain[2] = {{0, 1, 2, 0.0f}, {1, 2, 1, 0.0f}};
  if (level) setenv("NCCL_P2P_LEVEL", level, 1);
  else unsetenv("NCCL_P2P_LEVEL");
  topo_inputs_t in = two_socket_inputs();
  in.nvlinks = chain;
  in.nNvlinks = nvlinks ? 2 : 0;
  topo_system_t* sys = NULL;
  CHECK_NCCL(topo_system_build(&in, &sys));
  return sys;
}

/* Which of the pairs 0-1 (PIX), 2-3 (PHB), 0-2 (SYS) P2P may use. */
static void expect(const char* level, int pix, int phb, int sys_) {
  topo_system_t* sys = build(level, 0);
  int type = -1;
  CHECK_MSG(topo_p2p_allowed(sys, 0, 1, &type) == pix, "level %s, PIX pair", level ? level : "default");
  CHECK_EQ_INT(type, TOPO_PATH_PIX);
  CHECK_MSG(topo_p2p_allowed(sys, 2, 3, &type) == phb, "level %s, PHB pair", level ? level : "default");
  CHECK_EQ_INT(type, TOPO_PATH_PHB);
  CHECK_MSG(topo_p2p_allowed(sys, 0, 2, &type) == sys_, "level %s, SYS pair", level ? level : "default");
  CHECK_EQ_INT(type, TOPO_PATH_SYS);
  CHECK(topo_p2p_allowed(sys, 3, 3, &type)); /* a GPU with itself, always */
  CHECK_EQ_INT(type, TOPO_PATH_LOC);
  topo_system_free(sys);
}

int main(void) {
  unsetenv("NCCL_P2P_DISABLE");
  check_parse();

  expect(NULL, 1, 0, 0); /* Intel: default PXB */
  expect("PIX", 1, 0, 0);
  expect("PHB", 1, 1, 0);
  expect("3", 1, 1, 0);
  expect("SYS", 1, 1, 1);
  expect("PATH_SYS", 1, 1, 1);
  expect("4", 1, 1, 1);
  expect("LOC", 0, 0, 0);
  expect("0", 0, 0, 0);

  /* A bad value keeps the default, and says so. */
  topo_system_t* sys = build("FAST", 0);
  CHECK_EQ_INT(topo_p2p_level(sys), TOPO_PATH_PXB);
  CHECK_STR_CONTAINS(err_last_get(), "Invalid NCCL_P2P_LEVEL 'FAST'");
  topo_system_free(sys);

  /* NVLink levels: NVL allows direct NVLink only, NVB one GPU in between. */
  sys = build("NVL", 1);
  CHECK(topo_p2p_allowed(sys, 0, 1, NULL));
  CHECK(!topo_p2p_allowed(sys, 0, 2, NULL));
  CHECK(!topo_p2p_allowed(sys, 2, 3, NULL));
  topo_system_free(sys);
  sys = build("NVB", 1);
  CHECK(topo_p2p_allowed(sys, 0, 2, NULL));
  CHECK(!topo_p2p_allowed(sys, 0, 3, NULL));
  topo_system_free(sys);

  /* NCCL_P2P_DISABLE=1 wins over any level. */
  setenv("NCCL_P2P_DISABLE", "1", 1);
  sys = build("SYS", 1);
  CHECK_EQ_INT(topo_p2p_level(sys), TOPO_PATH_LOC);
  CHECK(!topo_p2p_allowed(sys, 0, 1, NULL));
  CHECK(topo_p2p_allowed(sys, 1, 1, NULL));
  topo_system_free(sys);
  return 0;
}
