"""Where users wait (issue 31's figures in one command). Not a test: it prints figures.

* Track 2 on the bundled example: `carebench run data/example/config.yaml --track adaptation --no-validity --no-report`
  as a whole process, and the fine-tuning inside it (seconds, fitted models, optimiser steps, tokens, from the run's
  manifest and `adaptation_fits.json`);
* the design-validity study the first time at a design, as `analyze` minus `analyze --no-validity` (fresh caches),
  for the bundled example (its dataset, planted scores) and, unless skipped, a synthetic 2,000 patients x 50 items;
* the W1 analyze process (64 patients x 20 items, `--no-validity`): median wall seconds and peak RSS of 5 processes;
* the test command: minutes and CPU-minutes of its last measured run (`bench/test_command.json`, written by
  `python bench/test_command.py --json bench/test_command.json`).

    python bench/waits.py                     # everything (the 2,000 x 50 study takes many minutes the first time)
    python bench/waits.py --skip big          # without it
    python bench/waits.py --json waits.json   # also write the figures

Whole processes are measured as bench/scale.py measures them (GNU time's peak RSS of the child).
"""
import argparse
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from scale import rusage_process, whole  # noqa: E402  (the same process measurement as the scale benchmark)

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "data" / "example" / "config.yaml"
PARTS = ("track2", "example", "big", "w1", "tests")


def track2(root: Path) -> dict:
    "Track 2 on the bundled example: the whole process, and the fine-tuning's seconds, steps and tokens per fitted model."
    out = root / "track2"
    fig = rusage_process(["run", EXAMPLE, "--track", "adaptation", "--no-validity", "--no-report", "--out", out, "-q"])
    job = out / "jobs" / "adaptation"
    stats, fits = json.loads((job / "stats.json").read_text()), json.loads((job / "fits.json").read_text())["fits"]
    fig.update(fine_tuning_s=stats["seconds"], fits=len(fits),
               steps=sum(f.get("steps", 0) for f in fits), tokens=sum(f.get("tokens", 0) for f in fits),
               per_fit=[{k: f.get(k) for k in ("n_train_patients", "n_cases", "epochs_run", "steps", "tokens", "seconds")}
                        for f in fits])
    return fig


def planted(config: Path, scores: Path):
    from carebench.adapters.load import load_dataset
    from carebench.evaluation.scores import planted_scores
    planted_scores(load_dataset(config), "planted", alignment=0.3, seed=1).to_csv(scores, index=False)


def validity_first(config: Path, root: Path, name: str) -> dict:
    "The design-validity study's first time at a design: analyze minus analyze --no-validity, each with fresh caches."
    folder = root / name
    folder.mkdir(parents=True, exist_ok=True)
    scores = folder / "scores.csv"
    planted(config, scores)
    env = {**os.environ, "CAREBENCH_VALIDITY_CACHE": str(folder / "validity")}
    without = rusage_process(["analyze", "--config", config, "--scores", scores, "--out", folder / "nv", "--no-validity", "-q"], env)
    first = rusage_process(["analyze", "--config", config, "--scores", scores, "--out", folder / "v", "-q"], env)
    return {"analyze_no_validity": without, "analyze_validity_first": first,
            "validity_first_s": first["wall_s"] - without["wall_s"]}


def synthetic(P: int, I: int, root: Path) -> Path:
    "A synthetic design (CSV folder) with the representation track off, as bench/scale.py writes it."
    folder = root / f"{P}x{I}"
    rusage_process(["synth", "--out", folder, "--patients", P, "--items", I, "--format", "csv", "-q"])
    config = folder / "config.yaml"
    config.write_text(config.read_text().replace("\n  enabled: true", "\n  enabled: false"))
    return config


def w1(root: Path, runs: int) -> dict:
    "The W1 analyze process: 64 x 20, --no-validity, median of `runs` processes."
    config = synthetic(64, 20, root)
    scores = root / "w1_scores.csv"
    planted(config, scores)
    return whole(["analyze", "--config", config, "--scores", scores, "--out", root / "w1_{i}", "--no-validity", "-q"], runs)


def tests() -> dict:
    "The test command's last measured run, as bench/test_command.py wrote it."
    f = ROOT / "bench" / "test_command.json"
    d = json.loads(f.read_text())
    return {"minutes": round(d["wall_s"] / 60, 1), "cpu_minutes": round(d["cpu_s"] / 60, 1), "last_line": d["last_line"],
            "when": d["when"], "cores": d["cores"]}


def show(fig: dict):
    if "track2" in fig:
        t = fig["track2"]
        print(f"Track 2, bundled example: {t['wall_s']:.1f} s the whole process (peak {t['max_rss_mib']:.0f} MiB); "
              f"fine-tuning {t['fine_tuning_s']:.1f} s: {t['fits']} fitted models, {t['steps']:,} steps, {t['tokens']:,} tokens")
        for f in t["per_fit"]:
            print(f"    fit on {f['n_train_patients']} patients: {f['n_cases']} cases, {f['epochs_run']} epochs, "
                  f"{f['steps']} steps, {f['tokens']:,} tokens, {f['seconds']:.1f} s")
    for key, label in (("example", "bundled example"), ("big", "2,000 x 50")):
        if key in fig:
            v = fig[key]
            print(f"design validity the first time, {label}: {v['validity_first_s']:.1f} s "
                  f"(analyze {v['analyze_validity_first']['wall_s']:.1f} s, without it {v['analyze_no_validity']['wall_s']:.1f} s)")
    if "w1" in fig:
        print(f"W1 analyze process (64 x 20, --no-validity): {fig['w1']['wall_s']:.2f} s, peak {fig['w1']['max_rss_mib']:.0f} MiB "
              f"(median of {fig['w1']['runs']})")
    if "tests" in fig:
        t = fig["tests"]
        print(f"test command (last measured {t['when']}): {t['minutes']} minutes on {t['cores']} cores, "
              f"{t['cpu_minutes']} CPU-minutes; {t['last_line']}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--skip", nargs="*", default=[], choices=PARTS, help="figures to leave out")
    ap.add_argument("--runs", type=int, default=5, help="W1 processes (median; default 5)")
    ap.add_argument("--json", help="also write the figures to this file")
    args = ap.parse_args()
    root = Path(tempfile.mkdtemp(prefix="carebench-waits-"))
    fig = {"cpus": os.cpu_count(), "load_before": os.getloadavg()}
    try:
        if "track2" not in args.skip: fig["track2"] = track2(root)
        if "example" not in args.skip: fig["example"] = validity_first(EXAMPLE, root, "example")
        if "big" not in args.skip: fig["big"] = validity_first(synthetic(2000, 50, root), root, "big")
        if "w1" not in args.skip: fig["w1"] = w1(root, args.runs)
        if "tests" not in args.skip: fig["tests"] = tests()
    finally:
        shutil.rmtree(root, ignore_errors=True)
    fig["load_after"] = os.getloadavg()
    show(fig)
    if args.json: Path(args.json).write_text(json.dumps(fig, indent=2))


if __name__ == "__main__":
    main()
