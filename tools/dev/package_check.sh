#!/usr/bin/env bash
# The install as users and plugin vendors meet it, checked from outside the
# tree: a prefix moved after `cmake --install` (run paths relative to
# themselves), its tools, pkg-config and CMake consumers by mkccl's names and
# NCCL's, the plugin templates built against it, the Debian package
# installed (as root with apt-get; else unpacked), and the Python wheel
# installed with pip from the file alone.
#   tools/dev/package_check.sh [BUILD_DIR]   (default build; built already)
set -euo pipefail
cd "$(dirname "$0")/../.."
SRC=$PWD
B=$(cd "${1:-build}" && pwd)
T=$(mktemp -d /tmp/mkccl-package.XXXXXX)
trap 'rm -rf "$T"' EXIT
unset LD_LIBRARY_PATH LD_PRELOAD
step() { echo "package: $*"; }
fail() {
  echo "package: FAILED: $*" >&2
  exit 1
}
VERSION=$(sed -n 's/^project(mkccl VERSION \([0-9.]*\).*/\1/p' CMakeLists.txt)
ranks_ok() { # LOG N: every rank of N said its sum was right
  local n=$2 r
  for ((r = 0; r < n; r++)); do grep -q "^rank $r of $n: sum correct$" "$1" || return 1; done
}

