"""Run `python -m carebench.cli ARGS…` as a user would, and write the process's own peak memory (VmHWM) to PEAK_FILE.

    python tests/cli_peak.py PEAK_FILE ARGS…

Why not the parent's `wait4`: a child's `ru_maxrss` carries the high-water mark of the process it was spawned from (with
vfork the child runs on its parent's memory until it execs; some kernels also copy the figure on fork), so a test process
that once held 2 GB would see every command it starts "peak at 2 GB". VmHWM belongs to the command's own address space."""
import runpy
import sys


def peak_bytes() -> int:
    "This process's peak resident memory in bytes (VmHWM of /proc/self/status; 0 where there is none)."
    try:
        with open("/proc/self/status") as f:
            return next((int(l.split()[1]) * 1024 for l in f if l.startswith("VmHWM:")), 0)
    except OSError: return 0


if __name__ == "__main__":
    peak_file, sys.argv = sys.argv[1], ["carebench", *sys.argv[2:]]
    try: runpy.run_module("carebench.cli", run_name="__main__", alter_sys=True)   # what `python -m carebench.cli` does
    finally:
        with open(peak_file, "w") as f: f.write(str(peak_bytes()))
