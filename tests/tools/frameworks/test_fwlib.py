"""Tests of tools/gpu/frameworks/fwlib.py, the part of the framework check
that needs no torch, CuPy or GPU: expected values, fp8 bits, the report and
time bounds, /proc maps and NCCL log parsing, and the proof of which
libnccl.so.2 served a process, run against a library linked like
libtorch_cuda.so (fw_user.c), with and without mkccl-exec.
Environment (set by ctest): FW_SRC_DIR (tools/gpu/frameworks),
FW_TEST_USER_LIB, FW_TEST_OTHER_NCCL, FW_TEST_MKCCL_EXEC; with
FW_TEST_REQUIRE_PROOF=1 a missing one fails instead of skipping. Where the
CUDA toolkit has NVIDIA's libnccl.so.2, FW_TEST_NVIDIA_USER_LIB and
FW_TEST_NVIDIA_NCCL run the proof against it too (skipped otherwise)."""

import io
import json
import math
import os
import subprocess
import struct
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.environ.get("FW_SRC_DIR") or os.path.join(HERE, "..", "..", "..", "tools", "gpu", "frameworks")
sys.path.insert(0, SRC)
import fwlib  # noqa: E402

NUMERIC = [d for d in fwlib.DTYPES if d != "bool"]


class Fp8(unittest.TestCase):
    def test_known_bits(self):
        self.assertEqual(fwlib.fp8_encode(1.0, "float8_e4m3fn"), 0x38)
        self.assertEqual(fwlib.fp8_encode(448.0, "float8_e4m3fn"), 0x7E)
        self.assertEqual(fwlib.fp8_encode(-2.0, "float8_e5m2"), 0xC0)
        self.assertEqual(fwlib.fp8_encode(1.0, "float8_e5m2"), 0x3C)
        self.assertEqual(fwlib.fp8_encode(2.0 ** -9, "float8_e4m3fn"), 0x01)  # smallest subnormal
        self.assertTrue(math.isnan(fwlib.fp8_decode(0x7F, "float8_e4m3fn")))
        self.assertEqual(fwlib.fp8_decode(0x7C, "float8_e5m2"), float("inf"))

    def test_round_trip_and_refusals(self):
        for fmt, top in (("float8_e4m3fn", 16), ("float8_e5m2", 8)):
            for v in range(-top, top + 1):
                self.assertEqual(fwlib.fp8_decode(fwlib.fp8_encode(float(v), fmt), fmt), v)
        for bits in range(256):
            v = fwlib.fp8_decode(bits, "float8_e4m3fn")
            if not math.isnan(v) and bits != 0x80:
                self.assertEqual(fwlib.fp8_encode(v, "float8_e4m3fn"), bits)
        with self.assertRaises(ValueError):
            fwlib.fp8_encode(17.0, "float8_e4m3fn")  # between 16 and 18
        with self.assertRaises(ValueError):
            fwlib.fp8_encode(9.0, "float8_e5m2")
        with self.assertRaises(ValueError):
            fwlib.fp8_encode(480.0, "float8_e4m3fn")  # past the largest, 448


class Inputs(unittest.TestCase):
    def test_ranks_and_elements_differ_and_sums_stay_exact(self):
        for dtype in NUMERIC:
            _, limit, _ = fwlib.DTYPES[dtype]
            for op in ("SUM", "MIN", "MAX", "AVG", "PREMUL_SUM"):
                if op == "PREMUL_SUM" and dtype not in fwlib.PREMUL_DTYPES:
                    continue
                for n in (2, 3, 4, 8):
                    ins = [fwlib.reduce_input(dtype, op, n, r, 97) for r in range(n)]
                    lo, hi = fwlib.value_range(dtype, n, 3 if op == "PREMUL_SUM" else 1)
                    for r in range(1, n):
                        self.assertNotEqual(ins[r], ins[0], (dtype, op, n, r))
                        self.assertNotEqual(ins[r][:-1], ins[0][1:], "rank %d is rank 0 shifted" % r)
                    self.assertGreater(len(set(ins[0])), 2, (dtype, op, n))
                    scale = 3 if op == "PREMUL_SUM" else 1
                    for i in range(97):
                        col = [ins[r][i] for r in range(n)]
                        self.assertLessEqual(scale * sum(abs(v) for v in col), limit, (dtype, op, n, i))
                        if hi - lo + 1 >= n:
                            self.assertEqual(len(set(col)), n, "ranks share element %d: %s %s %d" % (i, dtype, op, n))
                        if dtype in fwlib.FP8:
                            for v in col:
                                fwlib.fp8_encode(v, dtype)

    def test_products_stay_small(self):
        for dtype in NUMERIC:
            for n in (2, 4, 8):
                ins = [fwlib.reduce_input(dtype, "PRODUCT", n, r, 200) for r in range(n)]
                exp, _ = fwlib.expected_reduce(dtype, "PRODUCT", n, 200)
                for i in range(200):
                    col = [ins[r][i] for r in range(n)]
                    self.assertLessEqual(abs(math.prod(col)), 2)
                    twos = sum(1 for v in col if abs(v) == 2)
                    if 0 in col:  # the zero may have taken the 2's place
                        self.assertLessEqual(twos, 1, (dtype, n, i, col))
                    else:
                        self.assertEqual(twos, 1, (dtype, n, i, col))
                    self.assertEqual(exp[i], math.prod(col))
                if fwlib.DTYPES[dtype][0] == "uint":
                    self.assertTrue(all(v >= 0 for r in ins for v in r))
                else:
                    self.assertTrue(any(v < 0 for r in ins for v in r))
                self.assertIn(0, [v for r in ins for v in r])


