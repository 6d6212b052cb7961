/* NCCL_IB_HCA parsing and matching: NCCL's syntax, case by case. */
#include "check.h"
#include "net_ib_hca.h"

static int takes(const char* list, const char* dev, int port) {
  net_ib_hca_list_t l;
  CHECK_MSG(net_ib_hca_parse(list, &l) == 0, "parse \"%s\"", list);
  return net_ib_hca_match(&l, dev, port);
}

int main(void) {
  net_ib_hca_list_t l;
  /* empty: everything */
  CHECK(takes("", "mlx5_0", 1));
  CHECK(takes(NULL, "mlx5_7", 2));
  /* prefix match by default */
  CHECK(takes("mlx5", "mlx5_0", 1));
  CHECK(takes("mlx5", "mlx5_13", 1));
  CHECK(!takes("mlx5", "bnxt_re0", 1));
  CHECK(takes("mlx5_1", "mlx5_13", 1)); /* NCCL's prefix rule: mlx5_1 takes mlx5_13 */
  /* '=' exact */
  CHECK(!takes("=mlx5_1", "mlx5_13", 1));
  CHECK(takes("=mlx5_1", "mlx5_1", 1));
  /* ports */
  CHECK(takes("mlx5_0:1,mlx5_1", "mlx5_0", 1));
  CHECK(!takes("mlx5_0:1,mlx5_1", "mlx5_0", 2));
  CHECK(takes("mlx5_0:1,mlx5_1", "mlx5_1", 2));
  CHECK(!takes("mlx5_0:1,mlx5_1", "mlx5_2", 1));
  /* '^' exclude, with ports and with exact */
  CHECK(!takes("^mlx5_0", "mlx5_0", 1));
  CHECK(takes("^mlx5_0", "mlx5_1", 1));
  CHECK(!takes("^mlx5_0:2", "mlx5_0", 2));
  CHECK(takes("^mlx5_0:2", "mlx5_0", 1));
  CHECK(takes("^=mlx5_1", "mlx5_13", 1));
  CHECK(!takes("^=mlx5_1", "mlx5_1", 1));
  /* the parsed form */
  CHECK_EQ_INT(net_ib_hca_parse("^=a:1,b,,c:12", &l), 0);
  CHECK(l.exclude && l.exact);
  CHECK_EQ_INT(l.n, 3);
  CHECK(strcmp(l.e[0].name, "a") == 0 && l.e[0].port == 1);
  CHECK(strcmp(l.e[1].name, "b") == 0 && l.e[1].port == -1);
  CHECK(strcmp(l.e[2].name, "c") == 0 && l.e[2].port == 12);
  /* malformed lists are refused, not half-read */
  CHECK_EQ_INT(net_ib_hca_parse("mlx5_0:x", &l), -1);
  CHECK_EQ_INT(net_ib_hca_parse("mlx5_0:", &l), -1);
  CHECK_EQ_INT(net_ib_hca_parse(":1", &l), -1);
  CHECK_EQ_INT(net_ib_hca_parse("mlx5_0:999", &l), -1);
  char many[IB_HCA_MAX * 4 + 8] = "";
  for (int i = 0; i <= IB_HCA_MAX; i++) strcat(many, "d,");
  CHECK_EQ_INT(net_ib_hca_parse(many, &l), -1);
  char longName[IB_HCA_NAME_MAX + 2];
  memset(longName, 'x', sizeof(longName) - 1);
  longName[sizeof(longName) - 1] = 0;
  CHECK_EQ_INT(net_ib_hca_parse(longName, &l), -1);
  printf("test_net_ib_hca: ok\n");
  return 0;
}
