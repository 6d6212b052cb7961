"""What the framework checks (torch_check.py, cupy_check.py) share, none of
it needing torch, CuPy or a GPU, so tests/tools/frameworks tests it on any
machine: report lines and time bounds, inputs and their expected results,
fp8 bit patterns, and the proof of which libnccl.so.2 served a process
(/proc/self/maps, the ELF relocations of the library that calls NCCL, the
dynamic linker's answers, the NCCL log)."""

import ctypes
import faulthandler
import glob
import math
import os
import re
import socket
import struct
import sys
import threading
import time

# ---------------------------------------------------------------- report

class NotRun(Exception):
    """The installed framework lacks what the check needs: not run, never a pass."""


class CheckFailed(Exception):
    pass


class Report:
    """One line per check and rank: PASS name / FAIL name: why / NOTRUN name: why."""

    def __init__(self, rank=0, nranks=1, out=None):
        self.rank, self.nranks = rank, nranks
        self.out = out or sys.stdout
        self.counts = {"PASS": 0, "FAIL": 0, "NOTRUN": 0}
        self.lock = threading.Lock()

    def line(self, kind, name, why=""):
        text = "%s %s [rank %d/%d]" % (kind, name, self.rank, self.nranks)
        if why:
            text += ": " + " ".join(str(why).split())[:600]
        with self.lock:
            self.counts[kind] += 1
            self.out.write(text + "\n")
            self.out.flush()

    def passed(self, name, note=""):
        self.line("PASS", name, note)

    def failed(self, name, why):
        self.line("FAIL", name, why)

    def notrun(self, name, why):
        self.line("NOTRUN", name, why)


def _expire(report, name, limit_s, code):
    report.failed(name, "no end after %d s (stacks on stderr); the rank exits" % limit_s)
    faulthandler.dump_traceback(file=sys.stderr, all_threads=True)
    sys.stderr.flush()
    os._exit(code)


class Bound:
    """A time bound: when it passes, a FAIL line, the stacks, and the process
    exits (a rank stuck in a collective cannot be unstuck from Python)."""

    def __init__(self, report, name, limit_s, code=124):
        self.timer = threading.Timer(limit_s, _expire, (report, name, limit_s, code))
        self.timer.daemon = True

    def __enter__(self):
        self.timer.start()
        return self

    def __exit__(self, *exc):
        self.timer.cancel()
        return False


def run_check(report, name, fn, limit_s=60, classify=None):
    """Runs fn() within limit_s: returns normally (a note string or None) is a
    PASS, NotRun a NOTRUN, anything else a FAIL with the exception. classify
    may turn an exception into NotRun (the framework refused the call before
    NCCL saw it). Returns True on PASS."""
    try:
        with Bound(report, name, limit_s):
            note = fn()
    except NotRun as e:
        report.notrun(name, e)
        return False
    except Exception as e:  # noqa: BLE001 - every failure is reported
        if classify is not None:
            reason = classify(e)
            if reason:
                report.notrun(name, reason)
                return False
        report.failed(name, "%s: %s" % (type(e).__name__, e))
        return False
    report.passed(name, note or "")
    return True


def compare(got, expected, tol=0.0, what="element"):
    """Raises CheckFailed naming the first mismatches (tol: absolute, per element)."""
    if len(got) != len(expected):
        raise CheckFailed("%d %ss, expected %d" % (len(got), what, len(expected)))
    bad = []
    for i, (g, e) in enumerate(zip(got, expected)):
        if isinstance(e, bool) or isinstance(g, bool):
            ok = bool(g) == bool(e)
        elif tol:
            ok = abs(g - e) <= tol
        else:
            ok = g == e
        if not ok:
            bad.append(i)
    if bad:
        shown = ", ".join("%s %d is %r, expected %r" % (what, i, got[i], expected[i]) for i in bad[:4])
        raise CheckFailed("%d of %d differ: %s" % (len(bad), len(expected), shown))


# ------------------------------------------------- inputs and expectations