class Expected(unittest.TestCase):
    def test_premul_sum_is_factor_times_each_input(self):
        for dtype in ("float16", "bfloat16", "float32", "float64"):
            for n in (2, 4):
                ins = [fwlib.reduce_input(dtype, "PREMUL_SUM", n, r, 64, salt=5) for r in range(n)]
                for f in (fwlib.PREMUL_HOST_FACTOR, fwlib.PREMUL_DEVICE_FACTOR, 1.0):
                    exp, tol = fwlib.expected_reduce(dtype, "PREMUL_SUM", n, 64, salt=5, factor=f)
                    self.assertEqual(tol, 0.0)
                    self.assertEqual(exp, [f * sum(ins[r][i] for r in range(n)) for i in range(64)])
        # Not the factor applied once to the sum of squares, nor twice.
        exp, _ = fwlib.expected_reduce("float32", "PREMUL_SUM", 2, 8, factor=3.0)
        ins = [fwlib.reduce_input("float32", "PREMUL_SUM", 2, r, 8) for r in range(2)]
        self.assertNotEqual(exp, [9.0 * (a + b) for a, b in zip(*ins)])
        with self.assertRaises(ValueError):
            fwlib.expected_reduce("float32", "PREMUL_SUM", 2, 8)

    def test_bfloat16_factor_is_what_nccl_reads(self):
        # torch gives a float32; NCCL reads its low two bytes as bfloat16.
        for where, applied in (("host", 3.0), ("device", -2.0)):
            given, seen = fwlib.premul_factor("bfloat16", where)
            self.assertEqual(seen, applied)
            self.assertNotEqual(given, applied)  # the float32 itself is not the value applied
            low = struct.unpack("<I", struct.pack("<f", given))[0] & 0xFFFF
            self.assertEqual(struct.unpack("<f", struct.pack("<I", low << 16))[0], seen)
        self.assertEqual(fwlib.premul_factor("float16", "host"), (3.0, 3.0))
        self.assertEqual(fwlib.premul_factor("float64", "device"), (-2.0, -2.0))

    def test_ops(self):
        n, count = 4, 50
        ins = {op: [fwlib.reduce_input("int8", op, n, r, count) for r in range(n)] for op in fwlib.OPS[:5]}
        cols = {op: list(zip(*v)) for op, v in ins.items()}
        self.assertEqual(fwlib.expected_reduce("int8", "SUM", n, count)[0], [sum(c) for c in cols["SUM"]])
        self.assertEqual(fwlib.expected_reduce("int8", "MIN", n, count)[0], [min(c) for c in cols["MIN"]])
        self.assertEqual(fwlib.expected_reduce("int8", "MAX", n, count)[0], [max(c) for c in cols["MAX"]])
        avg = fwlib.expected_reduce("int8", "AVG", n, count)[0]
        self.assertEqual(avg, [int(sum(c) / n) for c in cols["AVG"]])  # toward zero, as C
        self.assertEqual((fwlib.trunc_div(-7, 2), fwlib.trunc_div(7, 2), fwlib.trunc_div(-8, 4)), (-3, 3, -2))
        favg, tol = fwlib.expected_reduce("float16", "AVG", 4, count)
        self.assertEqual(tol, 0.0)
        fins = [fwlib.reduce_input("float16", "AVG", 4, r, count) for r in range(4)]
        self.assertEqual(favg, [sum(c) / 4 for c in zip(*fins)])
        self.assertGreater(fwlib.expected_reduce("float16", "AVG", 3, count)[1], 0.0)  # 1/3 rounds

    def test_bool(self):
        n = 4
        ins = [fwlib.reduce_input("bool", "SUM", n, r, 300) for r in range(n)]
        self.assertEqual(fwlib.expected_reduce("bool", "SUM", n, 300)[0], [any(c) for c in zip(*ins)])
        self.assertEqual(fwlib.expected_reduce("bool", "PRODUCT", n, 300)[0], [all(c) for c in zip(*ins)])
        self.assertIn(False, fwlib.expected_reduce("bool", "MAX", n, 300)[0])
        self.assertIn(True, fwlib.expected_reduce("bool", "MIN", n, 300)[0])
        with self.assertRaises(ValueError):
            fwlib.expected_reduce("bool", "AVG", n, 300)

    def test_alltoall_uneven(self):
        for n in (2, 3, 4):
            splits = fwlib.alltoall_splits(n)
            self.assertTrue(any(len(set(row)) > 1 for row in splits))
            sent = {r: fwlib.alltoall_uneven_input(n, r) for r in range(n)}
            for r in range(n):
                self.assertEqual(len(sent[r]), sum(splits[r]))
                # Route what every rank sent by its splits: rank r gets these.
                got = []
                for j in range(n):
                    start = sum(splits[j][:r])
                    got += sent[j][start:start + splits[j][r]]
                self.assertEqual(got, fwlib.alltoall_uneven_expected(n, r))

    def test_coll_values(self):
        self.assertNotEqual([fwlib.coll_value(0, i) for i in range(20)], [fwlib.coll_value(1, i) for i in range(20)])
        self.assertTrue(all(fwlib.coll_value(7, i) == int(fwlib.coll_value(7, i)) for i in range(100)))


