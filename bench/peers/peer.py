#!/usr/bin/env python3
"""peer.py HEAP_MIB N TARGET: the Python peer of `forkless bench peers`.

Allocates and touches a heap of HEAP_MIB MiB (a bytearray, one write every
4096 bytes), spawns and waits for TARGET with subprocess.run() 3 times
untimed, then N times timed. Prints "# version python X.Y.Z", then one line
per timed spawn: its microseconds."""
import platform
import subprocess
import sys
import time


def main():
    if len(sys.argv) != 4:
        sys.stderr.write("usage: peer.py HEAP_MIB N TARGET\n")
        return 2
    mib, n, target = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    heap = bytearray(mib << 20)
    for i in range(0, len(heap), 4096):
        heap[i] = 1
    for _ in range(3):
        subprocess.run([target], check=True)
    out = ["# version python %s" % platform.python_version()]
    for _ in range(n):
        t0 = time.perf_counter_ns()
        subprocess.run([target], check=True)
        t1 = time.perf_counter_ns()
        out.append("%.3f" % ((t1 - t0) / 1e3))
    sys.stdout.write("\n".join(out) + "\n")
    del heap
    return 0


if __name__ == "__main__":
    sys.exit(main())
