"""The designs of the golden endpoint results (shared by make_golden.py and tests/test_golden.py)."""
import dataclasses
import json
from pathlib import Path

import pandas as pd

from carebench.core.config import AnalysisConfig, load_config
from carebench.stats.endpoints import ENDPOINTS, demo_input, results_to_dict, run_endpoints, to_jsonable
from carebench.stats.simulate import w1

EXAMPLE = Path(__file__).resolve().parents[2] / "data" / "example"
ALL = tuple(ENDPOINTS)


def _run(inp, seed=0, stream="golden", **settings):
    cfg = dataclasses.replace(AnalysisConfig(), endpoints=ALL, **settings)
    return to_jsonable(results_to_dict(run_endpoints(inp, cfg, seed, stream)))


CASES = {
    "exact_12x8": lambda: _run(demo_input(12, 8, 4, seed=0)),                      # 2^12 sign patterns: exact
    "few_patients_5x6": lambda: _run(demo_input(5, 6, 3, seed=4)),                 # below the bootstrap-t minimum: t interval
    "monte_carlo_30x6_two_donors": lambda: _run(demo_input(30, 6, 5, seed=3, donors=2), seed=11),
    "percentile": lambda: _run(demo_input(30, 6, 5, seed=3, donors=2), ci_method="percentile"),
    "bca": lambda: _run(demo_input(30, 6, 5, seed=3, donors=2), ci_method="bca"),
    "t": lambda: _run(demo_input(30, 6, 5, seed=3, donors=2), ci_method="t"),
    "w1": lambda: _run(w1(seed=0), n_bootstrap=300, n_permutations=2000),
    "odd_sizes": lambda: _run(demo_input(23, 7, 3, seed=5), n_bootstrap=257, n_permutations=1001),
}


def analyze_example(tmp: Path) -> dict:
    "endpoints.json and model_contrasts.csv of `analyze` on the bundled example with two planted models (no validity study)."
    from carebench.adapters.load import load_dataset
    from carebench.evaluation.analyze import analyze
    from carebench.evaluation.scores import planted_scores
    config = load_config(EXAMPLE / "config.yaml")
    ds = load_dataset(config)
    df = pd.concat([planted_scores(ds, "aligned", alignment=0.3, seed=1), planted_scores(ds, "null", alignment=0.0, seed=2)])
    df.to_csv(tmp / "scores.csv", index=False)
    a = analyze(config, tmp / "scores.csv", tmp / "out", validity=False)
    doc = json.loads((tmp / "out" / "endpoints.json").read_text())
    contrasts = pd.read_csv(tmp / "out" / "model_contrasts.csv").to_dict(orient="list")
    return {"endpoints": doc, "model_contrasts": to_jsonable(contrasts)}
