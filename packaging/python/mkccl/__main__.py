"""python -m mkccl COMMAND [ARGS...]: the same as mkccl-exec."""
import sys

from mkccl._launch import exec_main

if __name__ == "__main__":
    sys.exit(exec_main(sys.argv[1:]))
