"""A real language model in every path: SmolLM2-135M-Instruct (fetched once by `carebench fetch smollm2-135m`, part of the
README's set-up). Its logprob scores on the bundled example's first patients through the transformers backend, with the
accounting a run writes; prefix reuse changing no score; and the same model behind `transformers serve` on a free loopback
port, read by the openai backend: the same greedy JSON answers, and logprob mode refused by name before any patient text
is sent (the server gives no token log-probabilities)."""
import csv
import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
import yaml

from conftest import EXAMPLE, run_cli

from carebench.models.catalog import model_folder

MODEL = model_folder("smollm2-135m")
pytestmark = pytest.mark.skipif(MODEL is None, reason="SmolLM2-135M-Instruct is not fetched: `carebench fetch smollm2-135m` "
                                                      "(the README's set-up) enables the real-model tests")


def _rows(path: Path) -> list:
    with open(path, newline="", encoding="utf-8") as f: return list(csv.DictReader(f))


def test_a_run_scores_the_example_with_the_real_model(tmp_path):
    "The README's real-model config on its first 2 patients: every call answered, P(yes) in (0, 1), reuse accounted."
    r = run_cli("run", EXAMPLE / "smollm2.yaml", "--track", "reasoning", "--model", "smollm2-135m", "--limit", "2",
                "--no-report", "--no-validity", "--out", tmp_path / "run", "--cache", tmp_path / "cache.sqlite", "--quiet")
    assert r.returncode == 0, r.stderr[-2000:]
    scores = [float(s["score"]) for s in _rows(tmp_path / "run" / "scores.csv") if s["model"] == "smollm2-135m"]
    assert len(scores) >= 400 and all(0 < s < 1 for s in scores)
    compute = _rows(tmp_path / "run" / "compute.csv")
    asked = sum(int(c["asked"]) for c in compute)
    prompt, computed = (sum(int(c[k]) for c in compute) for k in ("prompt_tokens", "computed_tokens"))
    assert asked > 0 and computed * 5 < prompt, (computed, prompt)          # every shared prefix read once
    assert not [e for e in _rows(tmp_path / "run" / "errors.csv") if e["model"] == "smollm2-135m"]


def test_prefix_reuse_changes_no_score_of_the_real_model():
    "The prefix tree with siblings in one row gives the scores of whole prompts, each read alone, to 1e-4."
    from carebench.adapters.load import load_dataset
    from carebench.core.config import load_config, parse_section
    from carebench.models.backends import BackendContext, ModelConfig, make_backend
    from carebench.models.hf_backend import _render
    from carebench.models.prompts import build_prompt
    from carebench.tracks.reasoning.settings import ReasoningConfig
    ds = load_dataset(load_config(EXAMPLE / "config.yaml"))
    patient = ds.patients[0]
    entry = lambda **o: parse_section(ModelConfig, {"id": "smollm2-135m", "backend": "transformers", "device": "cpu", **o}, key="m")
    reuse = make_backend(entry(), ReasoningConfig(), BackendContext(ds.label_space))
    plain = make_backend(entry(prefix_reuse=False), ReasoningConfig(), BackendContext(ds.label_space))
    seqs = []
    for item in ds.pair_item[:2]:
        p = build_prompt(item, patient, ds.label_space, mode="logprob")
        seqs += [reuse.tok(_render(reuse.tok, p.with_question(q)), add_special_tokens=False)["input_ids"] for q in p.questions[:2]]
    a, spent = reuse.next_token_probs(seqs)
    b, spent_plain = plain.next_token_probs(seqs)
    assert max(abs(x - y) for x, y in zip(a, b)) <= 1e-4, (a, b)
    assert sum(spent) * 2 < sum(spent_plain)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0)); return s.getsockname()[1]


@pytest.fixture(scope="module")
def server():
    "`transformers serve` with the fetched model on a free loopback port; stopped by its PID."
    exe = Path(sys.executable).with_name("transformers")
    if not exe.exists(): pytest.skip("the transformers command is not installed (pip install 'transformers[serving]')")
    port, log = _free_port(), open(os.devnull, "w")
    proc = subprocess.Popen([str(exe), "serve", str(MODEL), "--host", "127.0.0.1", "--port", str(port), "--device", "cpu",
                             "--dtype", "float32", "--log-level", "warning"], stdout=log, stderr=log,
                            env={**os.environ, "HF_HUB_OFFLINE": "1"})
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(240):
            try:
                with urllib.request.urlopen(base + "/v1/models", timeout=2) as resp:
                    if resp.status == 200: break
            except OSError: time.sleep(0.5)
        else: pytest.fail("transformers serve did not answer within 120 s")
        yield base + "/v1"
    finally:
        proc.terminate()
        try: proc.wait(20)
        except subprocess.TimeoutExpired: proc.kill()


