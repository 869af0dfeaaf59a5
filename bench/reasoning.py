"""Benchmark of the reasoning track's transformers backend: prompt tokens computed per scored cell (and per item and condition)
with and without prefix reuse, beside the ideal (every distinct prefix token of the run computed once, what an
unbounded engine-wide prefix cache would do), and items per second, for the tiny local model on the bundled example
(logprob mode); with `--suite`, the same again with the perturbation suite, two more prompt formats and a replicate.

    python bench/reasoning.py [--patients 4] [--runs 1] [--suite] [--json FILE]

Prefix reuse: each batch runs as its prefix tree (system text, a patient's context, an item, its category questions),
and the key/value states of prefixes that served more than one request stay in an LRU store across batches; the
requests are planned patient-major. The scores must equal those of whole prompts (the largest difference is printed).
"""
import argparse
import os
import json
import tempfile
import time
from pathlib import Path

import numpy as np

from carebench.core.config import load_config
from carebench.models.backends import ModelConfig
from carebench.adapters.load import load_dataset
from carebench.models.backends import BackendContext, make_backend
from carebench.tracks.donors import assign_donors
from carebench.tracks.reasoning.track import plan_requests
from carebench.models.tiny_model import build_tiny_causal_lm
from carebench.models.hf_backend import _render

ROOT = Path(__file__).resolve().parents[1]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--patients", type=int, default=4, help="patients of the bundled example to score (all: 12)")
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--quick", action="store_true", help="alias of --patients 2")
    ap.add_argument("--suite", action="store_true", help="also with reasoning.perturbations, formats: 3 and replicates: 2")
    ap.add_argument("--json")
    args = ap.parse_args()
    n_pat = 2 if args.quick else args.patients
    cfg = load_config(ROOT / "data/example/config.yaml")
    ds = load_dataset(cfg)
    tiny = build_tiny_causal_lm(Path(tempfile.mkdtemp()) / "tiny")
    keep = set(ds.patient_ids[:n_pat])
    figures = {"model": "tiny random Llama (2 layers, hidden 64), CPU", "patients": n_pat}
    results = {}
    variants = [("", cfg)] + ([("suite_", cfg.with_section("reasoning", perturbations=("drop:*", "shuffle_fields", "irrelevant_text", "item_case"),
                                                          formats=3, replicates=2))] if args.suite else [])
    for (prefix, cfg), reuse in ((v, r) for v in variants for r in (True, False)):
        m = ModelConfig("tiny", "transformers", scoring_mode="logprob", options={"path": str(tiny), "prefix_reuse": reuse, "device": "cpu"})
        be = make_backend(m, cfg.reasoning, BackendContext(ds.label_space, ds))
        reqs = [r for r in plan_requests(ds, assign_donors(ds, 1, cfg.seed), m, be, cfg) if r.meta["patient_id"] in keep]
        times, scores = [], None
        for _ in range(max(args.runs, 1)):
            be.store = type(be.store)(be.store.max_bytes)          # every run from an empty store
            t, computed, full, out = time.perf_counter(), 0, 0, []
            for i in range(0, len(reqs), cfg.reasoning.batch_size):
                replies = be.generate(reqs[i:i + cfg.reasoning.batch_size], "logprob")
                full += sum(r.prompt_tokens for r in replies); computed += sum(r.prompt_tokens - r.cached_tokens for r in replies)
                out += [list(r.scores.values()) for r in replies]
            times.append(time.perf_counter() - t); scores = np.array(out)
        tag = prefix + ("with_reuse" if reuse else "without_reuse")
        results[tag] = scores
        cells = len(reqs) * len(ds.label_space.keys)
        figures[f"requests_{tag}"] = len(reqs)
        figures[f"prompt_tokens_per_scored_cell_{tag}"] = full / cells
        figures[f"computed_tokens_per_item_condition_{tag}"] = computed / len(reqs)
        figures[f"computed_tokens_per_scored_cell_{tag}"] = computed / cells
        figures[f"items_per_second_{tag}"] = len(reqs) / float(np.median(times))
        if reuse:
            seqs = sorted(tuple(be.tok(_render(be.tok, r.prompt.build().with_question(q)), add_special_tokens=False)["input_ids"])
                          for r in reqs for q in r.prompt.questions)
            ideal = sum(len(s) - len(os.path.commonprefix([s, p])) for s, p in zip(seqs, [()] + seqs[:-1]))
            figures[f"{prefix}ideal_computed_tokens_per_scored_cell"] = ideal / cells
            figures[f"{prefix}store_hits"] = be.store.hits
    for prefix, _ in variants:
        plain, reused = (figures[f"computed_tokens_per_scored_cell_{prefix}{t}"] for t in ("without_reuse", "with_reuse"))
        figures[f"{prefix}computed_token_ratio"] = plain / reused
        figures[f"{prefix}ideal_token_ratio"] = plain / figures[f"{prefix}ideal_computed_tokens_per_scored_cell"]
        figures[f"{prefix}max_abs_score_difference"] = float(np.abs(results[prefix + "with_reuse"] - results[prefix + "without_reuse"]).max())
    width = max(map(len, figures))
    for k, v in figures.items(): print(f"{k:<{width}}  {v:.4g}" if isinstance(v, float) else f"{k:<{width}}  {v}")
    if args.json: Path(args.json).write_text(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