class Reports(unittest.TestCase):
    def test_lines_and_classes(self):
        out = io.StringIO()
        rep = fwlib.Report(1, 4, out)

        def no():
            raise fwlib.NotRun("torch has no X")

        def bad():
            raise RuntimeError("boom")

        def refused():
            raise ValueError("Float8 refused")

        self.assertTrue(fwlib.run_check(rep, "a", lambda: "3 ok"))
        self.assertFalse(fwlib.run_check(rep, "b", no))
        self.assertFalse(fwlib.run_check(rep, "c", bad))
        self.assertFalse(fwlib.run_check(rep, "d", refused, classify=lambda e: "refused" if "Float8" in str(e) else None))
        self.assertFalse(fwlib.run_check(rep, "e", bad, classify=lambda e: None))
        lines = out.getvalue().splitlines()
        self.assertEqual(lines[0], "PASS a [rank 1/4]: 3 ok")
        self.assertEqual(lines[1], "NOTRUN b [rank 1/4]: torch has no X")
        self.assertEqual(lines[2], "FAIL c [rank 1/4]: RuntimeError: boom")
        self.assertEqual(lines[3], "NOTRUN d [rank 1/4]: refused")
        self.assertTrue(lines[4].startswith("FAIL e "))
        self.assertEqual(rep.counts, {"PASS": 1, "FAIL": 2, "NOTRUN": 2})

    def test_bound_ends_the_process(self):
        code = ("import sys,time; sys.path.insert(0, %r); import fwlib\n"
                "r = fwlib.Report(0, 1)\n"
                "fwlib.run_check(r, 'stuck', lambda: time.sleep(30), limit_s=0.3)\n"
                "print('not reached')\n") % SRC
        p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=20)
        self.assertEqual(p.returncode, 124)
        self.assertIn("FAIL stuck [rank 0/1]: no end after", p.stdout)
        self.assertNotIn("not reached", p.stdout)

    def test_compare(self):
        fwlib.compare([1, 2.0, True], [1, 2, 1])
        fwlib.compare([1.001], [1.0], tol=0.01)
        with self.assertRaisesRegex(fwlib.CheckFailed, "1 of 3 differ: element 2 is 4, expected 3"):
            fwlib.compare([1, 2, 4], [1, 2, 3])
        with self.assertRaises(fwlib.CheckFailed):
            fwlib.compare([float("nan")], [1.0], tol=1.0)
        with self.assertRaises(fwlib.CheckFailed):
            fwlib.compare([1], [1, 2])


