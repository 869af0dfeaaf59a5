"""What a real model's answers look like on the bundled example: SmolLM2-135M-Instruct (`carebench fetch smollm2-135m`)
through the transformers backend on the first PATIENTS evaluation patients, in logprob mode and in json mode, and the
same model behind `transformers serve` on a loopback port, read by the openai backend.

It reports:
  - logprob mode (a run of the README's config on the first --patients, from the run's own files): the distribution of
    P(yes) (quantiles, the share within 0.4-0.6 and near 0.5), failed calls, tokens prompted and computed, items/s;
  - json mode (--items items in each condition, asked through the backend as a run asks them): answers parsed and
    failures by kind and condition (the parser's kinds), the median answer's length;
  - the same json prompts through `transformers serve`, read by the openai backend: how many give the same text.

    python bench/real_model_outcomes.py [--patients 2] [--items 4] [--no-serve] [--json-batching alone|padded]
                                        [--no-logprob] [--json bench/real_model_outcomes.json]
"""
import argparse
import json
import os
import platform
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]


def run_example(patients: int, out: Path) -> float:
    "The README's real-model config, its reasoning track (logprob mode) on the first patients."
    cfg = yaml.safe_load((ROOT / "data" / "example" / "smollm2.yaml").read_text())
    for k in ("path", "snapshots"): cfg["dataset"][k] = str(ROOT / "data" / "example" / cfg["dataset"][k])
    cfg["reasoning"]["models"] = [m for m in cfg["reasoning"]["models"] if m["id"] == "smollm2-135m"]
    (out / "config.yaml").write_text(yaml.safe_dump(cfg))
    t = time.perf_counter()
    subprocess.run([sys.executable, "-m", "carebench.cli", "run", str(out / "config.yaml"), "--track", "reasoning",
                    "--limit", str(patients), "--no-report", "--no-validity", "--out", str(out / "run"),
                    "--cache", str(out / "cache.sqlite"), "--quiet"], check=True)
    return time.perf_counter() - t


def logprob_outcomes(run: Path, seconds: float) -> dict:
    "P(yes)'s distribution, tokens and speed of a logprob run, from its own files."
    import pandas as pd
    read = lambda name: pd.read_csv(run / name, dtype=str, keep_default_na=False)
    scores, errors, compute = (read(n) for n in ("scores.csv", "errors.csv", "compute.csv"))
    p = scores[scores["model"] == "smollm2-135m"]["score"].astype(float)
    cells = scores[scores["model"] == "smollm2-135m"]
    items = cells.groupby(["condition", "patient_id", "item"]).ngroups
    return {"cells": int(len(p)), "failed_calls": int((errors["model"] == "smollm2-135m").sum()) if len(errors) else 0,
            "p_yes": {**{f"q{int(q * 100):02d}": round(float(p.quantile(q)), 4)
                         for q in (0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99)},
                      "share_within_0.4_0.6": round(float(((p >= 0.4) & (p <= 0.6)).mean()), 4),
                      "share_within_0.49_0.51": round(float(((p >= 0.49) & (p <= 0.51)).mean()), 4),
                      "share_above_0.5": round(float((p > 0.5).mean()), 4)},
            "run_seconds": round(seconds, 1), "items": int(items), "items_per_s": round(items / seconds, 2),
            "compute": compute.to_dict("records")}