step "install, then move the prefix"
cmake --install "$B" --prefix "$T/installed" >"$T/install.log"
mv "$T/installed" "$T/p"
P=$T/p
"$P/bin/mkccl-info" >"$T/info.txt" 2>&1 || fail "mkccl-info from the moved prefix: $(tail -3 "$T/info.txt")"
grep -q "default  *$P/bin/../lib/mkccl/manifest.yaml" "$T/info.txt" || fail "mkccl-info did not read the moved prefix's manifest"
grep -q "taken 'Socket'" "$T/info.txt" || fail "mkccl-info: net-socket not taken from the prefix"
for f in "$P"/lib/mkccl/*test* "$P"/lib/mkccl/*faulty* "$P"/lib/mkccl/*broken* "$P"/lib/mkccl/*netcheck*; do
  [[ -e $f ]] && fail "a test-only plugin installed among the plugins: $f"
done
"$P/bin/mkccl-run" -n 2 -- "$P/bin/mkccl-perf" all_reduce -b 8 -e 1M -f 32 -n 3 -w 1 -c 1 >"$T/perf.txt" 2>&1 ||
  fail "mkccl-perf from the prefix: $(tail -3 "$T/perf.txt")"
grep -q "Out of bounds values : 0 OK" "$T/perf.txt" || fail "mkccl-perf from the prefix reported wrong values"
for abi in 12 9; do
  "$P/bin/mkccl-netcheck" --quick --abi $abi "$P/lib/mkccl/libmkccl-net-socket.so" >"$T/netcheck.txt" 2>&1 ||
    fail "mkccl-netcheck --abi $abi from the prefix: $(tail -3 "$T/netcheck.txt")"
  grep -q ": conformant$" "$T/netcheck.txt" || fail "mkccl-netcheck --abi $abi: not conformant"
done

step "consumers: pkg-config (mkccl, nccl) and find_package(mkccl)"
export PKG_CONFIG_PATH=$P/lib/pkgconfig
for pc in mkccl nccl; do
  # shellcheck disable=SC2046
  cc -o "$T/ex-$pc" "$SRC/examples/host_allreduce.c" $(pkg-config --cflags --libs $pc) \
    -Wl,-rpath,"$(pkg-config --variable=libdir $pc)" || fail "building against pkg-config $pc"
  "$P/bin/mkccl-run" -n 3 -- "$T/ex-$pc" >"$T/ex-$pc.log" 2>&1 || fail "example built with pkg-config $pc: $(tail -3 "$T/ex-$pc.log")"
  ranks_ok "$T/ex-$pc.log" 3 || fail "example built with pkg-config $pc: a rank's sum was wrong"
done
[[ -e $P/include/nccl.h && -e $P/lib/libnccl.so ]] || fail "no nccl.h or libnccl.so where FindNCCL modules look"
grep -q "^#define NCCL_MAJOR 2" "$P/include/nccl.h" || fail "nccl.h has no NCCL_MAJOR (FindNCCL reads the version there)"
mkdir -p "$T/consumer"
cp "$SRC/examples/host_allreduce.c" "$T/consumer/"
cat >"$T/consumer/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.16)
project(consumer C)
find_package(mkccl REQUIRED)
add_executable(by_nccl host_allreduce.c)
target_link_libraries(by_nccl PRIVATE mkccl::nccl)
add_executable(by_mkccl host_allreduce.c)
target_link_libraries(by_mkccl PRIVATE mkccl::mkccl)
add_library(abi_only MODULE abi_only.c)
target_link_libraries(abi_only PRIVATE mkccl::plugin-abi)
CM
printf '#include "net/nccl_net.h"\n#include "tuner/nccl_tuner.h"\n#include "profiler/nccl_profiler.h"\nint abi_only_size(void) { return (int)sizeof(ncclNet_v12_t); }\n' >"$T/consumer/abi_only.c"
cmake -S "$T/consumer" -B "$T/consumer/build" -DCMAKE_PREFIX_PATH="$P" >"$T/consumer.log" 2>&1 &&
  cmake --build "$T/consumer/build" >>"$T/consumer.log" 2>&1 || fail "find_package(mkccl) consumer: $(tail -5 "$T/consumer.log")"
for exe in by_nccl by_mkccl; do
  LD_LIBRARY_PATH=$P/lib "$P/bin/mkccl-run" -n 2 -- "$T/consumer/build/$exe" >"$T/$exe.log" 2>&1 || fail "$exe: $(tail -3 "$T/$exe.log")"
  ranks_ok "$T/$exe.log" 2 || fail "$exe: a rank's sum was wrong"
done

if [[ -x tools/dev/plugin_templates.sh ]]; then
  step "plugin templates, out of tree"
  tools/dev/plugin_templates.sh "$P" || fail "plugin templates"
fi

step "Debian package"
(cd "$B" && cpack -G DEB -B "$T/deb" >"$T/cpack.log" 2>&1) || fail "cpack: $(tail -5 "$T/cpack.log")"
DEB=$(ls "$T"/deb/mkccl_*.deb)
installed() { dpkg-query -W -f='${Status}' mkccl 2>/dev/null | grep -q "install ok installed"; }
# Installed for real only where nothing of another mkccl is (a user's own stays untouched).
if [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null && ! installed; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$DEB" >"$T/apt.log" 2>&1 || fail "apt-get install $DEB: $(tail -5 "$T/apt.log")"
  (cd / && mkccl-info >"$T/deb-info.txt" 2>&1) || { dpkg -P mkccl >/dev/null; fail "mkccl-info from the package: $(tail -3 "$T/deb-info.txt")"; }
  grep -q "taken 'Socket'" "$T/deb-info.txt" || { dpkg -P mkccl >/dev/null; fail "packaged mkccl-info found no net-socket"; }
  dpkg -P mkccl >/dev/null || fail "dpkg -P mkccl"
else
  dpkg-deb -x "$DEB" "$T/deb/root"
  "$T/deb/root/usr/bin/mkccl-info" >"$T/deb-info.txt" 2>&1 || fail "mkccl-info from the unpacked package"
  grep -q "taken 'Socket'" "$T/deb-info.txt" || fail "unpacked package: mkccl-info found no net-socket"
  echo "package: (not root or no apt-get: the package was unpacked, not installed)"
fi
dpkg-deb -f "$DEB" Depends | grep -q libyaml || fail "the package declares no dependency on libyaml"

step "Python wheel"
python3 packaging/python/build_wheel.py --prefix "$P" --version "$VERSION" --out "$T/dist" >"$T/wheel.log" 2>&1 ||
  fail "build_wheel.py: $(tail -3 "$T/wheel.log")"
python3 -m pip install -q --no-index --no-deps --target "$T/py" "$T"/dist/mkccl-*.whl >"$T/pip.log" 2>&1 ||
  fail "pip install of the wheel: $(tail -3 "$T/pip.log")"
export PYTHONPATH=$T/py
python3 -c 'import mkccl; v = mkccl.version(); assert v == 22809, v' || fail "import mkccl; mkccl.version()"
"$T/py/bin/mkccl-info" >"$T/py-info.txt" 2>&1 || fail "the wheel's mkccl-info: $(tail -3 "$T/py-info.txt")"
grep -q "taken 'Socket'" "$T/py-info.txt" || fail "the wheel's mkccl-info found no net-socket"
# A program that loads libnccl.so.2 by name gets the wheel's (what torch does through its run path).
"$T/py/bin/mkccl-exec" python3 -c '
import ctypes, sys
ctypes.CDLL("libnccl.so.2")
maps = open("/proc/self/maps").read()
sys.exit(0 if "/mkccl/lib/libnccl.so.2" in maps else 1)' || fail "mkccl-exec: the process did not get the wheel's libnccl.so.2"
python3 -c '
import mkccl, ctypes
mkccl.preload()
ctypes.CDLL("libnccl.so.2")
maps = open("/proc/self/maps").read()
assert "/mkccl/lib/libnccl.so.2" in maps and maps.count("libnccl.so.2") == maps.count("/mkccl/lib/libnccl.so.2")' ||
  fail "mkccl.preload(): a later load of libnccl.so.2 by name did not get the wheel's"
step "all passed"
