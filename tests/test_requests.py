"""Hardening 3 through the real command line against hostile loopback servers (tests/hostile_requests.py): a token without a known
prefix reaches no file, cache row or output; answers of the wrong types fail their own call as `bad_response`; an endless or
dripping body ends each call at its deadline; a dead endpoint stops the run before any call, naming the address."""
import sqlite3
import time

import pandas as pd

import hostile_requests as H
from conftest import run_cli


def _everything(tmp_path) -> bytes:
    "Every byte this test's runs wrote: run folders, caches (SQLite pages, WAL included)."
    return b"".join(f.read_bytes() for f in tmp_path.rglob("*") if f.is_file())


def test_a_token_without_a_known_prefix_is_redacted_by_value_everywhere(tmp_path):
    port = H.serve()
    for kind, code in (("echo_error", 1), ("echo_5xx", 1), ("echo_answer", 0)):
        cfg = H.model_cfg(tmp_path / "cfg", f"http://127.0.0.1:{port}/{kind}/v1", api_key_env="CB_CANARY_TOKEN", max_retries=1, backoff_s=0.01)
        r = run_cli("run", cfg, "--no-validity", "--out", tmp_path / f"{kind}_run", "--cache", tmp_path / f"{kind}.sqlite",
                    *(() if kind == "echo_answer" else ("--no-report",)), env={"CB_CANARY_TOKEN": H.CANARY})   # one report is enough
        assert r.returncode == code, r.stderr[-800:]
        assert H.CANARY not in r.stdout + r.stderr
    rows = []
    for db in tmp_path.glob("*.sqlite"):
        with sqlite3.connect(db) as c: rows += [str(x) for row in c.execute("SELECT response, error FROM responses") for x in row]
    assert any("<redacted>" in x for x in rows)                      # the echoes were there, and were redacted before caching
    assert not any(H.CANARY in x for x in rows)
    found = [str(f) for f in tmp_path.rglob("*") if f.is_file() and H.CANARY.encode() in f.read_bytes()]
    print(f"files where the canary was found: {len(found)}")
    assert found == []


def test_answers_of_the_wrong_types_fail_their_own_call(tmp_path):
    port = H.serve()
    for kind, mode, says in (("number_content", "json", "content is not a text"), ("string_usage", "json", "usage is not an object"),
                             ("int_token", "logprob", "top_logprobs entry")):
        cfg = H.model_cfg(tmp_path / "cfg", f"http://127.0.0.1:{port}/{kind}/v1", mode=mode)
        r = run_cli("run", cfg, "--no-validity", "--no-report", "--out", tmp_path / kind, "--cache", tmp_path / f"{kind}.sqlite")
        assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr[-800:]
        errors = pd.read_csv(tmp_path / kind / "errors.csv")
        assert set(errors["error_kind"]) == {"bad_response"}, errors["error_kind"].value_counts()
        assert errors["message"].str.contains(says).all()


def test_a_server_that_quotes_the_prompt_in_a_status_line_gets_it_dropped(tmp_path):
    cfg = H.model_cfg(tmp_path / "cfg", f"http://127.0.0.1:{H.serve()}/status_echo/v1")
    r = run_cli("run", cfg, "--no-validity", "--no-report", "--out", tmp_path / "run", "--cache", tmp_path / "c.sqlite")
    assert r.returncode == 1, r.stderr[-800:]
    errors = pd.read_csv(tmp_path / "run" / "errors.csv")
    assert errors["message"].str.contains("quotes the prompt: not kept").all(), errors["message"].iloc[0]
    assert b"lives alone" not in _everything(tmp_path / "run") and errors["message"].str.len().max() < 300


def test_endless_and_dripping_answers_end_at_the_deadline(tmp_path):
    port = H.serve()
    seconds = {}
    for kind, opts in (("endless", {"max_answer_bytes": 1 << 20}), ("drip", {"timeout_s": 2}), ("slow_headers", {"timeout_s": 2})):
        cfg = H.model_cfg(tmp_path / "cfg", f"http://127.0.0.1:{port}/{kind}/v1", max_concurrency=16, **opts)
        t0 = time.monotonic()
        r = run_cli("run", cfg, "--no-validity", "--no-report", "--out", tmp_path / kind, "--cache", tmp_path / f"{kind}.sqlite", "--model", "m")
        seconds[kind] = time.monotonic() - t0
        assert r.returncode == 1, r.stderr[-800:]
        errors = pd.read_csv(tmp_path / kind / "errors.csv")
        want = "larger than max_answer_bytes" if kind == "endless" else "no complete answer within 2 s"
        assert set(errors["error_kind"]) == {"transport"} and errors["message"].str.contains(want).all(), errors["message"].iloc[0]
    print("seconds per run of 12 concurrent calls (process start included): " + ", ".join(f"{k} {v:.2f}" for k, v in seconds.items()))


def test_a_dead_endpoint_stops_the_run_at_once_naming_it(tmp_path):
    dead = H.dead_port()
    cfg = H.model_cfg(tmp_path / "cfg", f"http://127.0.0.1:{dead}/v1", max_retries=5, timeout_s=60)
    t0 = time.monotonic()
    r = run_cli("run", cfg, "--out", tmp_path / "run", "--cache", tmp_path / "c.sqlite")
    took = time.monotonic() - t0
    print(f"dead endpoint: {took:.1f} s from start to the error")
    assert r.returncode == 2, r.stderr
    lines = [l for l in r.stderr.splitlines() if l.strip()]
    assert lines == [f"error: model 'm': cannot reach http://127.0.0.1:{dead}: connection refused (nothing listens there: is the server running?)"], lines
    assert not (tmp_path / "run").exists()                           # stopped before the run folder, before planning a call
