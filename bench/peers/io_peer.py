#!/usr/bin/env python3
"""io_peer.py MIB N WRITER: the Python peer of `forkless bench io`.

Runs WRITER MIB with subprocess.run(capture_output=True) once untimed, then
N times timed, checking that MIB MiB came back each time. Prints
"# version python X.Y.Z", then one line per timed capture: its
microseconds."""
import platform
import subprocess
import sys
import time


def capture(writer, mib):
    r = subprocess.run([writer, str(mib)], capture_output=True, check=True)
    if len(r.stdout) != mib << 20:
        sys.stderr.write("io_peer.py: got %d bytes, want %d\n" % (len(r.stdout), mib << 20))
        sys.exit(1)


def main():
    if len(sys.argv) != 4:
        sys.stderr.write("usage: io_peer.py MIB N WRITER\n")
        return 2
    mib, n, writer = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    capture(writer, mib)
    out = ["# version python %s" % platform.python_version()]
    for _ in range(n):
        t0 = time.perf_counter_ns()
        capture(writer, mib)
        t1 = time.perf_counter_ns()
        out.append("%.3f" % ((t1 - t0) / 1e3))
    sys.stdout.write("\n".join(out) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
