"""Interval coverage under unbalanced designs, and intervals inside their range (issue 29). Not a test: it prints figures.

Coverage: for each scenario and number of patients, `--datasets` datasets are generated
(`carebench.stats.simulate.generate`), and every interval method's 95% interval of each quantity (the confirmatory
contrasts and the two descriptive means) is checked against the scenario's population value. `studentized` is the
package's: the bootstrap-t, never narrower than the t interval at the fewer of Kish's and 1.25 × Satterthwaite's
effective patients; `Kish floor` is the bootstrap-t never narrower than the t interval at Kish's number alone;
`bootstrap-t alone` has no floor. The median Kish effective number of patients is printed beside each size.

Range: with `--range N`, N datasets of every null scenario of `carebench simulate` at each size go through the package's whole path (`run_endpoints`, which keeps each interval
in its endpoint's registered range), and every interval (overall, per category, and of each named part) whose end lies outside the range its endpoint registers, or that does
not contain its estimate, is counted.

`unbalanced_binary_sparse` is `unbalanced` with scores of 0 or 1 only and Δ_ref ≠ 0 in about 3% of cells (shifts in
3%, no transient observer noise); its confirmatory tests reject 0.002–0.038 of 1,000 null datasets at 8, 12 and 24
patients.

    python bench/coverage.py                         # unbalanced and unbalanced_binary_sparse, 8 / 12 / 24 / 48 patients
    python bench/coverage.py --scenarios baseline unbalanced --patients 12 --datasets 200 --json out.json
    python bench/coverage.py --range 100             # also the range check over every null scenario
"""
import argparse
import json
import math
import time

import numpy as np
import pandas as pd

from scipy.special import stdtrit

from carebench.core.config import AnalysisConfig
from carebench.core.seeds import derive_seed
from carebench.stats import bootstrap as bs
from carebench.stats.endpoints import ENDPOINTS
from carebench.stats.measures import effective_epsilon
from carebench.stats.endpoints import run_endpoints
from carebench.stats.signflip import SignFlips, signflip_lower_bound
from carebench.stats.simulate import COVERAGE, PART_OF, SCENARIOS, coverage_cells, generate, planted_alignment
from carebench.stats.simulate import truth

METHODS = ("percentile", "t", "bootstrap-t alone", "Kish floor", "studentized", "sign-flip inverted")
N_FLIPS = 2000
ALL = SCENARIOS


@np.errstate(invalid="ignore", divide="ignore")
def bootstrap_t(S, n, W, kish_floor: bool) -> tuple:
    "The bootstrap-t interval without a floor, or with the floor at Kish's effective patients alone (for comparison)."
    est = S.sum(0) / n.sum(0)
    reps = (W @ S) / (W @ n)
    t = bs._studentized_t(S, n, est, reps, W, (n > 0).sum(0))
    q = bs._quantiles(t, np.array([0.975, 0.025]))
    se = bs.ratio_se(S, n, est)
    lo, hi = float(est[0] - q[0, 0] * se[0]), float(est[0] - q[0, 1] * se[0])
    if not kish_floor: return lo, hi
    z = stdtrit(max(float(bs.effective_patients(n)[0]) - 1, 1), 0.975) * se[0]
    return min(lo, est[0] - z), max(hi, est[0] + z)


def signflip_interval(S, n, flips: SignFlips) -> tuple:
    "The two-sided 95% interval that inverts the cluster sign-flip test: each side the exact bound at 2.5%."
    lo = signflip_lower_bound(S, n, flips, alpha=0.025)[0]
    hi = -signflip_lower_bound(-S, n, flips, alpha=0.025)[0]
    return float(lo), float(hi)


def coverage(scenario: str, patients: int, datasets: int, n_boot: int, eps: float = 0.01) -> tuple:
    "Per quantity and method: coverage of the population value, and the median width of the intervals (NaN: none)."
    s = ALL[scenario]
    t, a, e = truth(s, eps, 0), planted_alignment(s, eps, 0), effective_epsilon(eps)
    hits, widths, kish = {(q, m): 0 for q in COVERAGE for m in METHODS}, {}, []
    flips = SignFlips.draw(patients, N_FLIPS, np.random.default_rng(derive_seed(0, "flips", scenario, patients)))
    for i in range(datasets):
        inp = generate(s, patients, np.random.default_rng(derive_seed(0, "simulate", scenario, patients, i)), a)
        W = bs.bootstrap_weights(patients, n_boot, np.random.default_rng(derive_seed(0, "ci", scenario, patients, i)))
        for q, (v, mask) in coverage_cells(inp, e).items():
            S, n = bs.cluster_sums(v, inp.cluster, inp.n_patients, mask)
            S, n = S.sum(1, keepdims=True), n.sum(1, keepdims=True)
            kish.append(float(bs.effective_patients(n)[0]))
            for m in METHODS:
                if m == "sign-flip inverted": lo, hi = signflip_interval(S, n, flips)
                elif m in ("bootstrap-t alone", "Kish floor"): lo, hi = bootstrap_t(S, n, W, m == "Kish floor")
                else: lo, hi = bs.ratio_bootstrap(S, n, W, 0.95, m).ci[0]
                # an interval the method cannot give (a bound no flip pattern reaches) covers nothing here
                hits[(q, m)] += bool(lo <= t[q] <= hi)
                widths.setdefault((q, m), []).append(hi - lo)
    table = pd.Series({k: v / datasets for k, v in hits.items()}).unstack()[list(METHODS)]
    width = pd.Series({k: float(np.nanmedian(v)) if np.isfinite(v).any() else math.nan
                       for k, v in widths.items()}).unstack()[list(METHODS)]
    return table, width, float(np.median(kish))


