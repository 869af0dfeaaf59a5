"""Benchmark of the statistics engine (issue: statistics engine). Not a test: it prints figures.

Workload W1: 64 patients x 20 items x 10 categories, 1,000 bootstrap resamples, 10,000 sign flips, the four the reasoning track
endpoints of protocol 2 overall and per category (the loop reference computes percentile intervals, the package the
configured method, studentized by default). Reports the median wall time of the whole battery and of each endpoint over
--runs runs, peak memory, the speed-up over a Python-loop reference (bench/reference.py) and over
scipy.stats.permutation_test for the sign-flip case, how far the battery is from the floor (`fused_floor`: the overall
contrasts' sums, one product with all sign patterns and one with all bootstrap weights, in plain numpy), and the wall time
of a whole `carebench analyze` process.

    python bench/stats.py [--runs 5] [--quick] [--json FILE]
"""
import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

import numpy as np
from scipy import stats as sps

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import reference  # noqa: E402

from carebench.core.config import AnalysisConfig  # noqa: E402
from carebench.stats.endpoints import run_endpoints  # noqa: E402
from carebench.stats.signflip import signflip_patterns, signflip_test  # noqa: E402
from carebench.stats.simulate import w1  # noqa: E402


def timed(fn, runs):
    times = []
    for _ in range(runs):
        t = time.perf_counter(); fn(); times.append(time.perf_counter() - t)
    return float(np.median(times)), times


