"""Scale benchmark (issue 14). Not a test: it prints figures.

For each design (patients x items; 10 SHARES categories, 2 observers) it writes a synthetic dataset and planted scores, then
measures

* whole processes, as `/usr/bin/time` would: wall seconds and peak RSS of `carebench synth` (CSV folder and workbook),
  `carebench validate`, `carebench analyze` (without the design-validity study, with it the first time at this design, and
  with it cached) and, with --run, `carebench run --track reasoning` with the dry_run mock and its report;
* the analysis in process, phase by phase: load (read + every data check), validate (read the score file + check it),
  matrices (aligned score matrices + the statistics' input), each endpoint, write (endpoints.json, CSVs, paired deltas,
  summary), each with its wall time and its own peak of traced memory (tracemalloc, numpy arrays included; a separate pass,
  so the times are not slowed by tracing).

    python bench/scale.py                                 # 64x20, 1024x20, 2000x50
    python bench/scale.py --designs 64x20 --runs 5        # W1 only, median of 5 processes
    python bench/scale.py --designs 2000x50 --run         # also the dry_run mock's whole run
    python bench/scale.py --json scale.json               # also write the figures

Analysis settings are the defaults (B = 1,000 studentized bootstrap, 10,000 sign flips, the four reasoning-track endpoints).
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

EXE = Path(sys.executable).with_name("carebench")


TIME = shutil.which("time")                                 # GNU time: the child's own peak, whatever ours


def rusage_process(args, env=None) -> dict:
    """One process's wall time and peak resident memory, measured by GNU time when installed. (A child of this Python process
    inherits its peak at exec on Linux, so `os.wait4` would report this process's memory, not the child's.)"""
    cmd = [str(EXE), *map(str, args)]
    with tempfile.NamedTemporaryFile("r", suffix=".time") as out:
        if TIME: cmd = [TIME, "-f", "%M", "-o", out.name, *cmd]
        t = time.perf_counter()
        p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
        wall = time.perf_counter() - t
        if p.returncode: raise SystemExit(f"carebench {' '.join(map(str, args))} failed:\n{p.stderr.decode()[-2000:]}")
        text = Path(out.name).read_text().strip().splitlines()
    rss = float(text[-1]) / 1024 if text and text[-1].strip().isdigit() else float("nan")
    return {"wall_s": wall, "max_rss_mib": rss}


def whole(args, runs: int, env=None) -> dict:
    res = [rusage_process([a.replace("{i}", str(i)) if isinstance(a, str) else a for a in map(str, args)], env) for i in range(runs)]
    return {"wall_s": statistics.median(r["wall_s"] for r in res), "max_rss_mib": max(r["max_rss_mib"] for r in res), "runs": runs}


def phases(config: Path, scores: Path, out: Path, trace: bool) -> dict:
    "The analysis in process, phase by phase (as `write_analysis` does it); wall seconds, or traced peak MiB with `trace`."
    import numpy as np
    from carebench.adapters.load import load_dataset, run_inputs
    from carebench.core.config import load_config
    from carebench.core.runs import create_run
    from carebench.core.vocab import CONTEXT_FREE, CORRECT_CONTEXT, SHUFFLED_CONTEXT
    from carebench.evaluation.analyze import _write_model, endpoint_input, model_slugs
    from carebench.evaluation.scores import read_scores, score_cells, score_matrices, validate_scores
    from carebench.stats.endpoints import ENDPOINTS, Resampling, family_decisions
    figures, state = {}, {}

    def phase(name, fn):
        if trace:
            tracemalloc.start(); tracemalloc.reset_peak()
            state[name] = fn()
            figures[name] = tracemalloc.get_traced_memory()[1] / 2 ** 20
            tracemalloc.stop()
        else:
            t = time.perf_counter(); state[name] = fn(); figures[name] = time.perf_counter() - t
        return state[name]

    cfg = load_config(config)
    ds = phase("load", lambda: load_dataset(cfg))
    def validate():
        d = read_scores(scores)
        cells = score_cells(d, ds)
        return d, cells, validate_scores(d, ds, cells)
    df, cells, _ = phase("validate", validate)
    model = df["model"].iloc[0]

    def matrices():
        mats = score_matrices(df, ds, model, cells)
        complete = ~np.isnan(np.hstack([mats[c] for c in (CONTEXT_FREE, CORRECT_CONTEXT, SHUFFLED_CONTEXT)])).any(1)
        return mats, complete, endpoint_input(ds, mats, complete)
    mats, complete, inp = phase("matrices", matrices)
    rs = phase("resampling", lambda: Resampling.build(cfg.analysis, cfg.seed, model, inp.n_patients))
    results = {}
    for name in cfg.analysis.endpoints:
        results[name] = phase(name, lambda: ENDPOINTS[name].fn(inp, rs)).to_dict()
    results["data"] = {"n_pairs_analysed": int(complete.sum()), "n_pairs_excluded": int((~complete).sum())}
    results["family"] = family_decisions(results, cfg.analysis.alpha)
    if out.exists(): shutil.rmtree(out)
    inputs, resolved = run_inputs(ds)
    run = create_run(None, cfg, path=out, inputs={"scores": scores, **inputs}, resolved=resolved, seeds={"analysis": cfg.seed}, step="bench")
    phase("write", lambda: _write_model(run, model_slugs([model])[model], model, ds, mats, results, cfg))
    return figures


def design(P: int, I: int, root: Path, args) -> dict:
    from carebench.adapters.load import load_dataset
    from carebench.evaluation.scores import planted_scores
    name, runs = f"{P}x{I}", args.runs
    folder = root / name
    fig = {"design": f"{P} patients x {I} items x 10 categories, 2 observers", "pairs": P * I}
    fig["synth_csv"] = whole(["synth", "--out", folder / "csv{i}", "--patients", P, "--items", I, "--format", "csv", "-q"], runs)
    if not args.no_xlsx:
        fig["synth_xlsx"] = whole(["synth", "--out", folder / "xlsx{i}", "--patients", P, "--items", I, "-q"], 1)
    config = folder / "csv0" / "config.yaml"
    t = config.read_text().replace("\n  enabled: true", "\n  enabled: false")      # The reasoning track only (the dry_run run below)
    config.write_text(t)
    scores = folder / "scores.csv"
    planted_scores(load_dataset(config), "planted", alignment=0.3, seed=1).to_csv(scores, index=False)
    fig["validate"] = whole(["validate", config], runs)
    fig["analyze_no_validity"] = whole(["analyze", "--config", config, "--scores", scores, "--out", folder / "an{i}", "--no-validity", "-q"], runs)
    if not args.no_xlsx:                                                         # the same data as one workbook (synth's default)
        book = folder / "xlsx0" / "config.yaml"
        book.write_text(book.read_text().replace("\n  enabled: true", "\n  enabled: false"))
        fig["validate_xlsx"] = whole(["validate", book], runs)
        fig["analyze_xlsx_no_validity"] = whole(["analyze", "--config", book, "--scores", scores, "--out", folder / "ax{i}", "--no-validity", "-q"], runs)
    env = {**os.environ, "CAREBENCH_CACHE": str(folder / "cache.sqlite"), "CAREBENCH_VALIDITY_CACHE": str(folder / "validity")}
    if not args.no_validity:
        process_env = dict(env)
        fig["analyze_validity_first"] = whole(["analyze", "--config", config, "--scores", scores, "--out", folder / "warm", "-q"], 1,
                                              process_env)         # the design-validity study runs once per design, then is cached
        fig["analyze_validity_cached"] = whole(["analyze", "--config", config, "--scores", scores, "--out", folder / "av{i}", "-q"], runs, process_env)
    fig["phases_s"] = phases(config, scores, folder / "ph", trace=False)
    fig["phases_peak_traced_mib"] = phases(config, scores, folder / "ph", trace=True)
    if args.run:
        fig["run_dry_run"] = whole(["run", config, "--track", "reasoning", "--out", folder / "run{i}", "--no-validity",
                                    "--cache", folder / "run-cache{i}.sqlite", "-q"], 1, env)
    return fig


def show(name: str, fig: dict):
    print(f"\n== {name}: {fig['design']} ({fig['pairs']:,} pairs)")
    for k, v in fig.items():
        if isinstance(v, dict) and "wall_s" in v:
            print(f"  {k:<26} {v['wall_s']:8.2f} s   peak RSS {v['max_rss_mib']:8.1f} MiB   (median of {v['runs']})")
    t, m = fig["phases_s"], fig["phases_peak_traced_mib"]
    print(f"  {'in process, by phase':<26} {'time':>8}     {'peak traced':>12}")
    for k in t: print(f"    {k:<24} {t[k]:8.3f} s   {m[k]:8.1f} MiB")
    print(f"    {'sum':<24} {sum(t.values()):8.3f} s")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--designs", default="64x20,1024x20,2000x50", help="comma-separated PATIENTSxITEMS (default: %(default)s)")
    ap.add_argument("--runs", type=int, default=3, help="processes per whole-process figure (median; default 3)")
    ap.add_argument("--run", action="store_true", help="also time `carebench run` with the dry_run mock (the reasoning track, no report)")
    ap.add_argument("--no-xlsx", action="store_true", help="skip `synth` to a workbook")
    ap.add_argument("--no-validity", action="store_true", help="skip analyze with the design-validity study")
    ap.add_argument("--keep", help="write the designs into this folder and keep them (default: a temporary folder)")
    ap.add_argument("--json", help="also write the figures to this file")
    args = ap.parse_args()
    root = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="carebench-scale-"))
    root.mkdir(parents=True, exist_ok=True)
    figures = {"cpus": os.cpu_count(), "designs": {}}
    try:
        for d in args.designs.split(","):
            P, I = (int(x) for x in d.lower().split("x"))
            figures["designs"][d] = fig = design(P, I, root, args)
            show(d, fig)
    finally:
        if not args.keep: shutil.rmtree(root, ignore_errors=True)
    if args.json: Path(args.json).write_text(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
