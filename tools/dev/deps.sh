#!/usr/bin/env bash
# Installs what mkccl needs on Debian 12 (as root), only what is missing.
set -euo pipefail
pkgs=(cmake make gcc g++ pkg-config libyaml-dev libhwloc-dev libfabric-dev libibverbs-dev librdmacm-dev
      iproute2 python3 python3-pip openmpi-bin libopenmpi-dev
      clang libclang-rt-dev spin) # clang + libclang-rt-dev: libFuzzer targets; spin: the FIFO model
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "deps: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
