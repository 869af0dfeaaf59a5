"""The reasoning track end to end as users run it: the quickstart, crash safety, a shared cache, the tiny local model through the
transformers backend and through a real `transformers serve` process, and the remote-endpoint refusal."""
import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import pandas as pd
import pytest
import yaml

from conftest import EXAMPLE, run_cli

DATASET = {"adapter": "paired_context", "path": str(EXAMPLE / "dataset.xlsx"), "snapshots": str(EXAMPLE / "snapshots.json")}


def write_config(folder: Path, models, **reasoning) -> Path:
    cfg = {"dataset": DATASET, "seed": 7, "reasoning": {"models": models, **reasoning}, "run": {"out": str(folder / "runs")}}
    (folder / "config.yaml").write_text(yaml.safe_dump(cfg))
    return folder / "config.yaml"


def test_emulate_adds_the_emulated_reference_to_a_finished_run(tmp_path):
    cfg = write_config(tmp_path, [{"id": "mock", "backend": "dry_run", "rater_noise": 0.02}],
                       emulation={"raters": [{"id": "gp", "persona": "You are a general practitioner."},
                                             {"id": "psy", "persona": "You are a psychiatrist."}]})
    env = {"CAREBENCH_CACHE": str(tmp_path / "c.sqlite")}
    assert run_cli("run", cfg, "--out", tmp_path / "run", "--quiet", "--no-report", "--track", "reasoning", "--no-validity", env=env).returncode == 0
    r = run_cli("emulate", cfg, "--run", tmp_path / "run", "--quiet", "--no-report", env=env)
    assert r.returncode == 0, r.stderr
    assert "gp: alternative-annotator test passed" in r.stdout and "480 calls (0 from the cache)" in r.stdout, r.stdout
    index = json.loads((tmp_path / "run/artifact_index.json").read_text())
    assert {"emulation", "emulated_labels", "emulated_reference", "emulation_agreement", "alternative_annotator", "emulation_endpoints"} <= set(index)
    ends = pd.read_csv(tmp_path / "run/emulation_endpoints.csv")
    assert set(ends["reference"]) == {"human", "emulated"} and set(ends["model"]) == {"mock"}
    from carebench.report.pages import load_run
    from carebench.report.site import page_plan
    assert "emulation" in [p.name for p in page_plan(load_run(tmp_path / "run"))]
    again = run_cli("emulate", cfg, "--out", tmp_path / "alone", "--quiet", env=env)          # a folder of its own; nothing asked twice
    assert again.returncode == 0 and "480 calls (480 from the cache)" in again.stdout, again.stdout
    both = run_cli("emulate", cfg, "--quiet", env=env)
    assert both.returncode == 2 and "--run" in both.stderr                                  # one of --run and --out is required


def _scores(run: Path) -> pd.DataFrame:
    df = pd.read_csv(run / "scores.csv", dtype=str, keep_default_na=False)
    return df.sort_values(list(df.columns)).reset_index(drop=True)


def test_a_killed_run_resumes_without_repeating_finished_calls(tmp_path):
    log = tmp_path / "calls.log"
    model = {"id": "slow-mock", "backend": "dry_run", "delay_s": 0.15, "call_log": str(log), "malformed_rate": 0.05}
    cfg = write_config(tmp_path, [model], batch_size=10)
    cache = tmp_path / "cache.sqlite"
    exe = [sys.executable, "-m", "carebench.cli", "run", str(cfg), "--cache", str(cache), "--quiet"]
    exe.append("--no-report")
    proc = subprocess.Popen(exe + ["--out", str(tmp_path / "killed")])
    deadline = time.time() + 60
    while time.time() < deadline and (not log.exists() or len(log.read_text().splitlines()) < 60):
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL); proc.wait()
    done_before = {k for (k,) in sqlite3.connect(cache).execute("SELECT key FROM responses WHERE status = 'done'")}
    assert 0 < len(done_before) < 360, len(done_before)
    n_before = len(log.read_text().splitlines())
    assert subprocess.run(exe + ["--out", str(tmp_path / "resumed")]).returncode == 0
    asked_after = set(log.read_text().splitlines()[n_before:])
    assert not asked_after & done_before                                     # no finished entry asked again
    (tmp_path / "fresh").mkdir()
    fresh = write_config(tmp_path / "fresh", [{**model, "delay_s": 0.0, "call_log": None}])
    r = run_cli("run", fresh, "--out", tmp_path / "fresh_run", "--cache", tmp_path / "fresh.sqlite", "--quiet", "--no-report")
    assert r.returncode == 0, r.stderr
    pd.testing.assert_frame_equal(_scores(tmp_path / "resumed"), _scores(tmp_path / "fresh_run"))


