"""Benchmark of the distribution-shift evaluation (issue 16). Not a test: it prints figures.

1. Calibration: pairs of datasets drawn from the same process (no shift; `demo_input`, 8 items × 4 categories per patient,
   alignment 0.2), the difference's interval for every endpoint (`carebench.stats.shift`): how often it excludes 0 (the
   two-sided level, nominal 1 − ci_level = 0.05) per CI method and design, with a binomial interval for each rate.
2. Power: the same with the shifted dataset's alignment lowered (0.2 → 0.05).
3. Cost: `carebench run` of a shifted pair (`carebench synth --shift`, the representation track only, no report), wall time and peak memory of
   the whole process, and the share of it spent in the shift evaluation (from the run's log).

    python bench/shift.py [--sims 1000] [--quick]
"""
import argparse
import math
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from scipy.stats import binomtest

from carebench.core.config import AnalysisConfig
from carebench.stats.endpoints import demo_input
from carebench.stats.shift import SHIFT_CONTRASTS, shift_differences

NAMES = ("context_specificity", "directional_alignment", "context_sensitivity", "brier_improvement", "class_correspondence", "mantel_haenszel")


def rates(sims: int, PA: int, PB: int, method: str, alignment_b: float = 0.2, B: int = 500, seed: int = 0) -> dict:
    "Per endpoint: the share of defined intervals that exclude 0, and how many were defined."
    s = AnalysisConfig(n_bootstrap=B, n_permutations=100, ci_method=method)
    out = {n: [0, 0] for n in NAMES}
    for i in range(sims):
        a = demo_input(PA, 8, 4, alignment=0.2, noise=0.3, seed=seed * 100_000 + 2 * i)
        b = demo_input(PB, 8, 4, alignment=alignment_b, noise=0.3, seed=seed * 100_000 + 2 * i + 1)
        d = shift_differences(a, b, NAMES, s, i, "bench")
        for n in NAMES:
            lo, hi = d[n]["overall"].ci
            if np.isfinite(lo) and np.isfinite(hi): out[n][0] += not lo <= 0 <= hi; out[n][1] += 1
    return out


def show(title: str, table: dict):
    print(title)
    print(f"  {'design':<14} {'method':<12} " + " ".join(f"{n[:18]:>20}" for n in NAMES))
    for (PA, PB, method), r in table.items():
        cells = []
        for n in NAMES:
            k, m = r[n]
            ci = binomtest(k, m).proportion_ci() if m else None
            cells.append(f"{k / m:.3f} [{ci.low:.3f},{ci.high:.3f}]" if m else "n/a")
        print(f"  {f'{PA} vs {PB}':<14} {method:<12} " + " ".join(f"{c:>20}" for c in cells))


def cost():
    tmp = Path(tempfile.mkdtemp())
    subprocess.run([sys.executable, "-m", "carebench.cli", "synth", "--out", tmp / "pair", "--shift", "--seed", "7"], check=True, capture_output=True)
    t0 = time.time()
    r = subprocess.run(["/usr/bin/time", "-v", sys.executable, "-m", "carebench.cli", "run", tmp / "pair" / "config.yaml", "--track",
                        "representation", "--no-report", "--no-validity", "--out", tmp / "run", "-q"], capture_output=True, text=True)
    wall = time.time() - t0
    rss = next((int(l.split()[-1]) for l in r.stderr.splitlines() if "Maximum resident" in l), None)
    shift_s = __import__("json").loads((tmp / "run" / "run_manifest.json").read_text())["representation_shift"]["seconds"]
    print(f"carebench run of a shifted pair (12 + 12 patients, the representation track, no report): {wall:.1f} s wall, peak RSS "
          f"{rss / 1024:.0f} MB; the shift job {shift_s:.1f} s")


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--sims", type=int, default=1000)
    ap.add_argument("--quick", action="store_true", help="200 simulations, two designs")
    a = ap.parse_args()
    sims = 200 if a.quick else a.sims
    designs = [(8, 8), (12, 24)] if a.quick else [(8, 8), (12, 24), (30, 30)]
    t0 = time.time()
    show(f"No shift: share of intervals excluding 0 (nominal 0.05), {sims} pairs of datasets each",
         {(PA, PB, m): rates(sims, PA, PB, m, seed=1) for PA, PB in designs for m in ("studentized", "t", "percentile")})
    show(f"Shift (alignment 0.2 → 0.05): share of intervals excluding 0 (power), {sims} pairs each",
         {(PA, PB, "studentized"): rates(sims, PA, PB, "studentized", alignment_b=0.05, seed=2) for PA, PB in designs})
    print(f"simulations: {time.time() - t0:.0f} s")
    cost()
