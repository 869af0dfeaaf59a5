"""What a real model's answers look like on the bundled example: SmolLM2-135M-Instruct (`carebench fetch smollm2-135m`)
through the transformers backend on the first PATIENTS evaluation patients, in logprob mode and in json mode, and the
same model behind `transformers serve` on a loopback port, read by the openai backend.

It reports, from the run's own files (`scores.csv`, `errors.csv`, `call_summary.csv`, `compute.csv`):
  - json mode: answers that failed to parse, by kind and condition, and how many the repair pass recovered;
  - logprob mode: the distribution of P(yes) (quantiles, the share within 0.4–0.6 and near 0.5);
  - tokens prompted and computed, calls and items per second per mode;
and, on SERVED prompts, how often the two backends give the same greedy json text.

    python bench/real_model_outcomes.py [--patients 2] [--served 12] [--json bench/real_model_outcomes.json]
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
    "The README's real-model config with a json-mode twin of the model, its reasoning track on the first patients."
    cfg = yaml.safe_load((ROOT / "data" / "example" / "smollm2.yaml").read_text())
    for k in ("path", "snapshots"): cfg["dataset"][k] = str(ROOT / "data" / "example" / cfg["dataset"][k])
    real = next(m for m in cfg["reasoning"]["models"] if m["id"] == "smollm2-135m")
    cfg["reasoning"]["models"] = [real, {**real, "id": "smollm2-135m-json", "scoring_mode": "json",
                                         "generation": {"max_new_tokens": 96}}]
    (out / "config.yaml").write_text(yaml.safe_dump(cfg))
    t = time.perf_counter()
    subprocess.run([sys.executable, "-m", "carebench.cli", "run", str(out / "config.yaml"), "--track", "reasoning",
                    "--limit", str(patients), "--no-report", "--no-validity", "--out", str(out / "run"),
                    "--cache", str(out / "cache.sqlite"), "--quiet"], check=True)
    return time.perf_counter() - t


def outcomes(run: Path) -> dict:
    "The figures of one run: failures by kind and condition, P(yes), tokens, calls and items per second."
    import pandas as pd
    read = lambda name: pd.read_csv(run / name, dtype=str, keep_default_na=False)
    scores, errors, calls, compute = (read(n) for n in ("scores.csv", "errors.csv", "call_summary.csv", "compute.csv"))
    out = {"errors_columns": list(errors.columns), "call_summary": calls.to_dict("records")}
    kind = next((c for c in ("kind", "error", "failure", "reason") if c in errors.columns), None)
    if len(errors) and kind:
        keys = [c for c in ("model", "condition", kind) if c in errors.columns]
        out["failures"] = {" / ".join(k): int(n) for k, n in errors.groupby(keys).size().items()}
    else: out["failures"] = {}
    p = scores[scores["model"] == "smollm2-135m"]["score"].astype(float)
    out["p_yes"] = {"cells": int(len(p)), **{f"q{int(q * 100):02d}": round(float(p.quantile(q)), 4)
                                             for q in (0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99)},
                    "within_0.4_0.6": round(float(((p >= 0.4) & (p <= 0.6)).mean()), 4),
                    "within_0.49_0.51": round(float(((p >= 0.49) & (p <= 0.51)).mean()), 4)}
    j = scores[scores["model"] == "smollm2-135m-json"]
    out["json_cells"] = {c: int(n) for c, n in j.groupby("condition").size().items()}
    out["json_yes_share"] = round(float((j["score"].astype(float) >= 0.5).mean()), 4) if len(j) else None
    out["compute"] = compute.to_dict("records")
    return out


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def served_agreement(n: int) -> dict:
    "Greedy json answers of the transformers backend and of the openai backend against `transformers serve`."
    from carebench.adapters.load import load_dataset
    from carebench.core.config import load_config, parse_section
    from carebench.models.backends import BackendContext, ModelConfig, Request, make_backend
    from carebench.models.catalog import model_folder
    from carebench.models.prompts import build_prompt
    from carebench.tracks.reasoning.settings import ReasoningConfig
    import carebench.models.openai_backend  # noqa: F401  (registers the backend)
    folder = model_folder("smollm2-135m")
    ds = load_dataset(load_config(ROOT / "data" / "example" / "config.yaml"))
    patients = {p.id: p for p in ds.patients}
    step = max(1, len(ds.pair_item) // n)
    reqs = [Request(str(i), build_prompt(ds.pair_item[i], patients[ds.pair_patient[i]], ds.label_space), {})
            for i in range(0, len(ds.pair_item), step)][:n]
    gen = {"max_new_tokens": 96}
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
        ctx = BackendContext(ds.label_space)
        local = make_backend(parse_section(ModelConfig, {"id": "smollm2-135m", "backend": "transformers",
                                                         "device": "cpu", "generation": gen}, key="m"),
                             ReasoningConfig(), ctx)
        served = make_backend(parse_section(ModelConfig, {"id": "served", "backend": "openai", "served_model":
                                                          str(folder), "base_url": f"http://127.0.0.1:{port}/v1",
                                                          "generation": gen}, key="m"), ReasoningConfig(), ctx)
        a, b = local.generate(reqs, "json"), served.generate(reqs, "json")
    finally:
        proc.terminate()
        proc.wait(30)
    same = sum(x.text == y.text for x, y in zip(a, b))
    return {"prompts": len(reqs), "same_text": same, "share": round(same / max(len(reqs), 1), 4)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--patients", type=int, default=2)
    ap.add_argument("--served", type=int, default=12, help="prompts compared with the served model (0: none)")
    ap.add_argument("--json", type=Path)
    a = ap.parse_args()
    load = os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp:
        seconds = run_example(a.patients, Path(tmp))
        result = {"model": "smollm2-135m", "patients": a.patients, "run_seconds": round(seconds, 1),
                  **outcomes(Path(tmp) / "run")}
    if a.served: result["served_agreement"] = served_agreement(a.served)
    result["machine"] = {"cpus": os.cpu_count(), "platform": platform.platform(), "load_before": load,
                         "load_after": os.getloadavg()}
    text = json.dumps(result, indent=2)
    print(text)
    if a.json: a.json.write_text(text + "\n")


if __name__ == "__main__":
    main()
