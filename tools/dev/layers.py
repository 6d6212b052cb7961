#!/usr/bin/env python3
"""Checks the layering of the tree from its #include lines and names.

The layers, bottom up: common/ (code the core and the plugins share),
device/common/ (what the planner and both executors share), kernel-core/,
device/cuda and device/host (the executors, reached through
kernel-core/exec/exec.h), plugins/ (reached through their ABIs alone).

Run from anywhere: tools/dev/layers.py [ROOT]. Prints one line per breach
(file:line: rule: what) and exits 1 if there is any, 0 if none.
"""
import os
import re
import sys

ROOT = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", ".."))
SOURCES = (".c", ".h", ".cu", ".cuh", ".def")
INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')
COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)


def files_under(rel):
    top = os.path.join(ROOT, rel)
    for d, _, names in os.walk(top):
        for n in sorted(names):
            if n.endswith(SOURCES):
                yield os.path.relpath(os.path.join(d, n), ROOT)


def includes(path):
    with open(os.path.join(ROOT, path), encoding="utf-8", errors="replace") as f:
        for no, line in enumerate(f, 1):
            m = INCLUDE.match(line)
            if m:
                yield no, m.group(1)


def code_lines(path):
    """The file's lines with comments blanked (line numbers kept)."""
    with open(os.path.join(ROOT, path), encoding="utf-8", errors="replace") as f:
        text = f.read()
    text = COMMENT.sub(lambda m: "\n" * m.group(0).count("\n"), text)
    return enumerate(text.split("\n"), 1)


def resolves(path, inc, dirs):
    """Whether inc names a file in the including file's folder or one of dirs."""
    here = os.path.dirname(os.path.join(ROOT, path))
    if os.path.exists(os.path.join(here, inc)):
        return True
    return any(os.path.exists(os.path.join(ROOT, d, inc)) for d in dirs)


def plugin_folders():
    top = os.path.join(ROOT, "plugins")
    return sorted(n for n in os.listdir(top) if os.path.isdir(os.path.join(top, n)))


def kind_names():
    """The plugin kinds' names (kernel-core/plugin/kind.c): a plugin folder may bear its kind's."""
    with open(os.path.join(ROOT, "kernel-core", "plugin", "kind.c"), encoding="utf-8") as f:
        return set(re.findall(r'\{PLUGIN_KIND_[A-Z_]+,\s*"([a-z-]+)"', f.read()))


def declared_params(top, macro):
    """Parameter names declared in the .def tables under top, by macro (a regex)."""
    names = set()
    decl = re.compile(r"^\s*" + macro + r"\(\s*((?:NCCL|MKCCL)_[A-Z0-9_]+)\s*,")
    for f in files_under(top):
        if f.endswith(".def"):
            for _, line in code_lines(f):
                m = decl.match(line)
                if m:
                    names.add(m.group(1))
    return names


def check():
    bad = []

    def breach(path, no, rule, what):
        bad.append(f"{path}:{no}: {rule}: {what}")

    for f in files_under("kernel-core"):
        for no, inc in includes(f):
            if inc.startswith(("device/cuda/", "device/host/")):
                breach(f, no, "the core reaches the executors through exec/exec.h only", inc)
            if inc.startswith("plugins/") or inc.startswith("../"):
                breach(f, no, "the core includes no plugin or relative path", inc)
        module = f.split("/")[1]
        if module in ("comm", "dp"):
            for no, inc in includes(f):
                if inc.startswith("plan/"):
                    breach(f, no, f"{module}/ does not depend on the planner", inc)

    for f in files_under("device/common"):
        for no, inc in includes(f):
            if not inc.startswith("device/common/"):
                breach(f, no, "device/common includes nothing above it", inc)

    for f in files_under("common"):
        for no, inc in includes(f):
            if not resolves(f, inc, ["common", "abi", "include"]):
                breach(f, no, "common/ includes only common/, abi/ and include/", inc)

    for p in plugin_folders():
        for f in files_under(os.path.join("plugins", p)):
            for no, inc in includes(f):
                if not resolves(f, inc, [os.path.join("plugins", p), "common", "abi", "include"]):
                    breach(f, no, "a plugin includes only its folder, common/, abi/ and include/", inc)

    names = [n for n in plugin_folders() if n not in kind_names()]
    literal = re.compile(r'"(' + "|".join(re.escape(n) for n in names) + r')"')
    own = declared_params("kernel-core", "MK_PARAM")
    # Bounded by anything but capitals and digits: param_NCCL_X() names NCCL_X.
    theirs = re.compile(r"(?<![A-Z0-9])(" + "|".join(sorted(declared_params("plugins", "[A-Z_]+") - own)) + r")(?![A-Z0-9_])")
    for top in ("kernel-core", "device", "common"):
        for f in files_under(top):
            for no, line in code_lines(f):
                m = literal.search(line)
                if m:
                    breach(f, no, "the core names no plugin", m.group(1))
                m = theirs.search(line)
                if m:
                    breach(f, no, "the core reads no plugin's parameter", m.group(1))
    return bad


def main():
    bad = check()
    for line in bad:
        print(line)
    print(f"layers: {len(bad)} breach(es)" if bad else "layers: ok")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
