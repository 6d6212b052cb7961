#!/usr/bin/env python3
"""Per-hop times of a host ring collective over a proxied transport, from
the traces of mkccl's profiler plugin (NCCL_PROFILER_PLUGIN=.../libmkccl-
profiler.so MKCCL_PROFILER_DIR=DIR, one JSON per rank). Each send step of
rank r to peer p on channel c is matched with the receive step of the same
number on p from r (same operation, by order). Prints medians (and p10, p90)
of: isend posted -> send done; isend posted -> receive done at the peer;
receive done -> the receiver released the slot; receive posted ahead of the
isend; receive done -> the receiver's send of step k+2 or k+4 posted (its
next hop of that slice, by the ring's step offset). Benchmarks print; this
asserts nothing.
    bench/proxy_hops.py DIR [operations to skip, default 10]"""
import collections
import glob
import json
import statistics
import sys


def load(d):
    """(rank, isSend, channel, peer) -> [op: {'steps': {step: {'states': {name: ts}, 'end': ts}}}]"""
    ops = {}
    for f in sorted(glob.glob(d + '/*-r*.json')):
        ev = json.load(open(f))
        ev = ev['traceEvents'] if isinstance(ev, dict) else ev
        rank = int(f.rsplit('-r', 1)[1].split('.')[0])
        xs = sorted((e for e in ev if e.get('ph') == 'X'), key=lambda e: (e['ts'], -e.get('dur', 0)))
        opByLane, stepByLane = {}, {}
        for e in xs:
            cat = e.get('cat')
            if cat == 'proxyop':
                a = e['args']
                rec = {'steps': {}}
                ops.setdefault((rank, e['name'].startswith('send'), a['channel'], a['peer']), []).append(rec)
                opByLane[e['tid']] = rec
            elif cat == 'proxystep':
                # a step's lane follows its connection's lane (1 to 8 after it)
                op = next((opByLane[t] for t in range(e['tid'] - 1, e['tid'] - 10, -1) if t in opByLane), None)
                if op is None:
                    continue
                st = {'states': {}, 'end': e['ts'] + e['dur']}
                op['steps'][int(e['name'].split()[1])] = st
                stepByLane[e['tid']] = st
            elif cat == 'state' and e['tid'] in stepByLane:
                stepByLane[e['tid']]['states'][e['name']] = e['ts']
    return ops


def show(name, v):
    if not v:
        return
    v.sort()
    print('%-46s n=%6d  p10 %7.1f  median %7.1f  p90 %7.1f us' %
          (name, len(v), v[len(v) // 10], statistics.median(v), v[len(v) * 9 // 10]))


def main():
    d = sys.argv[1]
    skip = int(sys.argv[2]) if len(sys.argv) > 2 else 10
    ops = load(d)
    hop = collections.defaultdict(list)
    for (rank, isSend, ch, peer), sends in ops.items():
        recvs = ops.get((peer, False, ch, rank)) if isSend else None
        for i, (so, ro) in enumerate(zip(sends, recvs or [])):
            if i < skip:
                continue
            for k, s in so['steps'].items():
                r = ro['steps'].get(k)
                if not r or 'SendWait' not in s['states'] or 'RecvGPUWait' not in r['states']:
                    continue
                posted, got = s['states']['SendWait'], r['states']['RecvGPUWait']
                hop['isend posted -> send done'].append(s['end'] - posted)
                hop['isend posted -> receive done at the peer'].append(got - posted)
                hop['receive done -> slot released by the executor'].append(r['end'] - got)
                if 'RecvWait' in r['states']:
                    hop['receive posted ahead of the isend'].append(posted - r['states']['RecvWait'])
    for (rank, isSend, ch, peer), recvs in ops.items():
        if isSend:
            continue
        sends = next((v for kk, v in ops.items() if kk[0] == rank and kk[1] and kk[2] == ch), None)
        for i, (ro, so) in enumerate(zip(recvs, sends or [])):
            if i < skip:
                continue
            for k, r in ro['steps'].items():
                for dd in (2, 4):
                    s = so['steps'].get(k + dd)
                    if 'RecvGPUWait' in r['states'] and s and 'SendWait' in s['states']:
                        hop['receive k done -> own send k+%d posted' % dd].append(
                            s['states']['SendWait'] - r['states']['RecvGPUWait'])
    for name, v in hop.items():
        show(name, v)


if __name__ == '__main__':
    main()