MAPS = """\
55d0c0a00000-55d0c0a01000 r--p 00000000 08:01 131 /usr/bin/python3.12
7f10a0000000-7f10a0200000 r--p 00000000 08:01 901 /opt/mk/lib/libnccl.so.2.28.9
7f10a0200000-7f10a0800000 r-xp 00200000 08:01 901 /opt/mk/lib/libnccl.so.2.28.9
7f10b0000000-7f10b1000000 r-xp 00000000 08:01 902 /venv/nvidia/nccl/lib/libnccl.so.2
7f10b1000000-7f10b1001000 rw-p 00000000 00:00 0
7f10c0000000-7f10c0010000 r-xp 00000000 08:01 903 /tmp/dir with space/libx.so (deleted)
7ffc00000000-7ffc00021000 rw-p 00000000 00:00 0                          [stack]
"""


class SymmMem(unittest.TestCase):
    def test_scatter_slots_name_sender_and_receiver(self):
        for n in (1, 2, 4):
            for r in range(n):
                got = fwlib.symm_scatter_expected(n, r, 5)
                self.assertEqual(len(got), n * 5)
                self.assertEqual(len(set(got)), n * 5)
                others = set(v for q in range(n) if q != r for v in fwlib.symm_scatter_expected(n, q, 5))
                self.assertFalse(set(got) & others)  # no rank's result is another's
                if n > 1:
                    self.assertEqual(got[5], fwlib.tagged(1, r, 0))  # slot 1 is rank 1's

    def test_rounds_act_once_on_every_rank_never_on_self(self):
        self.assertEqual(fwlib.symm_rounds(1), [])
        for n in (2, 3, 4):
            rounds = fwlib.symm_rounds(n)
            self.assertEqual(sorted(a for a, _ in rounds), list(range(n)))
            self.assertEqual(sorted(t for _, t in rounds), list(range(n)))
            self.assertTrue(all(a != t for a, t in rounds))

    def test_round_expected(self):
        v = lambda r: [r * 10, r * 10 + 1]  # noqa: E731
        self.assertEqual(fwlib.symm_round_expected(4, 2, 1, 2, v, "put"), v(1))
        self.assertEqual(fwlib.symm_round_expected(4, 1, 1, 2, v, "put"), v(1))
        self.assertEqual(fwlib.symm_round_expected(4, 3, 1, 2, v, "put"), v(3))
        self.assertEqual(fwlib.symm_round_expected(4, 1, 1, 2, v, "get"), v(2))
        self.assertEqual(fwlib.symm_round_expected(4, 2, 1, 2, v, "get"), v(2))
        self.assertEqual(fwlib.symm_round_expected(4, 0, 1, 2, v, "get"), v(0))

    def test_refusal_is_torchs_not_nccl(self):
        self.assertIn("NYI", fwlib.symm_refusal("NYI\nException raised from barrier at NCCLSymmetricMemory.cu:210"))
        self.assertIsNotNone(fwlib.symm_refusal("NCCL symmetric memory is not supported. Requires NCCL >= 2.28.9"))
        self.assertIsNone(fwlib.symm_refusal("ncclDevCommCreate failed NCCL error in: ...: invalid usage"))
        self.assertIsNone(fwlib.symm_refusal("Failed to window register segment: NCCL error: unhandled system error"))
        self.assertIsNone(fwlib.symm_refusal("CUDA error: an illegal memory access was encountered"))
        self.assertIsNone(fwlib.symm_refusal("2 of 1031 differ: element 0 is 1.0, expected 2.0"))

    def test_hosts(self):
        self.assertIsNone(fwlib.hosts_of(["a", "a", "a"]))
        self.assertIsNone(fwlib.hosts_of(["a"]))
        self.assertIn("2 hosts", fwlib.hosts_of(["fwhost0", "fwhost1"]))


class Maps(unittest.TestCase):
    def test_parse_and_lookup(self):
        maps = fwlib.parse_maps(MAPS)
        self.assertEqual(len(maps), 7)
        self.assertEqual(fwlib.mapping_at(maps, 0x7F10A0200000 + 5).path, "/opt/mk/lib/libnccl.so.2.28.9")
        self.assertEqual(fwlib.mapping_at(maps, 0x7F10A0200000).offset, 0x200000)
        self.assertEqual(fwlib.mapping_at(maps, 0x7F10A01FFFFF).perms, "r--p")
        self.assertEqual(fwlib.mapping_at(maps, 0x7F10B1000000).path, "")  # end is exclusive
        self.assertIsNone(fwlib.mapping_at(maps, 0x10))
        self.assertEqual(fwlib.mapping_at(maps, 0x7F10C0000001).path, "/tmp/dir with space/libx.so")
        self.assertEqual(fwlib.mapping_at(maps, 0x7FFC00000010).path, "[stack]")
        self.assertEqual(fwlib.mapped_nccl_files(maps),
                         ["/opt/mk/lib/libnccl.so.2.28.9", "/venv/nvidia/nccl/lib/libnccl.so.2"])

    def test_self_maps(self):
        maps = fwlib.read_maps()
        self.assertIsNotNone(fwlib.mapping_at(maps, id(maps)))


