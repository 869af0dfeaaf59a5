"""The hostile-input corpus (tests/hostile_corpus.py) through the command line: every case ends with its expected exit code,
one error line that names the place, no traceback, no secret echoed, within 30 s and 1 GB.

Each case runs in a process of its own. The cases that set environment variables, and every 20th other case, run as a user
runs them (`python -m carebench.cli …`, a fresh interpreter); the others run in a child forked from one process that has
already imported the package (tests/cli_zygote.py), which spares ~1 s of interpreter start and imports per case."""
import hashlib
import json
import os
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

import hostile_corpus
from conftest import ROOT

LIMIT_S, LIMIT_RSS = 30, 1 << 30


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    from carebench.adapters.load import load_dataset
    from carebench.core.config import load_config
    from carebench.evaluation.scores import planted_scores
    tmp = tmp_path_factory.mktemp("hostile")
    base = hostile_corpus.write_dataset(tmp / "scores_base")
    planted_scores(load_dataset(load_config(base))).to_csv(tmp / "good_scores.csv", index=False)
    return hostile_corpus.build(tmp, tmp / "good_scores.csv")


def _digest(case):
    return hashlib.sha256(case.unchanged.read_bytes()).hexdigest() if case.unchanged else None


def _run_case(case, env, peak_file):
    "Run one case in a fresh interpreter under a wall-clock limit; its peak memory as it measured it (tests/cli_peak.py)."
    cmd = [sys.executable, str(ROOT / "tests" / "cli_peak.py"), str(peak_file), *map(str, case.args)]
    p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT, env={**env, **case.env})
    t0 = time.time()
    out, err = [], []
    readers = [threading.Thread(target=lambda s, b: b.append(s.read()), args=(p.stdout, out)),
               threading.Thread(target=lambda s, b: b.append(s.read()), args=(p.stderr, err))]
    for r in readers: r.start()
    timer = threading.Timer(LIMIT_S, p.kill); timer.start()
    _, status, usage = os.wait4(p.pid, 0)
    timer.cancel()
    for r in readers: r.join()
    return dict(code=os.waitstatus_to_exitcode(status), out=out[0].decode("utf-8", "replace"), err=err[0].decode("utf-8", "replace"),
                seconds=time.time() - t0, rss=_peak(peak_file, usage))


def _peak(peak_file, usage) -> int:
    "The peak the command wrote for itself; wait4's figure (an upper bound) where it wrote none (killed at the limit)."
    try: return int(peak_file.read_text())
    except (OSError, ValueError): return usage.ru_maxrss * 1024


def _run_forked(cases, env, folder):
    "Run cases in children of one process that has imported the package (tests/cli_zygote.py); results as `_run_case`'s."
    jobs = [dict(args=list(map(str, c.args)), cwd=str(ROOT), env={**env, **c.env}, stdout=str(folder / f"{i}.out"),
                 stderr=str(folder / f"{i}.err")) for i, c in enumerate(cases)]
    (folder / "jobs.json").write_text(json.dumps(jobs))
    subprocess.run([sys.executable, str(ROOT / "tests" / "cli_zygote.py"), folder / "jobs.json", folder / "results.json", str(LIMIT_S)],
                   stdin=subprocess.DEVNULL, cwd=ROOT, env=env, check=True, timeout=LIMIT_S * len(cases) + 60)
    results = json.loads((folder / "results.json").read_text())
    for job, r in zip(jobs, results):
        r.update(out=open(job["stdout"], "rb").read().decode("utf-8", "replace"), err=open(job["stderr"], "rb").read().decode("utf-8", "replace"))
    return results


def _problems(case, r) -> list:
    found = []
    if r["code"] != case.code: found.append(f"exit code {r['code']}, expected {case.code}")
    if r["seconds"] > LIMIT_S: found.append(f"took {r['seconds']:.1f} s")
    if r["rss"] > LIMIT_RSS: found.append(f"peak memory {r['rss'] / 2 ** 20:.0f} MiB")
    if "Traceback" in r["err"] + r["out"]: found.append("a traceback")
    for secret in case.forbid:
        if secret in r["err"] + r["out"]: found.append(f"echoed {secret!r}")
    if not r["unchanged"]: found.append(f"modified {case.unchanged}")
    if case.code == 2:
        lines = [l for l in r["err"].splitlines() if l.strip()]
        if len(lines) != 1 or not lines[0].startswith("error: "): found.append(f"not one error line: {lines[:3]}")
        elif case.expect not in lines[0]: found.append(f"{case.expect!r} not in {lines[0][:400]!r}")
    return found


def test_every_hostile_input_ends_cleanly(corpus, tmp_path):
    env = {**os.environ, "CAREBENCH_CACHE": str(tmp_path / "cache.sqlite"), "CAREBENCH_EMBEDDINGS": str(tmp_path / "emb.sqlite"),
           "PYTHONHASHSEED": "0"}
    env.pop("CB_ABSENT_VAR", None)
    assert len(corpus) >= 60 and len({c.name for c in corpus}) == len(corpus)
    if os.environ.get("CAREBENCH_HOSTILE_ONLY"):               # a developer's shortcut: only the cases whose name starts so
        corpus = [c for c in corpus if c.name.startswith(tuple(os.environ["CAREBENCH_HOSTILE_ONLY"].split(",")))]
    before = [_digest(c) for c in corpus]
    fresh = [i for i, c in enumerate(corpus) if c.env or i % 20 == 0]
    forked = [i for i in range(len(corpus)) if i not in set(fresh)]
    (tmp_path / "forked").mkdir()
    results = dict(zip(forked, _run_forked([corpus[i] for i in forked], env, tmp_path / "forked")))
    with ThreadPoolExecutor(2) as ex: results.update(zip(fresh, ex.map(lambda i: _run_case(corpus[i], env, tmp_path / f"{i}.peak"), fresh)))
    results = [{**results[i], "unchanged": before[i] == _digest(c)} for i, c in enumerate(corpus)]
    failures = {c.name: (p, r["err"][-600:]) for c, r in zip(corpus, results) if (p := _problems(c, r))}
    slowest = max(results, key=lambda r: r["seconds"]); largest = max(r["rss"] for r in results)
    print(f"{len(corpus)} hostile inputs ({len(fresh)} in a fresh interpreter); slowest {slowest['seconds']:.1f} s; largest peak memory {largest / 2 ** 20:.0f} MiB")
    assert not failures, "\n".join(f"{n}: {p}\n    {e}" for n, (p, e) in failures.items())
