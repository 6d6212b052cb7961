/* mkccl-netcheck: the net plugin conformance kit's command line.
 * See tests/conformance/net/kit/netcheck.h. */
#include "netcheck.h"
#include "plugin/program.h"

/* Installed in bin/ beside lib/: the core finds the shipped plugins there. */
const int mkccl_program_beside_lib = 1;

int main(int argc, char** argv) { return netcheck_main(argc, argv); }
