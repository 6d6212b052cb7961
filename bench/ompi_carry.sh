#!/usr/bin/env bash
# Open MPI for a measuring machine without a package registry (Ubuntu 24.04,
# 16+ cores, where the host benchmarks get a core per rank), taken from
# Debian 12's packages:
#   bench/ompi_carry.sh fetch DIR        build machine: the .deb files into DIR (~5 MB):
#                                              Open MPI 4.1 and the libraries it needs
#                                              that the other machine may lack
#   bench/ompi_carry.sh unpack DIR ROOT  measuring machine: each .deb of DIR unpacked
#                                              into ROOT (dpkg -x, never into /)
#   eval "$(bench/ompi_carry.sh env ROOT)"
#                                              the environment that runs it from ROOT:
#                                              orterun on PATH, its libraries first, and
#                                              OPAL_PREFIX / OPAL_SYSCONFDIR (Open MPI
#                                              relocates its install directories to them)
set -euo pipefail
PKGS=(openmpi-bin openmpi-common libopenmpi3 libpmix2 libevent-core-2.1-7 libevent-pthreads-2.1-7 libucx0 libmunge2
      libpsm2-2 libpsm-infinipath1 libxnvctrl0 libhwloc15 libnuma1 libpciaccess0)
case ${1:-} in
  fetch)
    mkdir -p "$2"
    (cd "$2" && apt-get download "${PKGS[@]}" > /dev/null)
    ls "$2"/*.deb | wc -l | xargs echo "ompi_carry: .deb files in $2:" ;;
  unpack)
    mkdir -p "$3"
    for d in "$2"/*.deb; do dpkg -x "$d" "$3"; done
    [[ -x $3/usr/bin/orterun ]] || { echo "ompi_carry: no orterun in $3" >&2; exit 1; } ;;
  env)
    root=$(cd "$2" && pwd)
    echo "export PATH=$root/usr/bin:\$PATH"
    echo "export LD_LIBRARY_PATH=$root/usr/lib/x86_64-linux-gnu\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}"
    echo "export OPAL_PREFIX=$root/usr OPAL_SYSCONFDIR=$root/etc/openmpi" ;;
  *) sed -n '2,15p' "$0" >&2; exit 2 ;;
esac