def checks(result, bounds: tuple, part_bounds: dict):
    "(inside its range, contains its estimate) for every interval of an endpoint's result: overall and per category."
    for e in (result.overall, *result.per_category.values()):
        yield bounds, e.estimate, e.ci
        for k, v in e.values.items():
            if k.startswith("ci_") and k[3:] in part_bounds: yield part_bounds[k[3:]], e.values.get(k[3:]), v


def out_of_range(scenarios, patients, datasets: int) -> dict:
    """Per scenario × size: intervals checked (every endpoint, overall and per category, with the named parts), ends
    outside the registered range, estimates outside their interval."""
    out, settings = {}, AnalysisConfig()
    names = tuple(n for n in COVERAGE if n not in PART_OF)
    for sc in scenarios:
        s = ALL[sc]
        a = planted_alignment(s, settings.epsilon, 0)
        for p in patients:
            checked = outside = missed = 0
            for i in range(datasets):
                inp = generate(s, p, np.random.default_rng(derive_seed(0, "simulate", sc, p, i)), a)
                res = run_endpoints(inp, settings, derive_seed(0, "resample", sc, p, i), "simulation", names)
                for name, r in res.items():
                    for (blo, bhi), est, (lo, hi) in checks(r, ENDPOINTS[name].bounds, ENDPOINTS[name].part_bounds):
                        if math.isnan(lo) or math.isnan(hi): continue
                        checked += 1
                        outside += bool(lo < blo - 1e-12 or hi > bhi + 1e-12)
                        missed += bool(est is not None and not math.isnan(est) and not lo - 1e-12 <= est <= hi + 1e-12)
            out[(sc, p)] = (checked, outside, missed)
            print(f"range: {sc}, {p} patients: {checked} intervals, {outside} outside the range, {missed} without "
                  f"their estimate", flush=True)
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scenarios", nargs="+", default=["unbalanced", "unbalanced_binary_sparse"], choices=sorted(ALL))
    ap.add_argument("--patients", nargs="+", type=int, default=[8, 12, 24, 48])
    ap.add_argument("--range", type=int, default=0, help="datasets per null scenario and size for the range check")
    ap.add_argument("--datasets", type=int, default=400)
    ap.add_argument("--bootstrap", type=int, default=500)
    ap.add_argument("--json", help="also write the figures to this file")
    a = ap.parse_args(argv)
    out = []
    for sc in a.scenarios:
        for p in a.patients:
            t0 = time.perf_counter()
            table, width, kish = coverage(sc, p, a.datasets, a.bootstrap)
            print(f"\n{sc}, {p} patients (median Kish effective patients {kish:.1f}), {a.datasets} datasets, "
                  f"{a.bootstrap} resamples, {time.perf_counter() - t0:.0f} s; coverage / median width")
            print((table.round(3).astype(str) + " / " + width.round(3).astype(str)).to_string())
            out.append(dict(scenario=sc, patients=p, datasets=a.datasets, kish_median=round(kish, 2),
                            coverage={q: table.loc[q].round(4).to_dict() for q in table.index},
                            median_width={q: width.loc[q].round(4).to_dict() for q in width.index}))
    doc = {"coverage": out}
    if a.range:
        nulls = [k for k, v in ALL.items() if v.is_null]
        r = out_of_range(nulls, a.patients, a.range)
        doc["range"] = [dict(scenario=sc, patients=p, datasets=a.range, intervals=c, outside=o, estimate_outside=m)
                        for (sc, p), (c, o, m) in r.items()]
        print(f"\nrange, all {len(r)} cells: {sum(v[0] for v in r.values())} intervals, "
              f"{sum(v[1] for v in r.values())} outside the range, {sum(v[2] for v in r.values())} without their estimate")
    if a.json:
        with open(a.json, "w") as f: json.dump(doc, f, indent=1)


if __name__ == "__main__":
    main()
