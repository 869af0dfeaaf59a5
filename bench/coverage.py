"""Interval coverage under unbalanced designs (issue 29, item 2). Not a test: it prints figures.

For each scenario and number of patients, `--datasets` datasets are generated (`carebench.stats.simulate.generate`),
and every interval method's 95% interval of each quantity (the confirmatory contrasts and the two descriptive means) is
checked against the scenario's population value. `studentized` is the package's: the bootstrap-t, never narrower than
the t interval at Kish's effective number of patients; `bootstrap-t alone` is the same without that floor. The median
Kish effective number of patients is printed beside each size.

    python bench/coverage.py                         # unbalanced, 8 / 12 / 24 patients, 400 datasets
    python bench/coverage.py --scenarios baseline unbalanced --patients 12 --datasets 200 --json out.json
"""
import argparse
import json
import time

import numpy as np
import pandas as pd

from carebench.core.seeds import derive_seed
from carebench.stats import bootstrap as bs
from carebench.stats.measures import effective_epsilon
from carebench.stats.simulate import COVERAGE, SCENARIOS, coverage_cells, generate, planted_alignment, truth

METHODS = ("percentile", "t", "bootstrap-t alone", "studentized")


def bootstrap_t_alone(S, n, W) -> tuple:
    "The bootstrap-t interval without the Kish floor (for comparison)."
    est = S.sum(0) / n.sum(0)
    reps = (W @ S) / (W @ n)
    t = bs._studentized_t(S, n, est, reps, W, (n > 0).sum(0))
    q = bs._quantiles(t, np.array([0.975, 0.025]))
    se = bs.ratio_se(S, n, est)
    return float(est[0] - q[0, 0] * se[0]), float(est[0] - q[0, 1] * se[0])


def coverage(scenario: str, patients: int, datasets: int, n_boot: int, eps: float = 0.01) -> tuple:
    s = SCENARIOS[scenario]
    t, a, e = truth(s, eps, 0), planted_alignment(s, eps, 0), effective_epsilon(eps)
    hits, kish = {(q, m): 0 for q in COVERAGE for m in METHODS}, []
    for i in range(datasets):
        inp = generate(s, patients, np.random.default_rng(derive_seed(0, "simulate", scenario, patients, i)), a)
        W = bs.bootstrap_weights(patients, n_boot, np.random.default_rng(derive_seed(0, "ci", scenario, patients, i)))
        for q, (v, mask) in coverage_cells(inp, e).items():
            S, n = bs.cluster_sums(v, inp.cluster, inp.n_patients, mask)
            S, n = S.sum(1, keepdims=True), n.sum(1, keepdims=True)
            kish.append(float(bs.effective_patients(n)[0]))
            for m in METHODS:
                lo, hi = (bootstrap_t_alone(S, n, W) if m == "bootstrap-t alone"
                          else bs.ratio_bootstrap(S, n, W, 0.95, m).ci[0])
                hits[(q, m)] += bool(lo <= t[q] <= hi)
    table = pd.Series({k: v / datasets for k, v in hits.items()}).unstack()[list(METHODS)]
    return table, float(np.median(kish))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scenarios", nargs="+", default=["unbalanced"])
    ap.add_argument("--patients", nargs="+", type=int, default=[8, 12, 24])
    ap.add_argument("--datasets", type=int, default=400)
    ap.add_argument("--bootstrap", type=int, default=500)
    ap.add_argument("--json", help="also write the figures to this file")
    a = ap.parse_args(argv)
    out = []
    for sc in a.scenarios:
        for p in a.patients:
            t0 = time.perf_counter()
            table, kish = coverage(sc, p, a.datasets, a.bootstrap)
            print(f"\n{sc}, {p} patients (median Kish effective patients {kish:.1f}), {a.datasets} datasets, "
                  f"{a.bootstrap} resamples, {time.perf_counter() - t0:.0f} s")
            print(table.round(3).to_string())
            out.append(dict(scenario=sc, patients=p, datasets=a.datasets, kish_median=round(kish, 2),
                            coverage={q: table.loc[q].round(4).to_dict() for q in table.index}))
    if a.json:
        with open(a.json, "w") as f: json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
