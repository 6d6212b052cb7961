/* mkccl-netcheck: the net plugin conformance kit's command line.
 * See tests/conformance/net/kit/netcheck.h. */
#include "netcheck.h"

int main(int argc, char** argv) { return netcheck_main(argc, argv); }
