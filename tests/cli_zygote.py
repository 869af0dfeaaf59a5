"""Run many `carebench` command lines, each in a process of its own, without paying for the interpreter and the package
imports every time: one process imports them once, then forks a child per command line. A child is what a fresh
`carebench` process would be after its imports: its own working folder, environment, stdin (/dev/null), stdout and stderr
(files), exit code, and peak memory (its own high-water mark, tests/cli_peak.py); an exception that escapes `main` prints its traceback and exits 1, as the
interpreter would. Two children run at a time; one that outlives the limit is killed.

    python tests/cli_zygote.py JOBS.json RESULTS.json LIMIT_S

JOBS.json: a list of {"args", "cwd", "env", "stdout", "stderr"}; RESULTS.json: a list of {"code", "seconds", "rss"} in the
same order. The parent never runs a command itself, so nothing one command does reaches another."""
import importlib
import json
import os
import signal
import sys
import time

from cli_peak import peak_bytes

# what nearly every command imports (torch is not among them: a child that needs it imports it after the fork)
PRELOAD = ("numpy", "pandas", "pyarrow", "scipy.stats", "yaml", "carebench.cli", "carebench.core.config", "carebench.adapters.load",
           "carebench.evaluation.scores", "carebench.stats.endpoints", "carebench.tracks.runner", "carebench.evaluation.analyze",
           "carebench.evaluation.shift")


def _child(job: dict) -> int:
    "In the forked child: become the command line of `job` and run it; returns the exit code."
    null = os.open(os.devnull, os.O_RDONLY)
    out = os.open(job["stdout"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    err = os.open(job["stderr"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    for src, dst in ((null, 0), (out, 1), (err, 2)): os.dup2(src, dst)
    os.chdir(job["cwd"])
    os.environ.clear(); os.environ.update(job["env"])
    sys.argv = ["carebench", *job["args"]]
    signal.signal(signal.SIGTERM, signal.SIG_DFL); signal.signal(signal.SIGINT, signal.default_int_handler)
    from carebench.cli import main
    try: code = main(job["args"])
    except SystemExit as e: code = e.code if isinstance(e.code, int) else (0 if e.code is None else (print(e.code, file=sys.stderr) or 1))
    except BaseException:
        import traceback
        traceback.print_exc(); code = 1
    for s in (sys.stdout, sys.stderr):
        try: s.flush()
        except Exception: pass
    return code or 0


def _peak(job: dict, usage) -> int:
    "The peak the child wrote for itself; wait4's figure (an upper bound) where it wrote none (killed at the limit)."
    try:
        with open(job["stderr"] + ".peak") as f: return int(f.read())
    except (OSError, ValueError): return usage.ru_maxrss * 1024


def run_all(jobs: list, limit_s: float, parallel: int = 2) -> list:
    "Fork a child per job (at most `parallel` at a time); the result of each in the order of `jobs`."
    results, running, queue = [None] * len(jobs), {}, list(enumerate(jobs))
    while queue or running:
        while queue and len(running) < parallel:
            i, job = queue.pop(0)
            sys.stdout.flush(); sys.stderr.flush()
            pid = os.fork()
            if pid == 0:
                code = 1
                try: code = _child(job)
                finally:
                    try:
                        with open(job["stderr"] + ".peak", "w") as f: f.write(str(peak_bytes()))
                    finally: os._exit(code)
            running[pid] = (i, time.time())
        pid, status, usage = os.wait4(-1, os.WNOHANG)
        if pid == 0:
            now = time.time()
            for p, (i, t0) in running.items():
                if now - t0 > limit_s:
                    try: os.kill(p, signal.SIGKILL)
                    except ProcessLookupError: pass
            time.sleep(0.005)
            continue
        i, t0 = running.pop(pid)
        results[i] = {"code": os.waitstatus_to_exitcode(status), "seconds": time.time() - t0, "rss": _peak(jobs[i], usage)}
    return results


if __name__ == "__main__":
    jobs_file, results_file, limit = sys.argv[1], sys.argv[2], float(sys.argv[3])
    for name in PRELOAD: importlib.import_module(name)
    with open(jobs_file) as f: jobs = json.load(f)
    with open(results_file, "w") as f: json.dump(run_all(jobs, limit), f)
