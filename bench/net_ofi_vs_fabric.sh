#!/bin/sh
# net_ofi_vs_fabric.sh BUILD_DIR [REPEATS] [PROVIDER]
# net-ofi and net-socket (both through mkccl-net-bench) against libfabric's
# own fi_pingpong, same provider, same host, runs interleaved size by size;
# prints the median of REPEATS runs of each. fi_pingpong comes from Debian's
# libfabric-bin.
build=${1:?usage: net_ofi_vs_fabric.sh BUILD_DIR [REPEATS] [PROVIDER]}
reps=${2:-5}
prov=${3:-tcp}
plugin=$build/lib/mkccl/libmkccl-net-ofi.so
socket=$build/lib/mkccl/libmkccl-net-socket.so
bench=$build/bin/mkccl-net-bench
command -v fi_pingpong >/dev/null || { echo "fi_pingpong not found (apt-get install libfabric-bin)"; exit 1; }
median() { sort -g | awk '{v[NR]=$1} END {print (NR % 2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }
port=47700
printf '%10s %6s | %14s %14s %16s | %14s %14s | %14s %14s %16s\n' bytes iters net-ofi_lat_us net-ofi_MB/s net-ofi_stream_MB/s \
  fi_pp_lat_us fi_pp_MB/s socket_lat_us socket_MB/s socket_stream_MB/s
for size in 8 1024 65536 1048576 4194304; do
  iters=1000; [ "$size" -gt 65536 ] && iters=100
  : > /tmp/nf_ofi.$$; : > /tmp/nf_fab.$$; : > /tmp/nf_sock.$$
  r=0
  while [ $r -lt "$reps" ]; do
    FI_PROVIDER=$prov timeout 120 "$bench" "$plugin" --min "$size" --max "$size" --iters "$iters" |
      awk -v s="$size" '$1 == s {print $3, $4, $5 * 1000}' >> /tmp/nf_ofi.$$
    timeout 120 "$bench" "$socket" --min "$size" --max "$size" --iters "$iters" |
      awk -v s="$size" '$1 == s {print $3, $4, $5 * 1000}' >> /tmp/nf_sock.$$
    port=$((port + 1))
    timeout 120 fi_pingpong -p "$prov" -e rdm -m tagged -I "$iters" -S "$size" -B $port >/dev/null 2>&1 &
    srv=$!
    for try in 1 2 3; do # the server may take a moment to listen
      sleep 0.5
      out=$(timeout 120 fi_pingpong -p "$prov" -e rdm -m tagged -I "$iters" -S "$size" -P $port 127.0.0.1 2>/dev/null |
            awk 'NR > 1 && NF >= 8 {print $7, $6}')
      [ -n "$out" ] && break
    done
    [ -n "$out" ] && echo "$out" >> /tmp/nf_fab.$$
    kill $srv 2>/dev/null
    wait $srv 2>/dev/null
    r=$((r + 1))
  done
  printf '%10s %6s | %14s %14s %16s | %14s %14s | %14s %14s %16s\n' "$size" "$iters" \
    "$(cut -d' ' -f1 /tmp/nf_ofi.$$ | median)" "$(cut -d' ' -f2 /tmp/nf_ofi.$$ | median)" \
    "$(cut -d' ' -f3 /tmp/nf_ofi.$$ | median)" "$(cut -d' ' -f1 /tmp/nf_fab.$$ | median)" \
    "$(cut -d' ' -f2 /tmp/nf_fab.$$ | median)" "$(cut -d' ' -f1 /tmp/nf_sock.$$ | median)" \
    "$(cut -d' ' -f2 /tmp/nf_sock.$$ | median)" "$(cut -d' ' -f3 /tmp/nf_sock.$$ | median)"
done
rm -f /tmp/nf_ofi.$$ /tmp/nf_fab.$$ /tmp/nf_sock.$$