def test_four_processes_share_one_cache_and_split_its_work(tmp_path):
    """N processes on one cache ask about as many questions as one (leases), with the same results and an intact cache."""
    one_log, four_log = tmp_path / "one.log", tmp_path / "four.log"
    (tmp_path / "one").mkdir()
    one = write_config(tmp_path / "one", [{"id": "mock", "backend": "dry_run", "delay_s": 0.05, "call_log": str(one_log)}], batch_size=5)
    r = run_cli("run", one, "--cache", tmp_path / "one.sqlite", "--quiet", "--no-report", "--out", tmp_path / "single")
    assert r.returncode == 0, r.stderr
    cfg = write_config(tmp_path, [{"id": "mock", "backend": "dry_run", "delay_s": 0.05, "call_log": str(four_log)}], batch_size=5)
    cache = tmp_path / "cache.sqlite"
    procs = [subprocess.Popen([sys.executable, "-m", "carebench.cli", "run", str(cfg), "--cache", str(cache), "--quiet", "--no-report",
                               "--out", str(tmp_path / f"run{i}")], stderr=subprocess.PIPE, text=True) for i in range(4)]
    outs = [p.communicate(timeout=300) for p in procs]
    assert [p.returncode for p in procs] == [0, 0, 0, 0], outs
    for i in range(4): pd.testing.assert_frame_equal(_scores(tmp_path / f"run{i}"), _scores(tmp_path / "single"))
    calls_one, calls_four = len(one_log.read_text().splitlines()), len(four_log.read_text().splitlines())
    print(f"calls: one process {calls_one}, four processes {calls_four} ({calls_four / calls_one:.3f}x)")
    assert calls_four <= 1.05 * calls_one, (calls_four, calls_one)
    asked = [json.loads((tmp_path / f"run{i}/run_manifest.json").read_text())["calls"][0]["n_asked"] for i in range(4)]
    assert sum(asked) == calls_four and sum(a > 0 for a in asked) >= 2, asked        # the work was split, not done by one
    db = sqlite3.connect(cache)
    assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert db.execute("SELECT COUNT(*) FROM responses WHERE status != 'done' OR lease_owner IS NOT NULL").fetchone()[0] == 0


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    from carebench.models.tiny_model import build_tiny_causal_lm
    return build_tiny_causal_lm(tmp_path_factory.mktemp("model") / "tiny")


@pytest.fixture(scope="module")
def small_dataset(tmp_path_factory):
    folder = tmp_path_factory.mktemp("small")
    assert run_cli("synth", "--out", folder, "--seed", 5, "--patients", 3, "--items", 2, "--train-items", 0).returncode == 0
    return {"adapter": "paired_context", "path": str(folder / "dataset.xlsx"), "snapshots": str(folder / "snapshots.json"),
            "tables": {"train": None}}


