"""Benchmark of the representation track's nested cross-validation: the package's closed-form ridge against two baselines on the same
folds, features and choices: a scikit-learn refit of every fold and penalty (the naive one), and the fair one, a plain
numpy eigendecomposition of each fold's centred rows that solves all penalties at once.

Workload: the synthetic generator's 64 patients x 20 evaluation items (10 training items each), embedded once with the
packaged all-MiniLM-L6-v2 (embeddings precomputed, not timed), leave-one-patient-out outer folds, 3 inner folds,
the default penalty grid (7 penalties), 5 head configurations (2d, 3d, 4_vector, low-rank bilinear r=4 and 8), PCA to 64
dimensions.

    python bench/representation.py [--runs 3] [--patients 64] [--json FILE]
"""
import argparse
import json
import tempfile
import time
from pathlib import Path

import numpy as np
from sklearn.linear_model import Ridge

from carebench.tracks.representation.settings import RepresentationConfig
from carebench.adapters.load import load_dataset
from carebench.adapters.synth import SynthParams, write_synthetic
from carebench.tracks.donors import assign_donors
from carebench.models.encoders import TextEncoder
from carebench.tracks.representation.track import nested_cv, track1_inputs


class RefitRidge:
    """The baseline: keep the rows, refit scikit-learn's Ridge for every fold and every penalty."""
    def __init__(self, X, Y, groups):
        self.X, self.Y, self.groups = np.asarray(X, float), np.asarray(Y, float), np.asarray(groups)

    def fit(self, groups, lambdas):
        rows = np.isin(self.groups, list(groups))
        out = []
        for lam in lambdas:
            m = Ridge(alpha=lam, solver="cholesky").fit(self.X[rows], self.Y[rows])
            out.append((m.coef_.T, m.intercept_))
        return out


class PlainEigh:
    """The fair baseline: keep the rows; per fold, centre them, one eigendecomposition of XᵀX, every penalty from it."""
    def __init__(self, X, Y, groups):
        self.X, self.Y, self.groups = np.asarray(X, float), np.asarray(Y, float), np.asarray(groups)

    def fit_stack(self, groups, lambdas):
        rows = np.isin(self.groups, list(groups))
        X, Y = self.X[rows], self.Y[rows]
        mx, my = X.mean(0), Y.mean(0)
        Xc = X - mx
        s, V = np.linalg.eigh(Xc.T @ Xc)
        VB = V.T @ (Xc.T @ (Y - my))
        W = np.stack([V @ (VB / (np.clip(s, 0, None) + lam)[:, None]) for lam in lambdas])
        return W, my[None] - np.einsum("p,kpc->kc", mx, W)

    def fit(self, groups, lambdas):
        W, b0 = self.fit_stack(groups, lambdas)
        return list(zip(W, b0))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--patients", type=int, default=64)
    ap.add_argument("--json")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp())
    ds = load_dataset(write_synthetic(tmp / "w", SynthParams(seed=11, patients=args.patients, items=20, train_items=10))["config"])
    inputs = track1_inputs(ds, assign_donors(ds, 1, 0), TextEncoder(cache_path=tmp / "emb.sqlite"))
    settings = RepresentationConfig(enabled=True)
    times = {"closed_form": [], "plain_eigh": [], "sklearn_refit": []}
    results = {}
    for _ in range(max(args.runs, 1)):
        for name, cls in (("closed_form", None), ("plain_eigh", PlainEigh), ("sklearn_refit", RefitRidge)):
            t = time.perf_counter()
            res = nested_cv(inputs, settings, seed=0, stats_cls=cls) if cls else nested_cv(inputs, settings, seed=0)
            times[name].append(time.perf_counter() - t)
            results[name] = res
    a = results["closed_form"]
    diff = lambda b: max(float(np.nanmax(np.abs(a.s_free - b.s_free))), float(np.nanmax(np.abs(a.s_correct - b.s_correct))),
                         float(np.nanmax(np.abs(a.s_shuffled - b.s_shuffled))))
    figures = {"workload": f"{ds.n_patients} patients x 20 items, LOPO outer, 3 inner folds, "
                           f"{len(settings.lambdas)} penalties, 5 heads, PCA 64",
               "runs": len(times["closed_form"])}
    for name in times: figures[f"{name}_median_s"] = float(np.median(times[name]))
    for name in ("plain_eigh", "sklearn_refit"):
        figures[f"speedup_over_{name}"] = figures[f"{name}_median_s"] / figures["closed_form_median_s"]
        figures[f"max_abs_prediction_difference_{name}"] = diff(results[name])
        # the same choices (how much the chosen penalties shrink the fit: only the closed-form solver can say)
        strip = lambda cs: [{k: v for k, v in c.items() if not k.endswith("_shrinkage")} for c in cs]
        figures[f"same_choices_{name}"] = strip(a.choices) == strip(results[name].choices)
    for k, v in figures.items(): print(f"{k:<32} {v:.4g}" if isinstance(v, float) else f"{k:<32} {v}")
    if args.json: Path(args.json).write_text(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