MK_LOG = """\
host:11:11 [0] NCCL INFO Plugin: default manifest /opt/mk/lib/mkccl/manifest.yaml
host:11:11 [0] NCCL INFO comm 0x5601 rank 1 nRanks 4 cudaDev 0 busId 1000 commHash 0x1 - Init START
host:11:11 [0] NCCL INFO comm 0x5601 rank 1 nRanks 4 nNodes 1 localRanks 4 localRank 1 - Init COMPLETE
host:11:11 [0] NCCL INFO comm 0x5602 rank 0 nRanks 2 cudaDev 0 busId 1000 commHash 0x2 commName x - Init START
host:11:11 [0] NCCL INFO comm 0x5602 rank 0 nRanks 2 nNodes 1 localRanks 2 localRank 0 - Init COMPLETE
"""
NV_LOG = """\
host:12:12 [0] NCCL INFO NCCL version 2.28.9+cuda13.0
host:12:12 [0] NCCL INFO ncclCommInitRankConfig comm 0x7a rank 0 nranks 2 cudaDev 0 nvmlDev 0 busId 1000 commId 0x99 - Init START
host:12:12 [0] NCCL INFO ncclCommInitRankConfig comm 0x7a rank 0 nranks 2 cudaDev 0 nvmlDev 0 busId 1000 commId 0x99 - Init COMPLETE
"""


class Logs(unittest.TestCase):
    def test_mkccl_log(self):
        self.assertEqual(fwlib.check_log(MK_LOG, [(1, 4), (0, 2)]), [])
        self.assertEqual(fwlib.check_log(MK_LOG, [(1, 4), (1, 4)]), ["no mkccl Init COMPLETE for rank 1 of 4"])
        started = MK_LOG + "h:1:1 [0] NCCL INFO comm 0x5603 rank 0 nRanks 3 cudaDev 0 busId 1 commHash 0x3 - Init START\n"
        self.assertEqual(fwlib.check_log(started), ["3 Init START but 2 Init COMPLETE"])
        self.assertIn("no mkccl manifest line", fwlib.check_log(MK_LOG.split("\n", 1)[1]))

    def test_nvidia_log(self):
        problems = fwlib.check_log(NV_LOG, [(0, 2)])
        self.assertIn("no mkccl manifest line", problems)
        self.assertIn("no mkccl Init COMPLETE for rank 0 of 2", problems)
        self.assertIn("NVIDIA's 'NCCL version' banner", problems)
        self.assertIn("1 NVIDIA-format Init COMPLETE lines", problems)
        c = fwlib.log_comms(NV_LOG)
        self.assertEqual((c["nvidia"], c["mkccl"], c["starts"]), ([(0, 2)], [], 0))
        # A non-zero rank of NVIDIA's library prints no banner, but its lines tell.
        self.assertIn("1 NVIDIA-format Init COMPLETE lines", fwlib.check_log(NV_LOG.split("\n", 1)[1]))

    def test_log_path(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "t_%d.log" % os.getpid())
            open(path, "w").close()
            self.assertEqual(fwlib.log_path_for(os.path.join(d, "t_%p.log")), path)
            self.assertEqual(fwlib.log_path_for(os.path.join(d, "t_%h_%p.log"), pid=7).rsplit("_", 1)[1], "7.log")


def _need(name):
    if os.environ.get("FW_TEST_SANITIZED"):
        raise unittest.SkipTest("a %s build's libraries do not load into python3" % os.environ["FW_TEST_SANITIZED"])
    value = os.environ.get(name, "")
    if value and os.path.exists(value):
        return value
    if os.environ.get("FW_TEST_REQUIRE_PROOF") == "1":
        raise AssertionError("%s is not set to an existing file" % name)
    raise unittest.SkipTest("%s not set (ctest sets it)" % name)