def test_transformers_backend_on_the_tiny_model_in_both_modes(tmp_path, tiny, small_dataset):
    models = [{"id": "tiny-json", "backend": "transformers", "path": str(tiny), "generation": {"max_new_tokens": 8}},
              {"id": "tiny-logprob", "backend": "transformers", "path": str(tiny), "scoring_mode": "logprob"}]
    (tmp_path / "c.yaml").write_text(yaml.safe_dump({"dataset": small_dataset, "reasoning": {"models": models, "batch_size": 4}}))
    r = run_cli("run", tmp_path / "c.yaml", "--out", tmp_path / "run", "--cache", tmp_path / "cache.sqlite", "--quiet", "--no-report")
    assert r.returncode == 1 and "warning: every call of tiny-json failed" in r.stderr, r.stderr   # said, not silent
    errors = pd.read_csv(tmp_path / "run/errors.csv")
    assert (errors["model"] == "tiny-json").sum() == 18                    # noise never parses: every call recorded as failed
    assert set(errors["error_kind"]) <= {"no_json", "invalid_json", "missing_key", "out_of_range", "not_a_number"}
    scores = pd.read_csv(tmp_path / "run/scores.csv")
    lp = scores[scores["model"] == "tiny-logprob"]
    assert len(lp) == 18 * 10 and lp["score"].between(0, 1).all() and lp["score"].nunique() > 10
    summary = pd.read_csv(tmp_path / "run/call_summary.csv")
    assert summary.loc[summary["model"] == "tiny-json", "n_failed"].sum() == 18
    # token accounting 2: the prompts in full, what the prefix store served, what was computed (per model and condition)
    compute = pd.read_csv(tmp_path / "run/compute.csv").set_index(["model", "condition"])
    assert (compute["computed_tokens"] == compute["prompt_tokens"] - compute["cached_tokens"]).all()
    lpc = compute.loc["tiny-logprob"]
    assert (lpc.loc[["correct_context", "shuffled_context"], "cached_tokens"] > 0.8 * lpc.loc[["correct_context", "shuffled_context"], "prompt_tokens"]).all()
    manifest = json.loads((tmp_path / "run/run_manifest.json").read_text())
    assert manifest["token_accounting"] == 2 and manifest["compute"][0]["computed_tokens"] >= 0


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0)); return s.getsockname()[1]


def test_openai_backend_against_a_real_transformers_serve(tmp_path, tiny, small_dataset):
    port = _free_port()
    server = subprocess.Popen(["transformers", "serve", str(tiny), "--host", "127.0.0.1", "--port", str(port)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env={**os.environ, "HF_HUB_OFFLINE": "1"})
    try:
        import urllib.request
        for _ in range(240):
            try:
                if urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=1).status == 200: break
            except OSError: time.sleep(0.5)
        else: pytest.fail("transformers serve did not come up")
        model = {"id": str(tiny), "backend": "openai", "base_url": f"http://127.0.0.1:{port}/v1", "generation": {"max_new_tokens": 8},
                 "max_retries": 1, "backoff_s": 0.1}
        (tmp_path / "c.yaml").write_text(yaml.safe_dump({"dataset": small_dataset, "reasoning": {"models": [model]}}))
        r = run_cli("run", tmp_path / "c.yaml", "--out", tmp_path / "run", "--cache", tmp_path / "cache.sqlite", "--quiet", "--no-report")
        assert r.returncode == 1 and "every call of" in r.stderr, r.stderr
        errors = pd.read_csv(tmp_path / "run/errors.csv")
        assert len(errors) == 18 and "transport" not in set(errors["error_kind"])   # the server answered; the answers were noise
    finally:
        server.terminate(); server.wait(timeout=30)


class _Counter(BaseHTTPRequestHandler):
    hits = 0
    def do_POST(self):
        type(self).hits += 1; self.send_response(500); self.end_headers()
    do_GET = do_POST
    def log_message(self, *a): pass


def _non_loopback_ip():
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        try: s.connect(("10.255.255.255", 1)); return s.getsockname()[0]
        except OSError: return None


def test_a_remote_endpoint_gets_nothing_without_allow_remote(tmp_path, small_dataset):
    ip = _non_loopback_ip()
    if not ip or ip.startswith("127."): pytest.skip("this machine has no non-loopback address")
    server = HTTPServer(("0.0.0.0", 0), _Counter)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        model = {"id": "m", "backend": "openai", "base_url": f"http://{ip}:{server.server_port}/v1"}
        (tmp_path / "c.yaml").write_text(yaml.safe_dump({"dataset": small_dataset, "reasoning": {"models": [model]}}))
        r = run_cli("run", tmp_path / "c.yaml", "--out", tmp_path / "run", "--cache", tmp_path / "cache.sqlite", "--quiet", "--no-report")
        assert r.returncode == 2 and "allow_remote" in r.stderr and "Traceback" not in r.stderr
        assert _Counter.hits == 0 and not (tmp_path / "run").exists()
    finally:
        server.shutdown()


