"""Calibration of the prompt-format spread (the reasoning track, `reasoning.formats`): on the bundled example with the dry_run mock, over
mock seeds, how often the interval of the between-format SD beyond noise covers the planted spread (the same mock without
per-call noise), for a planted format effect and for none.

    python bench/format_spread.py [--seeds 20] [--formats 5] [--format-noise 0.05] [--json FILE]
"""
import argparse
import json
import tempfile
import time
from pathlib import Path

import pandas as pd

from carebench.core.config import load_config
from carebench.tracks.runner import run_tracks
from carebench.models.backends import ModelConfig

ROOT = Path(__file__).resolve().parents[1]
ENDPOINTS = ("context_specificity", "directional_alignment", "context_sensitivity")


def spread(cfg, options, out, cache, k):
    c = cfg.with_section("reasoning", formats=k, models=(ModelConfig("mock", "dry_run", options=options),))
    r = run_tracks(c, tracks=["reasoning"], out=out, cache_path=cache, validity=False)
    return pd.read_csv(r.run.artifact("format_spread")).set_index("endpoint")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--formats", type=int, default=5)
    ap.add_argument("--format-noise", type=float, nargs="+", default=[0.05, 0.0])
    ap.add_argument("--json")
    args = ap.parse_args()
    cfg, tmp = load_config(ROOT / "data/example/config.yaml"), Path(tempfile.mkdtemp())
    figures, t0 = {"formats": args.formats, "seeds": args.seeds, "dataset": "bundled example"}, time.time()
    for fn in args.format_noise:
        hits = {e: 0 for e in ENDPOINTS}
        for seed in range(args.seeds):
            o = {"alignment": 0.5, "format_noise": fn, "seed": seed}
            noisy = spread(cfg, o, tmp / f"n{fn}-{seed}", tmp / "cache.sqlite", args.formats)
            truth = spread(cfg, {**o, "noise": 0.0}, tmp / f"t{fn}-{seed}", tmp / "cache.sqlite", args.formats)
            for e in ENDPOINTS:
                hits[e] += bool(noisy.at[e, "spread_ci_low"] <= truth.at[e, "sd"] <= noisy.at[e, "spread_ci_high"])
        for e in ENDPOINTS: figures[f"coverage_{e}_format_noise_{fn}"] = hits[e] / args.seeds
    figures["seconds"] = round(time.time() - t0, 1)
    width = max(map(len, figures))
    for k, v in figures.items(): print(f"{k:<{width}}  {v}")
    if args.json: Path(args.json).write_text(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