# name: (kind, largest magnitude every partial sum may reach exactly, mantissa bits)
DTYPES = {
    "int8": ("int", 127, 0),
    "uint8": ("uint", 255, 0),
    "int32": ("int", 2**31 - 1, 0),
    "uint32": ("uint", 2**32 - 1, 0),
    "int64": ("int", 2**63 - 1, 0),
    "uint64": ("uint", 2**64 - 1, 0),
    "float16": ("float", 2048, 10),
    "bfloat16": ("float", 256, 7),
    "float32": ("float", 2**24, 23),
    "float64": ("float", 2**53, 52),
    "float8_e4m3fn": ("float", 16, 3),
    "float8_e5m2": ("float", 8, 2),
    "bool": ("bool", 1, 0),
}
# Ops of the reduction checks; PREMUL_SUM takes a factor.
OPS = ("SUM", "PRODUCT", "MIN", "MAX", "AVG", "PREMUL_SUM")
# The types NCCL's PreMulSum takes through torch (half, float, bfloat16, double).
PREMUL_DTYPES = ("float16", "bfloat16", "float32", "float64")
# The two factors: a host scalar and one read from device memory.
PREMUL_HOST_FACTOR = 3.0
PREMUL_DEVICE_FACTOR = -2.0
# torch hands NCCL a float32 factor for bfloat16 (host value or tensor), and
# NCCL reads the datatype's two bytes at its address: on little-endian
# machines the float's low half. These factors' low halves are bfloat16 3.0
# and -2.0 (0x4040, 0xC000), so both readings mean nearly the same value and
# the check tells a library that reads the scalar from one that does not.
PREMUL_BF16_FACTORS = {"host": struct.unpack("<f", struct.pack("<I", 0x40404040))[0],
                       "device": struct.unpack("<f", struct.pack("<I", 0xC000C000))[0]}


def cuda_multicast_supported(device):
    """CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED of a device (the driver
    already initialised by the framework), or None when unreadable."""
    try:
        cu = ctypes.CDLL("libcuda.so.1")
        dev, val = ctypes.c_int(), ctypes.c_int()
        if cu.cuDeviceGet(ctypes.byref(dev), int(device)) != 0:
            return None
        if cu.cuDeviceGetAttribute(ctypes.byref(val), 132, dev) != 0:
            return None
        return val.value
    except OSError:
        return None


def premul_factor(dtype, where):
    """(factor torch is given, factor NCCL applies) of a PREMUL_SUM check."""
    if dtype == "bfloat16":
        given = PREMUL_BF16_FACTORS[where]
        low = struct.unpack("<I", struct.pack("<f", given))[0] & 0xFFFF
        return given, struct.unpack("<f", struct.pack("<I", low << 16))[0]
    f = PREMUL_HOST_FACTOR if where == "host" else PREMUL_DEVICE_FACTOR
    return f, f


def mix(i, salt=0):
    """A 32-bit hash of an element index: neighbours get unrelated values."""
    x = (i * 0x9E3779B1 + salt * 0x85EBCA77 + 0x165667B1) & 0xFFFFFFFF
    x ^= x >> 15
    x = (x * 0x2C1B3C6D) & 0xFFFFFFFF
    x ^= x >> 12
    x = (x * 0x297A2D39) & 0xFFFFFFFF
    x ^= x >> 15
    return x