class _Redirector(BaseHTTPRequestHandler):
    target = None
    def do_POST(self):
        self.send_response(302); self.send_header("Location", self.target); self.end_headers()
    def log_message(self, *a): pass


def test_a_redirect_to_another_host_is_never_followed(tmp_path, small_dataset):
    """A loopback server answering 302 towards this machine's non-loopback address: that listener receives nothing, no token and
    no patient text; every call fails as `transport`, naming the status and the target host only."""
    ip = _non_loopback_ip()
    if not ip or ip.startswith("127."): pytest.skip("this machine has no non-loopback address")
    listener = HTTPServer(("0.0.0.0", 0), _Counter)
    threading.Thread(target=listener.serve_forever, daemon=True).start()
    _Counter.hits = 0
    _Redirector.target = f"http://user:pw@{ip}:{listener.server_port}/v1/chat/completions?token=abc"
    redirector = HTTPServer(("127.0.0.1", 0), _Redirector)
    threading.Thread(target=redirector.serve_forever, daemon=True).start()
    try:
        model = {"id": "m", "backend": "openai", "base_url": f"http://127.0.0.1:{redirector.server_port}/v1", "api_key_env": "CB_TEST_TOKEN",
                 "max_retries": 2, "backoff_s": 0.01}
        (tmp_path / "c.yaml").write_text(yaml.safe_dump({"dataset": small_dataset, "reasoning": {"models": [model]}}))
        r = run_cli("run", tmp_path / "c.yaml", "--out", tmp_path / "run", "--cache", tmp_path / "cache.sqlite", "--quiet", "--no-report",
                    env={"CB_TEST_TOKEN": "sk-redirect-canary-0123456789"})
        assert r.returncode == 1 and "every call of m failed" in r.stderr, r.stderr
        errors = pd.read_csv(tmp_path / "run/errors.csv")
        assert len(errors) == 18 and set(errors["error_kind"]) == {"transport"}
        assert errors["message"].str.contains(f"HTTP 302: the server redirects to http://{ip}:{listener.server_port}; redirects are never followed").all()
        assert not errors["message"].str.contains("pw|token=|canary").any()
        for f in (tmp_path / "run").rglob("*"):
            if f.is_file(): assert b"canary" not in f.read_bytes(), f
        print(f"requests reaching the non-loopback listener: {_Counter.hits}")
        assert _Counter.hits == 0
    finally:
        listener.shutdown(); redirector.shutdown()


def _mode(p: Path) -> int: return p.stat().st_mode & 0o777


