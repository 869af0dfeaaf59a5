"""How long the test command takes (issue 31). Not a test: it runs `bash .ci/test` once and prints figures.

Each step of the test command (the package check, the notebook check, nbdev_test, pytest) is timed from the moment its
`== ` header appears to the next one; the CPU seconds are those of every process the command started (user + system). The
figures depend on the machine: the number of cores, what else runs on it (the load average before and after is printed),
and whether the caches under ~/.cache/carebench are warm (the first run after an installation fills them).

    python bench/test_command.py                      # prints a table
    python bench/test_command.py --json figures.json  # also writes the figures
    (the command's whole output goes to test_command.log, or --log FILE)
"""
import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def run_test_command(log=None) -> dict:
    """Run `bash .ci/test` in the repository; wall seconds per step, total wall and CPU seconds, exit code, pytest's closing line.
    `log`: a file that receives the command's whole output."""
    steps, current, t0 = [], None, time.perf_counter()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    load_before = os.getloadavg()
    p = subprocess.Popen(["bash", ".ci/test"], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1)
    last, sink = "", open(log, "w") if log else None
    for line in p.stdout:
        if sink: sink.write(line)
        now = time.perf_counter() - t0
        if line.startswith("== "):
            if current: current["seconds"] = now - current["start"]
            current = {"step": line[3:].strip(), "start": now}
            steps.append(current)
        if line.strip(): last = line.strip()
    code = p.wait()
    if sink: sink.close()
    total = time.perf_counter() - t0
    if current: current["seconds"] = total - current["start"]
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"exit_code": code, "wall_s": round(total, 1), "cpu_s": round(cpu, 1), "cores": os.cpu_count(),
            "load_before": [round(x, 2) for x in load_before], "load_after": [round(x, 2) for x in os.getloadavg()],
            "steps": [{"step": s["step"], "seconds": round(s["seconds"], 1)} for s in steps], "last_line": last,
            "python": platform.python_version(), "when": time.strftime("%Y-%m-%d %H:%M:%S")}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", help="also write the figures to this file")
    ap.add_argument("--log", default="test_command.log", help="the test command's whole output (default: test_command.log)")
    a = ap.parse_args(argv)
    r = run_test_command(a.log)
    for s in r["steps"]: print(f"{s['seconds']:8.1f} s  {s['step']}")
    print(f"{r['wall_s']:8.1f} s  in all ({r['wall_s'] / 60:.1f} minutes; {r['cpu_s'] / 60:.1f} CPU-minutes on {r['cores']} cores; "
          f"load average {r['load_before'][0]} before, {r['load_after'][0]} after)")
    print(f"exit code {r['exit_code']}; last line: {r['last_line']}")
    if a.json: Path(a.json).write_text(json.dumps(r, indent=1) + "\n")
    return 0 if r["exit_code"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