def value_range(dtype, nranks, scale=1):
    """Integers lo..hi such that scale times a sum over nranks of them (and
    every partial sum) is exact in dtype."""
    kind, limit, _ = DTYPES[dtype]
    per = min(limit // (nranks * max(1, int(math.ceil(scale)))), 1000)
    per = max(per, 1)
    return (0, per) if kind == "uint" else (-per, per)


def reduce_input(dtype, op, nranks, rank, count, salt=0):
    """Rank `rank`'s input of a reduction: element i of every rank differs
    (while the range has as many values as there are ranks), and rank r's
    pattern is no shift of another rank's."""
    kind = DTYPES[dtype][0]
    if kind == "bool":
        return [bool((mix(i, salt * 131 + rank + 1) >> 5) & 1) for i in range(count)]
    if op == "PRODUCT":
        return _product_input(kind, nranks, rank, count, salt)
    scale = 1
    if op == "PREMUL_SUM":
        scale = max(abs(PREMUL_HOST_FACTOR), abs(PREMUL_DEVICE_FACTOR))
    lo, hi = value_range(dtype, nranks, scale)
    m = hi - lo + 1
    step = max(1, m // nranks)
    # Past m ranks (fp8 on 8 ranks) values repeat; another hash keeps the
    # repeating ranks' vectors apart.
    gen = salt + 977 * (rank // m)
    out = []
    for i in range(count):
        v = lo + (mix(i, gen) + rank * step) % m
        out.append(float(v) if kind == "float" else v)
    return out


def _product_input(kind, nranks, rank, count, salt):
    # Magnitudes 1 or 2, one rank holding the 2 at each element, signs and
    # zeros varying: every product is -2..2, exact in every type.
    out = []
    for i in range(count):
        h = mix(i, salt + 7)
        v = 2 if (h + rank) % nranks == 0 else 1
        if kind != "uint" and ((h >> 4) + rank) % 3 == 0:
            v = -v
        if (h >> 12) % 13 == 0 and rank == (h >> 16) % nranks:
            v = 0
        out.append(float(v) if kind == "float" else v)
    return out


def trunc_div(a, b):
    """C integer division (toward zero), as NCCL's ncclAvg on integers."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def expected_reduce(dtype, op, nranks, count, salt=0, factor=None):
    """(expected list, absolute tolerance) of an all-reduce over nranks of
    reduce_input(dtype, op, ...). PREMUL_SUM: sum of factor * input.
    Booleans: SUM and MAX are any, PRODUCT and MIN all (as torch maps them)."""
    kind, _, mant = DTYPES[dtype]
    ins = [reduce_input(dtype, op, nranks, r, count, salt) for r in range(nranks)]
    cols = list(zip(*ins))
    tol = 0.0
    if kind == "bool":
        if op in ("SUM", "MAX"):
            return [any(c) for c in cols], tol
        if op in ("PRODUCT", "MIN"):
            return [all(c) for c in cols], tol
        raise ValueError("no %s on booleans" % op)
    if op == "SUM":
        exp = [sum(c) for c in cols]
    elif op == "PRODUCT":
        exp = [math.prod(c) for c in cols]
    elif op == "MIN":
        exp = [min(c) for c in cols]
    elif op == "MAX":
        exp = [max(c) for c in cols]
    elif op == "AVG":
        if kind == "float":
            exp = [sum(c) / nranks for c in cols]
            if nranks & (nranks - 1):
                # NCCL multiplies each input by a rounded 1/n: not exact.
                big = max(abs(v) for c in cols for v in c) or 1
                tol = (nranks + 2) * big * 2.0 ** -mant
        else:
            exp = [trunc_div(sum(c), nranks) for c in cols]
    elif op == "PREMUL_SUM":
        if factor is None:
            raise ValueError("PREMUL_SUM needs a factor")
        exp = [sum(factor * v for v in c) for c in cols]
    else:
        raise ValueError("unknown op %s" % op)
    return exp, tol


def coll_value(rank, i, salt=0):
    """Element i of rank `rank` for the data-movement checks: the rank is in
    the thousands, the element's hash below (exact in float32)."""
    return float((rank + 1) * 1000 + mix(i, salt) % 997)


def tagged(src, dst, k):
    """An all-to-all element: who sent it, to whom, and which (float32-exact)."""
    return float(src * 10000 + dst * 100 + k % 100)


def alltoall_splits(nranks):
    """in_splits[r][j]: elements rank r sends to rank j (1 to 3, uneven)."""
    return [[1 + (r + 2 * j) % 3 for j in range(nranks)] for r in range(nranks)]


def alltoall_uneven_input(nranks, rank):
    splits = alltoall_splits(nranks)[rank]
    return [tagged(rank, j, k) for j in range(nranks) for k in range(splits[j])]


def alltoall_uneven_expected(nranks, rank):
    splits = alltoall_splits(nranks)
    return [tagged(j, rank, k) for j in range(nranks) for k in range(splits[j][rank])]


# ---------------------------------------------------- symmetric memory

def symm_scatter_expected(nranks, rank, m):
    """What rank `rank`'s buffer holds after every rank q stored
    tagged(q, peer, k) into slot q of every peer's buffer."""
    return [tagged(q, rank, k) for q in range(nranks) for k in range(m)]


def symm_rounds(nranks):
    """One-sided rounds: in round s rank s acts on rank s+1 (a ring), so
    no buffer is written (or read) while its owner refills it, and every
    rank is acted on once."""
    if nranks < 2:
        return []
    return [(s, (s + 1) % nranks) for s in range(nranks)]


def symm_round_expected(nranks, rank, actor, target, value, op):
    """Rank `rank`'s buffer after a round in which `actor` did op ("put":
    its values into target's buffer; "get": target's values into its own)
    with every rank starting from value(its rank)."""
    if op == "put" and rank == target:
        return value(actor)
    if op == "get" and rank == actor:
        return value(target)
    return value(rank)


_SYMM_REFUSAL = re.compile(r"\bNYI\b|not (yet )?(implemented|supported)|requires NCCL|"
                           r"only supported|does not support|unsupported|multicast", re.I)


def symm_refusal(text):
    """torch's own refusal of a symmetric-memory call (an operation its NCCL
    backend leaves unimplemented), as a NOTRUN reason; an NCCL failure
    (a result code torch names) never is one."""
    first = " ".join(str(text).strip().split("\n")[0].split())
    if re.search(r"NCCL error|nccl[A-Z][a-zA-Z]* failed|ncclInvalid|ncclInternal|ncclSystem|ncclUnhandled|"
                 r"CUDA error|illegal", str(text)):
        return None
    if _SYMM_REFUSAL.search(first):
        return "torch refuses it: " + first[:240]
    return None


def hosts_of(ids):
    """None when every rank's host id is the same, else a description."""
    distinct = sorted(set(ids))
    if len(distinct) <= 1:
        return None
    return "%d hosts (%s)" % (len(distinct), ", ".join(distinct[:4]))


# ----------------------------------------------------------- fp8 bit patterns

FP8 = {"float8_e4m3fn": (4, 3, 7), "float8_e5m2": (5, 2, 15)}  # exponent bits, mantissa bits, bias


def fp8_encode(value, fmt):
    """The bits of an exactly representable value (ValueError otherwise)."""
    ebits, mbits, bias = FP8[fmt]
    if value != value or math.isinf(value):
        raise ValueError("no %r in %s" % (value, fmt))
    sign = 0x80 if value < 0 or (value == 0 and math.copysign(1, value) < 0) else 0
    a = abs(value)
    if a == 0:
        return sign
    m, e = math.frexp(a)  # a = m * 2**e, 0.5 <= m < 1
    exp = e - 1 + bias
    if exp >= 1:
        mant = (m * 2 - 1) * (1 << mbits)
    else:  # subnormal: a multiple of the smallest step
        mant = a / 2.0 ** (1 - bias - mbits)
        exp = 0
    if mant != int(mant):
        raise ValueError("%r is not exact in %s" % (value, fmt))
    bits = sign | (exp << mbits) | int(mant)
    top = (1 << ebits) - 1
    if fmt == "float8_e4m3fn":
        if exp > top or (exp == top and int(mant) == (1 << mbits) - 1):
            raise ValueError("%r overflows %s" % (value, fmt))
    elif exp >= top:
        raise ValueError("%r overflows %s" % (value, fmt))
    return bits


def fp8_decode(bits, fmt):
    ebits, mbits, bias = FP8[fmt]
    sign = -1.0 if bits & 0x80 else 1.0
    exp = (bits >> mbits) & ((1 << ebits) - 1)
    mant = bits & ((1 << mbits) - 1)
    top = (1 << ebits) - 1
    if fmt == "float8_e4m3fn" and exp == top and mant == (1 << mbits) - 1:
        return float("nan")
    if fmt == "float8_e5m2" and exp == top:
        return sign * float("inf") if mant == 0 else float("nan")
    if exp == 0:
        return sign * mant * 2.0 ** (1 - bias - mbits)
    return sign * (1 + mant / float(1 << mbits)) * 2.0 ** (exp - bias)


# ------------------------------------------------------------ process maps

class Mapping:
    __slots__ = ("start", "end", "perms", "offset", "path")

    def __init__(self, start, end, perms, offset, path):
        self.start, self.end, self.perms, self.offset, self.path = start, end, perms, offset, path

    def __repr__(self):
        return "%x-%x %s %x %s" % (self.start, self.end, self.perms, self.offset, self.path)


def parse_maps(text):
    """The lines of /proc/PID/maps as Mappings (path '' for anonymous ones)."""
    out = []
    for line in text.splitlines():
        parts = line.split(None, 5)
        if len(parts) < 5:
            continue
        lo, _, hi = parts[0].partition("-")
        path = parts[5].strip() if len(parts) > 5 else ""
        if path.endswith(" (deleted)"):
            path = path[: -len(" (deleted)")]
        out.append(Mapping(int(lo, 16), int(hi, 16), parts[1], int(parts[2], 16), path))
    return out


def read_maps(maps_path="/proc/self/maps"):
    with open(maps_path) as f:
        return parse_maps(f.read())


def mapping_at(maps, addr):
    for m in maps:
        if m.start <= addr < m.end:
            return m
    return None


def same_file(a, b):
    if not a or not b:
        return False
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.realpath(a) == os.path.realpath(b)


def mapped_nccl_files(maps):
    """Every mapped file named libnccl.so*, each once."""
    seen = []
    for m in maps:
        if os.path.basename(m.path).startswith("libnccl.so") and not any(same_file(m.path, s) for s in seen):
            seen.append(m.path)
    return seen


# ------------------------------------------------------- ELF relocations

_RELOC_TYPES = {
    62: {1: "64", 6: "GLOB_DAT", 7: "JUMP_SLOT"},            # x86-64
    183: {257: "ABS64", 1025: "GLOB_DAT", 1026: "JUMP_SLOT"},  # AArch64
}


_IMPORTS = {}


def elf_imports(path, prefix="nccl"):
    """{symbol: [(slot offset, relocation type)]} for the undefined dynamic
    symbols starting with prefix that path's RELA relocations fill in (its
    GOT slots): where the loaded object's calls to them go. Read once per
    file and prefix (torch's library is large)."""
    key = (os.path.realpath(path), prefix)
    if key not in _IMPORTS:
        _IMPORTS[key] = _elf_imports(path, prefix)
    return _IMPORTS[key]


def _elf_imports(path, prefix):
    with open(path, "rb") as f:
        ident = f.read(64)
        if len(ident) < 64 or ident[:4] != b"\x7fELF":
            raise ValueError("%s is not an ELF file" % path)
        if ident[4] != 2 or ident[5] != 1:
            raise ValueError("%s is not a 64-bit little-endian ELF file" % path)
        machine = struct.unpack_from("<H", ident, 18)[0]
        types = _RELOC_TYPES.get(machine)
        if types is None:
            raise ValueError("%s: machine %d not known here" % (path, machine))
        shoff = struct.unpack_from("<Q", ident, 40)[0]
        shentsize, shnum = struct.unpack_from("<HH", ident, 58)
        if not shoff or not shnum:
            raise ValueError("%s has no section headers" % path)
        f.seek(shoff)
        raw = f.read(shentsize * shnum)
        secs = [struct.unpack_from("<IIQQQQIIQQ", raw, k * shentsize) for k in range(shnum)]

        def read(sec):
            f.seek(sec[4])
            return f.read(sec[5])

        dynsym_idx = [k for k, s in enumerate(secs) if s[1] == 11]  # SHT_DYNSYM
        if not dynsym_idx:
            raise ValueError("%s has no dynamic symbols" % path)
        dsi = dynsym_idx[0]
        dynsym = read(secs[dsi])
        dynstr = read(secs[secs[dsi][6]])
        pre = prefix.encode()
        wanted = {}
        for idx in range(len(dynsym) // 24):
            st_name, _, _, st_shndx = struct.unpack_from("<IBBH", dynsym, idx * 24)
            if st_shndx != 0 or not dynstr.startswith(pre, st_name):
                continue
            end = dynstr.index(b"\0", st_name)
            wanted[idx] = dynstr[st_name:end].decode()
        out = {}
        for s in secs:
            if s[1] != 4 or s[6] != dsi:  # SHT_RELA against .dynsym
                continue
            data = read(s)
            for r_offset, r_info, _ in struct.iter_unpack("<QQq", data[: len(data) // 24 * 24]):
                name = wanted.get(r_info >> 32)
                kind = types.get(r_info & 0xFFFFFFFF)
                if name and kind:
                    out.setdefault(name, []).append((r_offset, kind))
        return out


class _DlPhdrInfo(ctypes.Structure):
    _fields_ = [("dlpi_addr", ctypes.c_size_t), ("dlpi_name", ctypes.c_char_p),
                ("dlpi_phdr", ctypes.c_void_p), ("dlpi_phnum", ctypes.c_uint16)]


def load_base(path):
    """The load address (l_addr) of the loaded object that is file `path`, or None."""
    libc = ctypes.CDLL(None)
    found = []
    cb_type = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(_DlPhdrInfo), ctypes.c_size_t, ctypes.c_void_p)

    def cb(info, size, data):
        name = info.contents.dlpi_name
        if name and same_file(name.decode(errors="replace"), path):
            found.append(info.contents.dlpi_addr)
            return 1
        return 0

    libc.dl_iterate_phdr(cb_type(cb), None)
    return found[0] if found else None


def got_bindings(path, prefix="nccl", maps=None):
    """[(symbol, state, file)] for each GOT slot of the loaded `path` filled
    for an imported prefix* symbol: state 'bound' (file = the file holding
    the address), 'unbound' (still the lazy stub inside path itself) or
    'unreadable'."""
    base = load_base(path)
    if base is None:
        raise ValueError("%s is not loaded in this process" % path)
    maps = maps if maps is not None else read_maps()
    out = []
    for name, slots in sorted(elf_imports(path, prefix).items()):
        for off, _kind in slots:
            slot = base + off
            m = mapping_at(maps, slot)
            if m is None or "r" not in m.perms:
                out.append((name, "unreadable", ""))
                continue
            value = ctypes.c_uint64.from_address(slot).value
            target = mapping_at(maps, value)
            if target is None:
                out.append((name, "unreadable" if value else "unbound", ""))
            elif same_file(target.path, path):
                out.append((name, "unbound", target.path))
            else:
                out.append((name, "bound", target.path))
    return out


class _DlInfo(ctypes.Structure):
    _fields_ = [("dli_fname", ctypes.c_char_p), ("dli_fbase", ctypes.c_void_p),
                ("dli_sname", ctypes.c_char_p), ("dli_saddr", ctypes.c_void_p)]


def _dladdr_fn():
    for lib in (None, "libdl.so.2"):
        try:
            fn = ctypes.CDLL(lib).dladdr
            fn.argtypes = [ctypes.c_void_p, ctypes.POINTER(_DlInfo)]
            fn.restype = ctypes.c_int
            return fn
        except (OSError, AttributeError):
            continue
    return None


def dladdr_file(addr):
    fn = _dladdr_fn()
    info = _DlInfo()
    if fn is None or not fn(ctypes.c_void_p(addr), ctypes.byref(info)) or not info.dli_fname:
        return ""
    return info.dli_fname.decode(errors="replace")


def symbol_in(lib_path, name):
    """The address dlsym(handle of the loaded lib_path, name) gives (the lookup
    in that object and its dependencies), or None. Never loads lib_path anew."""
    mode = getattr(os, "RTLD_NOLOAD", 4) | getattr(os, "RTLD_LAZY", 1)
    try:
        handle = ctypes.CDLL(lib_path, mode=mode)
    except OSError:
        return None
    try:
        return ctypes.cast(getattr(handle, name), ctypes.c_void_p).value
    except AttributeError:
        return None


def global_symbol(name):
    """The address the process's global scope gives name (dlsym RTLD_DEFAULT), or None."""
    try:
        return ctypes.cast(getattr(ctypes.CDLL(None), name), ctypes.c_void_p).value
    except AttributeError:
        return None


# ------------------------------------------------------------- NCCL log

# mkccl: "comm 0x.. rank R nRanks N nNodes .. localRanks .. localRank .. - Init COMPLETE"
MK_COMPLETE = re.compile(r"comm (0x[0-9a-fA-F]+|\(nil\)) rank (\d+) nRanks (\d+) nNodes \d+ "
                         r"localRanks \d+ localRank \d+ - Init COMPLETE")
MK_START = re.compile(r"comm (0x[0-9a-fA-F]+|\(nil\)) rank (\d+) nRanks (\d+) .*- Init START")
MK_MANIFEST = re.compile(r"NCCL INFO Plugin: (default manifest |no .*using the embedded default manifest)")
# NVIDIA's NCCL: its banner, and "... comm 0x.. rank R nranks N cudaDev .. - Init COMPLETE".
NV_BANNER = re.compile(r"NCCL version \d+\.\d+\.\d+")
NV_COMPLETE = re.compile(r"comm (0x[0-9a-fA-F]+) rank (\d+) nranks (\d+)\b.*Init COMPLETE")


def log_path_for(pattern, pid=None):
    """The file NCCL_DEBUG_FILE=pattern names for process pid (%h host, %p pid)."""
    if not pattern:
        return None
    pid = os.getpid() if pid is None else pid
    host = socket.gethostname().split(".")[0]
    path = pattern.replace("%h", host).replace("%p", str(pid))
    if os.path.exists(path):
        return path
    hits = glob.glob(pattern.replace("%h", "*").replace("%p", str(pid)))
    return hits[0] if hits else path


def log_comms(text):
    """{'mkccl': [(rank, nranks)], 'nvidia': [(rank, nranks)], 'starts': n,
    'banner': bool, 'manifest': bool} from an NCCL log."""
    mk = [(int(m.group(2)), int(m.group(3))) for m in MK_COMPLETE.finditer(text)]
    nv = [(int(m.group(2)), int(m.group(3))) for m in NV_COMPLETE.finditer(text)]
    return {"mkccl": mk, "nvidia": nv, "starts": len(MK_START.findall(text)),
            "banner": bool(NV_BANNER.search(text)), "manifest": bool(MK_MANIFEST.search(text))}


def check_log(text, expected=()):
    """Problems (a list, empty when mkccl's log is complete) with a process's
    NCCL log: mkccl's manifest line, an Init COMPLETE for each (rank, nranks)
    in expected (each line used once), no communicator left started but not
    complete, and nothing NVIDIA's library writes."""
    c = log_comms(text)
    problems = []
    if not c["manifest"]:
        problems.append("no mkccl manifest line")
    left = list(c["mkccl"])
    for want in expected:
        if want in left:
            left.remove(want)
        else:
            problems.append("no mkccl Init COMPLETE for rank %d of %d" % want)
    if c["starts"] > len(c["mkccl"]):
        problems.append("%d Init START but %d Init COMPLETE" % (c["starts"], len(c["mkccl"])))
    if c["banner"]:
        problems.append("NVIDIA's 'NCCL version' banner")
    if c["nvidia"]:
        problems.append("%d NVIDIA-format Init COMPLETE lines" % len(c["nvidia"]))
    return problems


# ---------------------------------------------------------------- proof

def prove(user_lib, mkccl_lib, symbol="ncclAllReduce", log_text=None, expected_comms=(),
          maps=None):
    """Which libnccl.so.2 served this process, from (a) the symbol as
    user_lib (the library that calls NCCL: torch's libtorch_cuda.so) binds
    it: dlsym on its handle, its GOT slots for every nccl* import; (b) the
    global scope: mkcclInfoReport, which only mkccl exports; (c) the NCCL
    log when given. Returns {'verdict': 'mkccl' | 'nvidia' | 'unclear',
    'facts': [...], 'problems': [...], 'parts': {'binding': [...],
    'global': [...], 'log': [...]} (the problems of each), 'nvidia_file'}."""
    maps = maps if maps is not None else read_maps()
    facts = []
    parts = {"binding": [], "global": [], "log": []}
    nvidia_file = ""
    to_mk = 0

    def where(addr):
        m = mapping_at(maps, addr) if addr else None
        return m.path if m else ""

    def is_mk(path):
        return same_file(path, mkccl_lib)

    lib = os.path.basename(user_lib)
    addr = symbol_in(user_lib, symbol)
    via_handle = where(addr) if addr is not None else ""
    if addr is None:
        parts["binding"].append("dlsym(%s, %s) found nothing" % (lib, symbol))
    else:
        via_dladdr = dladdr_file(addr)
        facts.append("%s via %s's handle: %s" % (symbol, lib, via_handle))
        if via_dladdr and not same_file(via_dladdr, via_handle):
            parts["binding"].append("dladdr says %s, the maps %s" % (via_dladdr, via_handle))
        if not is_mk(via_handle):
            parts["binding"].append("%s resolves in %s, not mkccl's %s" % (symbol, via_handle or "?", mkccl_lib))
            nvidia_file = via_handle
    try:
        binds = got_bindings(user_lib, "nccl", maps)
        bound = [b for b in binds if b[1] == "bound"]
        to_mk = sum(1 for b in bound if is_mk(b[2]))
        foreign = sorted({"%s -> %s" % (n, p) for n, s, p in bound if not is_mk(p)})
        facts.append("%s GOT: %d nccl* slots, %d bound, all bound ones in mkccl: %s" % (
            lib, len(binds), len(bound), "yes" if not foreign else "no"))
        if foreign:
            parts["binding"].append("GOT slots bound elsewhere: " + "; ".join(foreign[:6]))
            nvidia_file = nvidia_file or foreign[0].split(" -> ", 1)[1]
    except (OSError, ValueError) as e:
        facts.append("GOT not read: %s" % e)
    gaddr = global_symbol(symbol)
    if gaddr is not None:
        facts.append("%s in the global scope: %s" % (symbol, where(gaddr)))
        if not is_mk(where(gaddr)):
            parts["global"].append("global %s in %s" % (symbol, where(gaddr)))
    info = global_symbol("mkcclInfoReport")
    if info is None:
        parts["global"].append("mkcclInfoReport not in the global scope")
    else:
        facts.append("mkcclInfoReport: %s" % where(info))
        if not is_mk(where(info)):
            parts["global"].append("mkcclInfoReport in %s" % where(info))
    others = [p for p in mapped_nccl_files(maps) if not is_mk(p)]
    if others:
        facts.append("also mapped, serving nothing checked above unless named: " + ", ".join(others))
    if log_text is not None:
        c = log_comms(log_text)
        facts.append("log: %d mkccl Init COMPLETE, %d NVIDIA-format, banner %s" % (
            len(c["mkccl"]), len(c["nvidia"]), "yes" if c["banner"] else "no"))
        parts["log"] = check_log(log_text, expected_comms)
    problems = parts["binding"] + parts["global"] + ["log: " + p for p in parts["log"]]
    if not problems:
        verdict = "mkccl"
    elif (os.path.basename(nvidia_file).startswith("libnccl") and not is_mk(via_handle) and not to_mk
          and info is None):
        verdict = "nvidia"  # another libnccl.so.2 served and no sign of mkccl
    else:
        verdict = "unclear"
    return {"verdict": verdict, "facts": facts, "problems": problems, "parts": parts,
            "nvidia_file": nvidia_file}


# --------------------------------------------------------------- misc

def store_barrier(store, key, nranks, limit_s=60):
    """Every rank reached key (through the store, not NCCL); False on timeout."""
    store.add(key, 1)
    end = time.monotonic() + limit_s
    while store.add(key, 0) < nranks:
        if time.monotonic() > end:
            return False
        time.sleep(0.01)
    return True


def write_pid(pid_dir):
    """Leaves this process's id where the shell side can end it by id."""
    if pid_dir:
        try:
            os.makedirs(pid_dir, exist_ok=True)
            open(os.path.join(pid_dir, str(os.getpid())), "w").close()
        except OSError:
            pass
