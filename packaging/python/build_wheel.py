#!/usr/bin/env python3
"""Builds mkccl's Python wheel from an install prefix, with the standard library only.

  build_wheel.py --prefix PREFIX --version X.Y.Z --out DIR

PREFIX is a `cmake --install` of mkccl. The wheel holds the `mkccl` package
(this folder), libnccl.so.2 with the shipped plugins and manifest under
mkccl/lib, the tools under mkccl/bin, and the two run-time libraries a
machine with PyTorch may lack (libyaml, hwloc), found by libnccl.so.2 through
its run path ($ORIGIN). Prints the wheel's path.
"""
import argparse
import base64
import hashlib
import os
import platform
import re
import subprocess
import sys
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
TOOLS = ["mkccl-info", "mkccl-run", "mkccl-perf", "mkccl-netcheck"]
BUNDLED = ["libyaml-0.so.2", "libhwloc.so.15"]
ENTRY_POINTS = {
    "mkccl-exec": "mkccl._launch:exec_main",
    "mkccl-info": "mkccl._launch:info_main",
    "mkccl-run": "mkccl._launch:run_main",
    "mkccl-perf": "mkccl._launch:perf_main",
    "mkccl-netcheck": "mkccl._launch:netcheck_main",
}


def fail(msg):
    print("build_wheel: " + msg, file=sys.stderr)
    sys.exit(1)


def needed_paths(lib):
    """Resolved paths of lib's dependencies, by soname (ldd)."""
    out = subprocess.run(["ldd", lib], capture_output=True, text=True, check=True).stdout
    found = {}
    for line in out.splitlines():
        m = re.match(r"\s*(\S+) => (\S+)", line)
        if m:
            found[m.group(1)] = m.group(2)
    return found


def run_path(elf):
    out = subprocess.run(["readelf", "-d", elf], capture_output=True, text=True, check=True).stdout
    m = re.search(r"\((?:RUNPATH|RPATH)\)\s+Library (?:runpath|rpath): \[(.*)\]", out)
    return m.group(1) if m else ""


def collect(prefix):
    """(archive name, source path) pairs of the package's files."""
    libdir = next((os.path.join(prefix, d) for d in ("lib", "lib64") if os.path.exists(os.path.join(prefix, d, "libnccl.so.2"))), None)
    if not libdir:
        fail("no lib/libnccl.so.2 under %s (run cmake --install first)" % prefix)
    nccl = os.path.join(libdir, "libnccl.so.2")
    if "$ORIGIN" not in run_path(nccl):
        fail("%s has no $ORIGIN run path: the bundled libraries would not be found" % nccl)
    files = []
    for name in sorted(os.listdir(HERE + "/mkccl")):
        if name.endswith(".py"):
            files.append(("mkccl/" + name, os.path.join(HERE, "mkccl", name)))
    files.append(("mkccl/lib/libnccl.so.2", os.path.realpath(nccl)))
    deps = needed_paths(nccl)
    for so in BUNDLED:
        if so not in deps:
            fail("%s does not need %s (found: %s)" % (nccl, so, ", ".join(sorted(deps))))
        files.append(("mkccl/lib/" + so, os.path.realpath(deps[so])))
    plugdir = os.path.join(libdir, "mkccl")
    if not os.path.exists(os.path.join(plugdir, "manifest.yaml")):
        fail("no manifest.yaml in %s" % plugdir)
    for name in sorted(os.listdir(plugdir)):
        if name.endswith(".so") or name == "manifest.yaml":
            files.append(("mkccl/lib/mkccl/" + name, os.path.join(plugdir, name)))
    for tool in TOOLS:
        path = os.path.join(prefix, "bin", tool)
        if not os.path.exists(path):
            fail("no %s under %s/bin" % (tool, prefix))
        files.append(("mkccl/bin/" + tool, path))
        for so, dep in needed_paths(path).items():
            if so.startswith("libmkccl") and ("mkccl/lib/" + so) not in dict(files):
                files.append(("mkccl/lib/" + so, os.path.realpath(dep)))
    return files


def record_line(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return "%s,sha256=%s,%d" % (name, digest, len(data))


def main():
    ap = argparse.ArgumentParser(description="Builds mkccl's wheel from an install prefix.")
    ap.add_argument("--prefix", required=True)
    ap.add_argument("--version", required=True)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    tag = "py3-none-linux_" + platform.machine()
    distinfo = "mkccl-%s.dist-info" % args.version
    meta = {
        distinfo + "/METADATA": "Metadata-Version: 2.1\nName: mkccl\nVersion: %s\n"
        "Summary: mkccl, an NCCL-compatible collective library: libnccl.so.2 for PyTorch and CuPy\n"
        "Requires-Python: >=3.8\n" % args.version,
        distinfo + "/WHEEL": "Wheel-Version: 1.0\nGenerator: mkccl build_wheel.py\nRoot-Is-Purelib: false\nTag: %s\n" % tag,
        distinfo + "/entry_points.txt": "[console_scripts]\n" + "".join("%s = %s\n" % kv for kv in sorted(ENTRY_POINTS.items())),
        distinfo + "/top_level.txt": "mkccl\n",
    }
    os.makedirs(args.out, exist_ok=True)
    wheel = os.path.join(args.out, "mkccl-%s-%s.whl" % (args.version, tag))
    records = []
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as z:
        for name, src in collect(args.prefix):
            with open(src, "rb") as f:
                data = f.read()
            info = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            # A regular file (S_IFREG) with its mode: pip keeps the executable bit only so.
            info.external_attr = (0o100755 if os.access(src, os.X_OK) and not name.endswith(".py") else 0o100644) << 16
            z.writestr(info, data)
            records.append(record_line(name, data))
        for name, text in meta.items():
            data = text.encode()
            z.writestr(zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0)), data)
            records.append(record_line(name, data))
        records.append(distinfo + "/RECORD,,")
        z.writestr(zipfile.ZipInfo(distinfo + "/RECORD", date_time=(2020, 1, 1, 0, 0, 0)), "\n".join(records) + "\n")
    print(wheel)


if __name__ == "__main__":
    main()
