"""The console scripts: mkccl-exec and the packaged tools."""
import os
import sys

from mkccl import BIN_DIR, library_path

_EXEC_USAGE = """usage: mkccl-exec COMMAND [ARGS...]
Runs COMMAND, and every process it starts, on mkccl's libnccl.so.2 (preloaded).
  mkccl-exec torchrun --nproc-per-node 8 train.py
  mkccl-exec --lib    prints the library's path"""


def exec_main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] in ("-h", "--help"):
        print(_EXEC_USAGE, file=sys.stderr)
        return 2
    lib = library_path()
    if not os.path.exists(lib):
        print("mkccl-exec: mkccl's library is not at %s" % lib, file=sys.stderr)
        return 127
    if argv[0] == "--lib":
        print(lib)
        return 0
    old = os.environ.get("LD_PRELOAD")
    os.environ["LD_PRELOAD"] = lib + (":" + old if old else "")
    try:
        os.execvp(argv[0], argv)
    except OSError as e:
        print("mkccl-exec: cannot run %s: %s" % (argv[0], e.strerror), file=sys.stderr)
        return 127


def _tool(name):
    path = os.path.join(BIN_DIR, name)
    try:
        os.execv(path, [path] + sys.argv[1:])
    except OSError as e:
        print("%s: cannot run %s: %s" % (name, path, e.strerror), file=sys.stderr)
        return 127


def info_main():
    return _tool("mkccl-info")


def run_main():
    return _tool("mkccl-run")


def perf_main():
    return _tool("mkccl-perf")


def netcheck_main():
    return _tool("mkccl-netcheck")