def prompts(n: int) -> tuple:
    "`n` items of the example in each condition (the donor: the next patient), as json-mode requests."
    from carebench.adapters.load import load_dataset
    from carebench.core.config import load_config
    from carebench.models.backends import Request
    from carebench.models.prompts import build_prompt
    ds = load_dataset(load_config(ROOT / "data" / "example" / "config.yaml"))
    patients, ids = {p.id: p for p in ds.patients}, list(dict.fromkeys(ds.pair_patient))
    step, reqs = max(1, len(ds.pair_item) // n), []
    for i in list(range(0, len(ds.pair_item), step))[:n]:
        pid = ds.pair_patient[i]
        donor = patients[ids[(ids.index(pid) + 1) % len(ids)]]
        for cond, shown in (("context_free", None), ("correct_context", patients[pid]), ("shuffled_context", donor)):
            reqs.append(Request(f"{cond}:{i}", build_prompt(ds.pair_item[i], shown, ds.label_space), {}))
    return ds.label_space, reqs


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def json_outcomes(n: int, served: bool, batching: str = "alone") -> dict:
    """json mode on `n` items in each condition: the transformers backend's greedy answers parsed as a run parses them
    (failures by kind and condition), and, with `served`, the same prompts through `transformers serve` read by the
    openai backend (how many give the same text). `batching`: the transformers backend's `json_batching`."""
    from carebench.core.config import parse_section
    from carebench.models.backends import BackendContext, ModelConfig, make_backend
    from carebench.models.catalog import model_folder
    from carebench.models.parsing import ParseError, parse_scores
    from carebench.tracks.reasoning.settings import ReasoningConfig
    import carebench.models.openai_backend  # noqa: F401  (registers the backend)
    folder, (space, reqs) = model_folder("smollm2-135m"), prompts(n)
    ctx, gen = BackendContext(space), {"max_new_tokens": 256}
    local = make_backend(parse_section(ModelConfig, {"id": "smollm2-135m", "backend": "transformers", "device": "cpu",
                                                     "json_batching": batching, "generation": gen}, key="m"),
                         ReasoningConfig(), ctx)
    t = time.perf_counter()
    a = local.generate(reqs, "json")                      # one batch, as a run sends a patient's requests
    seconds = time.perf_counter() - t
    kinds, answers = {}, []
    for r, reply in zip(reqs, a):
        cond = r.key.split(":")[0]
        try: scores = parse_scores(reply.text or "", space); kind = "parsed"
        except ParseError as e: scores, kind = None, e.kind
        kinds.setdefault(cond, {}).setdefault(kind, 0)
        kinds[cond][kind] += 1
        # what a person reads to judge the parser (synthetic example text only): the answer's start, its outcome
        answers.append({"condition": cond, "answer_start": (reply.text or "")[:240], "outcome": kind, "scores": scores})
    out = {"requests": len(reqs), "json_batching": batching, "seconds": round(seconds, 1),
           "by_condition": kinds, "answers": answers,
           "answer_chars_median": sorted(len(x.text or "") for x in a)[len(a) // 2]}
    if not served: return out
    port = free_port()
    exe = Path(sys.executable).with_name("transformers")
    proc = subprocess.Popen([str(exe), "serve", str(folder), "--host", "127.0.0.1", "--port", str(port), "--device",
                             "cpu", "--dtype", "float32", "--log-level", "warning"], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, env={**os.environ, "HF_HUB_OFFLINE": "1"})
    try:
        for _ in range(240):
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=2): break
            except OSError: time.sleep(0.5)
        # one request at a time with a long deadline: on 2 cores a 256-token answer under load can take minutes, and a
        # call that times out is a failure of the bench, not an answer to compare
        remote = make_backend(parse_section(ModelConfig, {"id": "served", "backend": "openai", "served_model":
                                                          str(folder), "base_url": f"http://127.0.0.1:{port}/v1",
                                                          "max_concurrency": 1, "timeout_s": 900,
                                                          "generation": gen}, key="m"), ReasoningConfig(), ctx)
        b = remote.generate(reqs, "json")
    finally:
        proc.terminate()
        proc.wait(30)
    same = sum(x.text == y.text for x, y in zip(a, b))
    # where two answers part: the characters they share from the start (a late flip of a near-tie, or an early one)
    apart = [{"prompt": r.key, "same_prefix_chars": len(os.path.commonprefix([x.text or "", y.text or ""])),
              "local_chars": len(x.text or ""), "served_chars": len(y.text or ""),
              "served_error": y.error_kind, "local_error": x.error_kind}
             for r, x, y in zip(reqs, a, b) if x.text != y.text]
    both = [(x, y) for x, y in zip(a, b) if not x.error_kind and not y.error_kind]    # answered on both sides
    out["served_agreement"] = {"prompts": len(reqs), "same_text": same, "share": round(same / len(reqs), 4),
                               "answered_by_both": len(both),
                               "same_text_of_answered": sum(x.text == y.text for x, y in both), "differing": apart}
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--patients", type=int, default=2, help="patients of the logprob run (at least 2: a donor each)")
    ap.add_argument("--items", type=int, default=4, help="items asked in json mode, in each condition")
    ap.add_argument("--no-serve", action="store_true", help="leave out the served model's agreement")
    ap.add_argument("--json-batching", choices=("alone", "padded"), default="alone",
                    help="the transformers backend's json_batching (default alone: each request decoded by itself)")
    ap.add_argument("--no-logprob", action="store_true", help="leave out the logprob run")
    ap.add_argument("--json", type=Path)
    a = ap.parse_args()
    load = os.getloadavg()
    result = {"model": "smollm2-135m", "patients": a.patients}
    if not a.no_logprob:
        with tempfile.TemporaryDirectory() as tmp:
            seconds = run_example(a.patients, Path(tmp))
            result["logprob"] = logprob_outcomes(Path(tmp) / "run", seconds)
        print(json.dumps(result["logprob"]["p_yes"]), flush=True)
    result["json"] = json_outcomes(a.items, not a.no_serve, a.json_batching)
    result["machine"] = {"cpus": os.cpu_count(), "platform": platform.platform(), "load_before": load,
                         "load_after": os.getloadavg()}
    text = json.dumps(result, indent=2)
    print(text)
    if a.json: a.json.write_text(text + "\n")


if __name__ == "__main__":
    main()