class Elf(unittest.TestCase):
    def test_imports_of_a_user_library(self):
        user = _need("FW_TEST_USER_LIB")
        imports = fwlib.elf_imports(user)
        self.assertIn("ncclGetVersion", imports)
        self.assertTrue(all(k in ("JUMP_SLOT", "GLOB_DAT", "64", "ABS64") for _, k in imports["ncclGetVersion"]))
        self.assertEqual(fwlib.elf_imports(user, prefix="nothingLikeThis"), {})

    def test_not_elf(self):
        with tempfile.NamedTemporaryFile(suffix=".so") as f:
            f.write(b"#!/bin/sh\n" * 10)
            f.flush()
            with self.assertRaisesRegex(ValueError, "not an ELF"):
                fwlib.elf_imports(f.name)


class Proof(unittest.TestCase):
    """fwlib.prove in a process that loads fw_user.c's library (DT_RPATH to
    another libnccl.so.2, as pip's torch), with and without mkccl-exec."""

    def probe(self, with_exec, premap=False, user=None, other=None, symbol="ncclGetVersion"):
        user = user or _need("FW_TEST_USER_LIB")
        other = other or _need("FW_TEST_OTHER_NCCL")
        exe = _need("FW_TEST_MKCCL_EXEC")
        mk = subprocess.run([exe, "--lib"], capture_output=True, text=True, check=True).stdout.strip()
        cmd = [sys.executable, os.path.join(HERE, "proof_probe.py"), SRC, user, mk] + ([other] if premap else [])
        if with_exec:
            cmd = [exe] + cmd
        env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1", FW_PROBE_SYMBOL=symbol)
        env.pop("LD_PRELOAD", None)
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=60, env=env)
        self.assertEqual(p.returncode, 0, p.stderr)
        return json.loads(p.stdout.strip().splitlines()[-1]), mk, other

    def test_other_copy_serves_without_mkccl_exec(self):
        proof, mk, other = self.probe(False)
        self.assertEqual(proof["verdict"], "nvidia", proof)
        self.assertTrue(fwlib.same_file(proof["nvidia_file"], other))
        self.assertEqual(proof["version"], 99999)
        self.assertIn("mkcclInfoReport not in the global scope", proof["parts"]["global"])
        self.assertTrue(any("GOT slots bound elsewhere: ncclGetVersion" in p for p in proof["parts"]["binding"]))

    def test_mkccl_serves_with_mkccl_exec(self):
        proof, mk, _ = self.probe(True)
        self.assertEqual(proof["verdict"], "mkccl", proof)
        self.assertEqual(proof["problems"], [])
        self.assertEqual(proof["parts"], {"binding": [], "global": [], "log": []})
        self.assertEqual(proof["version"], 22809)
        self.assertTrue(any("GOT: 1 nccl* slots, 1 bound, all bound ones in mkccl: yes" in f for f in proof["facts"]))

    def test_premapped_other_copy_serves_nothing(self):
        proof, _, other = self.probe(True, premap=True)
        self.assertEqual(proof["verdict"], "mkccl", proof)
        self.assertTrue(any(f.startswith("also mapped") and other in f for f in proof["facts"]), proof["facts"])

    def nvidia(self):
        _need("FW_TEST_MKCCL_EXEC")
        user, nv = os.environ.get("FW_TEST_NVIDIA_USER_LIB", ""), os.environ.get("FW_TEST_NVIDIA_NCCL", "")
        if not (os.path.exists(user) and os.path.exists(nv)):
            raise unittest.SkipTest("no NVIDIA libnccl.so.2 in the CUDA toolkit here")
        return user, nv

    def test_nvidia_copy_serves_without_mkccl_exec(self):
        # NVIDIA's 2.28.9 reports the version mkccl reports: only the proof tells them apart.
        user, nv = self.nvidia()
        proof, _, _ = self.probe(False, user=user, other=nv, symbol="ncclAllReduce")
        self.assertEqual(proof["verdict"], "nvidia", proof)
        self.assertTrue(fwlib.same_file(proof["nvidia_file"], nv))

    def test_nvidia_copy_mapped_first_serves_nothing(self):
        user, nv = self.nvidia()
        proof, _, _ = self.probe(True, premap=True, user=user, other=nv, symbol="ncclAllReduce")
        self.assertEqual(proof["verdict"], "mkccl", proof)
        self.assertTrue(any(f.startswith("also mapped") for f in proof["facts"]), proof["facts"])


if __name__ == "__main__":
    unittest.main(verbosity=2)