def test_the_served_model_gives_the_same_greedy_answers(server):
    "json mode: the openai backend against the server and the transformers backend give the same greedy text."
    from carebench.adapters.load import load_dataset
    from carebench.core.config import load_config, parse_section
    from carebench.models.backends import BackendContext, ModelConfig, Request, make_backend
    from carebench.models.prompts import build_prompt
    from carebench.tracks.reasoning.settings import ReasoningConfig
    import carebench.models.openai_backend  # noqa: F401  (registers the backend)
    ds = load_dataset(load_config(EXAMPLE / "config.yaml"))
    patients = {p.id: p for p in ds.patients}
    reqs = [Request(str(i), build_prompt(ds.pair_item[i], patients[ds.pair_patient[i]], ds.label_space), {}) for i in (0, 56, 111)]
    gen = {"max_new_tokens": 40}
    local = make_backend(parse_section(ModelConfig, {"id": "smollm2-135m", "backend": "transformers", "device": "cpu", "generation": gen},
                                       key="m"), ReasoningConfig(), BackendContext(ds.label_space))
    # one request at a time, with a deadline a loaded CI machine cannot reach: a timeout is no answer to compare
    served = make_backend(parse_section(ModelConfig, {"id": "served", "backend": "openai", "base_url": server,
                                                      "served_model": str(MODEL), "generation": gen,
                                                      "max_concurrency": 1, "timeout_s": 600}, key="m"),
                          ReasoningConfig(), BackendContext(ds.label_space))
    assert "answers" in served.reach()
    a, b = local.generate(reqs, "json"), served.generate(reqs, "json")
    assert not [y.error for y in b if y.error_kind], [y.error for y in b]          # every prompt answered by the server
    same = sum(x.text == y.text for x, y in zip(a, b))
    assert same >= 0.95 * len(reqs), [(x.text, y.text) for x, y in zip(a, b)]


def test_logprob_mode_is_refused_by_a_server_without_logprobs(server, tmp_path):
    "validate --check-endpoints: one line naming the mode; no patient text sent (the probe is a fixed question)."
    cfg = yaml.safe_load((EXAMPLE / "config.yaml").read_text())
    cfg["dataset"].update(path=str(EXAMPLE / "dataset.xlsx"), snapshots=str(EXAMPLE / "snapshots.json"))
    cfg["reasoning"]["models"] = [{"id": "served", "backend": "openai", "base_url": server, "served_model": str(MODEL),
                                   "scoring_mode": "logprob"}]
    cfg.pop("representation", None)
    (tmp_path / "served.yaml").write_text(yaml.safe_dump(cfg))
    r = run_cli("validate", tmp_path / "served.yaml", "--check-endpoints")
    assert r.returncode == 2 and "returns no token log-probabilities, which scoring_mode logprob needs" in r.stderr, r.stderr


def test_a_chart_without_a_budget_gets_one_from_the_models_window(tmp_path):
    "A FHIR chart read by SmolLM2 (window 8,192 tokens, from its config.json; nothing loaded): the budget and its source."
    import shutil
    from carebench.core.config import load_config
    from carebench.adapters.load import load_dataset
    from carebench.tracks.runner import preflight
    folder = shutil.copytree(EXAMPLE.parent.parent / "tests" / "fixtures" / "real_shapes" / "synthea", tmp_path / "c")
    cfg = yaml.safe_load((folder / "config.yaml").read_text())
    del cfg["dataset"]["snapshot"]                                          # no budget configured
    cfg["reasoning"]["models"] = [{"id": "smollm2-135m", "backend": "transformers", "scoring_mode": "logprob"}]
    (folder / "config.yaml").write_text(yaml.safe_dump(cfg))
    config = load_config(folder / "config.yaml")
    ds = load_dataset(config)
    assert ds.provenance["snapshot_budget"]["max_tokens"] is None
    budget = preflight(config, ds).dataset.provenance["snapshot_budget"]
    assert budget["max_tokens"] == (8192 - 256 - 1024) * 3 // 4
    assert budget["source"] == ("the context window of the models of the reasoning track (5,184 estimated tokens of "
                                "snapshot)")
    assert set(budget["per_patient"]) == {"a01", "b02"}                     # recorded per patient