@pytest.mark.parametrize("umask,expected", [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_run_files_follow_the_umask(tmp_path, umask, expected):
    cfg = write_config(tmp_path, [{"id": "mock", "backend": "dry_run"}])
    r = subprocess.run([sys.executable, "-m", "carebench.cli", "run", str(cfg), "--cache", str(tmp_path / "c.sqlite"), "--quiet", "--no-report",
                        "--out", str(tmp_path / "run")], capture_output=True, text=True, preexec_fn=lambda: os.umask(umask))
    assert r.returncode == 0, r.stderr
    files = [f for f in (tmp_path / "run").rglob("*") if f.is_file()]
    assert len(files) > 10 and {_mode(f) for f in files} == {expected}, {f.name: oct(_mode(f)) for f in files}
    assert _mode(tmp_path / "c.sqlite") == expected


@pytest.mark.parametrize("sig,code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_an_interrupted_run_says_so_and_is_not_reported(tmp_path, sig, code):
    log = tmp_path / "calls.log"
    cfg = write_config(tmp_path, [{"id": "slow", "backend": "dry_run", "delay_s": 0.2, "call_log": str(log)}], batch_size=5)
    proc = subprocess.Popen([sys.executable, "-m", "carebench.cli", "run", str(cfg), "--cache", str(tmp_path / "c.sqlite"), "--quiet",
                             "--no-report", "--out", str(tmp_path / "run")], stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))   # as in a terminal, even when this
    deadline = time.time() + 60                        # test runs under a parent that ignores Ctrl-C (a background job)
    while time.time() < deadline and (not log.exists() or len(log.read_text().splitlines()) < 20): time.sleep(0.05)
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == code and err.strip().splitlines()[-1] in ("error: interrupted", "error: terminated"), err
    manifest = json.loads((tmp_path / "run/run_manifest.json").read_text())
    assert manifest["status"] == "interrupted"
    db = sqlite3.connect(tmp_path / "c.sqlite")
    assert db.execute("SELECT COUNT(*) FROM responses WHERE lease_owner IS NOT NULL").fetchone()[0] == 0   # leases given back
    r = run_cli("report", tmp_path / "run")
    why = "KeyboardInterrupt" if sig == signal.SIGINT else "Terminated"
    assert r.returncode == 2 and r.stderr.strip() == f"error: {tmp_path / 'run'} is not a finished run: it was interrupted ({why}); " \
                                                     "nothing to report (run it again, or resume it with carebench run)", r.stderr


def test_failures_of_a_peer_are_not_asked_again_by_a_later_process(tmp_path):
    """Processes that start at different times (as models load at different speeds): a failure recorded by a peer that is still
    at work is final for the others; calls stay within 1.05x of one process, results unchanged."""
    one_log, two_log = tmp_path / "one.log", tmp_path / "two.log"
    mock = {"id": "mock", "backend": "dry_run", "delay_s": 0.05, "malformed_rate": 0.3}
    (tmp_path / "one").mkdir()
    one = write_config(tmp_path / "one", [{**mock, "call_log": str(one_log)}], batch_size=4, repair_attempts=0)
    assert run_cli("run", one, "--cache", tmp_path / "one.sqlite", "--quiet", "--no-report", "--no-validity", "--out", tmp_path / "single").returncode == 0
    cfg = write_config(tmp_path, [{**mock, "call_log": str(two_log)}], batch_size=4, repair_attempts=0)
    cmd = lambda i: [sys.executable, "-m", "carebench.cli", "run", str(cfg), "--cache", str(tmp_path / "cache.sqlite"), "--quiet", "--no-report",
                     "--no-validity", "--out", str(tmp_path / f"run{i}")]
    procs = []
    for i in range(3):
        procs.append(subprocess.Popen(cmd(i), stderr=subprocess.PIPE, text=True)); time.sleep(1.0)
    outs = [p.communicate(timeout=300) for p in procs]
    assert [p.returncode for p in procs] == [0, 0, 0], outs
    calls_one, calls_many = len(one_log.read_text().splitlines()), len(two_log.read_text().splitlines())
    print(f"calls: one process {calls_one}, three staggered processes {calls_many}")
    assert calls_many <= 1.05 * calls_one, (calls_many, calls_one)
    for i in range(3): pd.testing.assert_frame_equal(_scores(tmp_path / f"run{i}"), _scores(tmp_path / "single"))


def test_tokens_in_any_option_never_reach_the_run_folder(tmp_path, small_dataset):
    canary = "sk-proj-SERVEDCANARY0123456789"
    model = {"id": "m", "backend": "openai", "base_url": "http://127.0.0.1:9/v1?api_key=QUERYCANARY", "served_model": canary,
             "max_retries": 0, "timeout_s": 2}
    (tmp_path / "c.yaml").write_text(yaml.safe_dump({"dataset": small_dataset, "reasoning": {"models": [model]}}))
    r = run_cli("run", tmp_path / "c.yaml", "--out", tmp_path / "run", "--cache", tmp_path / "cache.sqlite", "--quiet", "--no-report")
    assert r.returncode == 2 and "cannot reach http://127.0.0.1:9: connection refused" in r.stderr, r.stderr   # nothing listens there
    for f in tmp_path.rglob("*"):
        if f.is_file() and f.name != "c.yaml": assert b"CANARY" not in f.read_bytes(), f
    assert "CANARY" not in r.stdout + r.stderr
