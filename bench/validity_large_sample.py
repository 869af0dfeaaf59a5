"""Design validity two ways at designs where both run: the simulated datasets (`validity_datasets` per null scenario)
and the large-sample rates from one population's moments per scenario (`carebench.stats.large_sample`). Not a test:
it prints, per design and confirmatory endpoint, the worst null rejection rate, the power at the stated effect and the
lowest coverage each way with their intervals, and the seconds each took; and the large-sample check alone at
2,000 patients x 50 items (the datasets took 413 s there: bench/waits_validity_before.json).

    python bench/validity_large_sample.py --json bench/validity_large_sample.json
"""
import argparse
import json
import os
import tempfile
import time
from pathlib import Path

from carebench.core.config import AnalysisConfig
from carebench.stats.design import design_validity
from carebench.stats.endpoints import FAMILY

DESIGNS = [(500, 10, 10, None), (600, 20, 5, None), (1000, 8, 10, None),      # patients, items per patient, categories,
           (500, 10, 10, {"context_specificity": 0.002, "directional_alignment": 0.015,   # and effects small enough that
                          "context_sensitivity": 0.0005, "brier_improvement": 0.0005})]   # power is between 0 and 1


def both(P: int, items: int, C: int, datasets: int, effects=None) -> dict:
    "The check at one design, as the datasets give it and as the moments give it (fresh caches, this process)."
    out = {}
    for way, settings in (("datasets", AnalysisConfig(validity_datasets=datasets, validity_large_sample_from=10 ** 9,
                                                      power_effect=effects)),
                          ("large_sample", AnalysisConfig(validity_datasets=datasets, power_effect=effects))):
        t0 = time.perf_counter()
        doc = design_validity(P, items, C, 2, 1, settings, cache_dir=Path(tempfile.mkdtemp()))
        out[way] = {"seconds": round(time.perf_counter() - t0, 1), "method": doc["method"], "basis": doc["basis"],
                    "power_effects": doc["power_effects"], "edgeworth_term": doc.get("edgeworth_term"),
                    "endpoints": doc["endpoints"]}
    return out


def show(P, items, C, r):
    print(f"\n{P} patients x {items} items x {C} categories, power at {r['large_sample']['power_effects']}: datasets "
          f"{r['datasets']['seconds']} s, large-sample {r['large_sample']['seconds']} s")
    print(f"{'endpoint':24} {'worst null rate (datasets | moments)':44} {'power':16} {'lowest coverage':16}")
    for q in FAMILY:
        d, m = r["datasets"]["endpoints"].get(q, {}), r["large_sample"]["endpoints"].get(q, {})
        if not d or not m: continue
        fp = lambda e: f"{e['false_positive_rate']:.3f} [{e['false_positive_rate_low']:.3f}, {e['false_positive_rate_high']:.3f}]"
        print(f"{q:24} {fp(d)} | {fp(m)}   {d['power']:.3f} | {m['power']:.3f}   "
              f"{d.get('coverage', float('nan')):.3f} | {m.get('coverage', float('nan')):.3f}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--datasets", type=int, default=200, help="simulated datasets per scenario (default 200)")
    ap.add_argument("--json", help="also write the figures to this file")
    args = ap.parse_args()
    fig = {"cpus": os.cpu_count(), "load_before": os.getloadavg(), "datasets": args.datasets, "designs": []}
    for P, items, C, effects in DESIGNS:
        r = both(P, items, C, args.datasets, effects)
        fig["designs"].append({"patients": P, "items": items, "categories": C, **r})
        show(P, items, C, r)
    t0 = time.perf_counter()
    big = design_validity(2000, 50, 10, 2, 1, AnalysisConfig(), cache_dir=Path(tempfile.mkdtemp()))
    fig["hospital"] = {"patients": 2000, "items": 50, "categories": 10, "seconds": round(time.perf_counter() - t0, 1),
                       "basis": big["basis"], "endpoints": big["endpoints"]}
    print(f"\n2,000 patients x 50 items x 10 categories, large-sample: {fig['hospital']['seconds']} s in this process")
    fig["load_after"] = os.getloadavg()
    if args.json: Path(args.json).write_text(json.dumps(fig, indent=2))


if __name__ == "__main__":
    main()