def fused_floor(inp, cfg, seed=0):
    """The least work the battery's inference needs, fused in plain numpy: the per-cell contrast of each tested endpoint, its
    per-patient sums (one bincount), one product with all sign patterns (p-value) and one with all bootstrap weights
    (percentile interval), overall only. What the package adds beyond this (per-category estimates, studentized intervals,
    floors, power, described means) is what `battery / floor` measures."""
    from carebench.stats.endpoints import MEAN_CONTRASTS
    from carebench.stats.measures import effective_epsilon
    rng = np.random.default_rng(seed)
    P, eps = inp.n_patients, effective_epsilon(cfg.epsilon)
    E = rng.choice(np.array([-1.0, 1.0]), size=(cfg.n_permutations, P))
    W = rng.multinomial(P, np.full(P, 1.0 / P), size=cfg.n_bootstrap).astype(float)
    out = {}
    for name in ("context_specificity", "directional_alignment", "context_sensitivity"):
        values, mask = MEAN_CONTRASTS[name](inp, eps)
        m = np.ones(values.shape, bool) if mask is None else mask
        S = np.bincount(inp.cluster, weights=np.where(m, values, 0.0).sum(1), minlength=P)
        n = np.bincount(inp.cluster, weights=m.sum(1).astype(float), minlength=P)
        p = (1 + (E @ S >= S.sum() - 1e-9 * np.abs(S).sum()).sum()) / (len(E) + 1)
        reps = (W @ S) / (W @ n)
        out[name] = (S.sum() / n.sum(), p, np.nanquantile(reps, [0.025, 0.975]))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--quick", action="store_true", help="skip the loop reference (median of 3 runs) and the analyze process")
    ap.add_argument("--json", help="also write the figures to this file")
    args = ap.parse_args()
    runs = max(args.runs, 1)
    cfg, inp = AnalysisConfig(), w1(seed=0)
    figures = {"workload": "W1: 64 patients x 20 items x 10 categories, B=1000 bootstrap, 10000 permutations",
               "cpus": os.cpu_count(), "nonzero_delta_ref_cells": int(inp.nonzero.sum())}
    run_endpoints(inp, cfg, 0, "W1")                                   # warm-up (imports, caches)
    figures["battery_median_s"], figures["battery_runs_s"] = timed(lambda: run_endpoints(inp, cfg, 0, "W1"), runs)
    figures["per_endpoint_median_s"] = {n: timed(lambda: run_endpoints(inp, cfg, 0, "W1", [n]), runs)[0] for n in cfg.endpoints}
    tracemalloc.start()
    run_endpoints(inp, cfg, 0, "W1")
    figures["battery_peak_traced_mib"] = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    figures["process_max_rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

    # scipy.stats.permutation_test on the sign-flip case it covers: one value (a patient sum) per cluster
    S = np.random.default_rng(1).normal(0.1, 1, size=64)
    def ours():
        pat, exact = signflip_patterns(64, 10_000, np.random.default_rng(2))
        return signflip_test(S, pat, exact).p_value[0]
    def scipy_version():
        return sps.permutation_test((S,), lambda x, axis: np.sum(x, axis=axis), permutation_type="samples", vectorized=True,
                                    n_resamples=10_000, alternative="greater", random_state=3).pvalue
    t_ours, _ = timed(ours, runs); t_scipy, _ = timed(scipy_version, runs)
    figures["signflip_ours_s"], figures["signflip_scipy_s"] = t_ours, t_scipy
    figures["signflip_speedup_vs_scipy"] = t_scipy / t_ours
    figures["signflip_p_ours_vs_scipy"] = [float(ours()), float(scipy_version())]

    floor_s, _ = timed(lambda: fused_floor(inp, cfg), runs)
    figures["fused_floor_s"] = floor_s
    figures["battery_over_floor"] = figures["battery_median_s"] / floor_s
    figures["floor_overall_estimates_equal"] = all(abs(v[0] - run_endpoints(inp, cfg, 0, "W1", [k])[k].overall.estimate) < 1e-12
                                                   for k, v in fused_floor(inp, cfg).items())

    if not args.quick:
        ref_runs = []
        for i in range(3):
            t = time.perf_counter(); ref = reference.battery(inp, seed=i); ref_runs.append(time.perf_counter() - t)
        figures["reference_loop_s"] = float(np.median(ref_runs))
        figures["speedup_vs_loop_reference"] = figures["reference_loop_s"] / figures["battery_median_s"]
        figures["floor_speedup_vs_loop_reference"] = figures["reference_loop_s"] / floor_s
        mine = run_endpoints(inp, cfg, 0, "W1")
        figures["check_agreement_p_ours_vs_reference"] = [mine["directional_alignment"].overall.p_value, float(ref["directional_alignment"][1][-1])]
        figures["check_chance_rate_ours_vs_reference"] = [mine["directional_alignment"].overall.values["chance_rate"], float(ref["directional_alignment"][2][-1])]
        figures["analyze_process_s_csv_dataset"] = analyze_process(runs=min(runs, 3), fmt="csv")
        figures["analyze_process_s_xlsx_dataset"] = analyze_process(runs=min(runs, 3), fmt="xlsx")

    width = max(map(len, figures))
    for k, v in figures.items():
        if isinstance(v, float): v = f"{v:.4g}"
        elif isinstance(v, dict): v = ", ".join(f"{a} {b:.4g}" for a, b in v.items())
        elif isinstance(v, list): v = ", ".join(f"{x:.4g}" if isinstance(x, float) else str(x) for x in v)
        print(f"{k:<{width}}  {v}")
    if args.json: Path(args.json).write_text(json.dumps(figures, indent=2))


def analyze_process(runs=3, fmt="csv"):
    """Median wall time of a whole `carebench analyze` process on a 64 x 20 x 10 dataset (load, validate, compute, write).

    `fmt` is the dataset's format: a folder of CSVs, or one workbook (openpyxl parses about 60k cells per second)."""
    from carebench.adapters.load import load_dataset
    from carebench.adapters.synth import SynthParams, write_synthetic
    from carebench.evaluation.scores import planted_scores
    tmp = Path(tempfile.mkdtemp())
    files = write_synthetic(tmp / "w1", SynthParams(seed=1, patients=64, items=20, train_items=0), fmt=fmt)
    planted_scores(load_dataset(files["config"]), "W1", 0.2).to_csv(tmp / "scores.csv", index=False)
    exe = Path(sys.executable).with_name("carebench")
    times = []
    for i in range(runs):
        t = time.perf_counter()
        r = subprocess.run([str(exe), "analyze", "--config", str(files["config"]), "--scores", str(tmp / "scores.csv"),
                            "--out", str(tmp / f"out{i}"), "--quiet"], capture_output=True, text=True)
        times.append(time.perf_counter() - t)
        if r.returncode: raise SystemExit(r.stderr)
    return float(np.median(times))


if __name__ == "__main__":
    main()
