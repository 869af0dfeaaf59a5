"""Hostile run folders (issue 26, run folders that confine): symbolic links where the report or the emulation writes, an
artifact index that points outside the run, artifacts changed or cut short after the run, an emulation against a run of
another dataset, an emulation where every call fails, and one too large to start."""
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

from hostile_corpus import CORR, Case, LABELS, _link, write_dataset

RATERS = {"raters": [{"id": "a", "persona": "You are an internist."}, {"id": "b", "persona": "You are a psychiatrist."}]}


def _base_run(t: Path) -> tuple:
    "One finished dry_run run of a small dataset (built once, by the command line), and the config it was made from."
    cfg = write_dataset(t / "ds", config={"reasoning": {"models": [{"id": "m"}], "emulation": RATERS}})
    run = t / "base_run"
    if not (run / "endpoints.json").exists():
        shutil.rmtree(run, ignore_errors=True)
        env = {**os.environ, "CAREBENCH_CACHE": str(t / "build_cache.sqlite")}
        subprocess.run([sys.executable, "-m", "carebench.cli", "run", str(cfg), "--out", str(run), "--no-report", "--no-validity", "-q"],
                       check=True, capture_output=True, env=env, cwd=Path(__file__).resolve().parents[1])
    return run, cfg


def cases(t: Path) -> list:
    t = Path(t)
    t.mkdir(parents=True, exist_ok=True)
    out = []
    add = lambda name, *a, **k: out.append(Case("h26_runs_" + name, *a, **k))
    base, cfg = _base_run(t)
    def copy(name: str) -> Path:
        dest = t / name
        shutil.rmtree(dest, ignore_errors=True)
        return Path(shutil.copytree(base, dest, symlinks=True))
    def elsewhere(name: str, sentinel: str | None = None) -> tuple:
        "A folder outside every run, with a sentinel file that a write through a link would overwrite."
        d = t / "outside" / name
        shutil.rmtree(d, ignore_errors=True); d.mkdir(parents=True)
        if sentinel is None: return d, None
        (d / sentinel).write_text("not the report's\n")
        return d, d / sentinel
    def index(run: Path, **roles):
        p = run / "artifact_index.json"
        p.write_text(json.dumps({**json.loads(p.read_text()), **roles}, indent=2))

    # --- 1. the report writes only inside its run folder: no symbolic link where it writes
    r = copy("report_link"); target, sentinel = elsewhere("report_link", "_quarto.yml")
    _link(r / "report", str(target))
    add("report_folder_is_a_symlink", ["report", r], 2, "report: a symbolic link", unchanged=sentinel)
    r = copy("pages_link"); target, sentinel = elsewhere("pages_link", "index.ipynb")
    (r / "report").mkdir(); _link(r / "report" / "pages", str(target))
    add("report_pages_folder_is_a_symlink", ["report", r], 2, "pages: a symbolic link", unchanged=sentinel)
    r = copy("site_link"); target, sentinel = elsewhere("site_link", "index.html")
    (r / "report").mkdir(); _link(r / "report" / "site", str(target))
    add("report_site_folder_is_a_symlink", ["report", r], 2, "site: a symbolic link", unchanged=sentinel)
    r = copy("page_file_link"); target, sentinel = elsewhere("page_file_link", "victim.ipynb")
    (r / "report" / "pages").mkdir(parents=True); _link(r / "report" / "pages" / "index.ipynb", str(sentinel))
    add("report_page_file_is_a_symlink", ["report", r], 2, "index.ipynb: a symbolic link", unchanged=sentinel)
    target, _ = elsewhere("emulate_out")
    add("emulate_out_is_a_symlink", ["emulate", cfg, "--out", _link(t / "emulate_out_link", str(target)), "-q"], 2,
        "emulate_out_link: a symbolic link")
    r = copy("emulate_report_link"); target, sentinel = elsewhere("emulate_report_link", "_quarto.yml")
    _link(r / "report", str(target))
    add("emulate_run_with_a_symlinked_report", ["emulate", cfg, "--run", r, "-q"], 2, "report: a symbolic link", unchanged=sentinel)

    # --- 2. the artifact index is confined to the run folder
    outside_scores = t / "outside" / "scores.csv"
    outside_scores.write_bytes((base / "scores.csv").read_bytes())
    r = copy("index_absolute"); index(r, scores=str(outside_scores))
    add("index_absolute_path", ["report", r], 2, "is outside the run folder", unchanged=outside_scores)
    r = copy("index_dotdot"); index(r, scores="../outside/scores.csv")
    add("index_dotdot_path", ["report", r], 2, "artifact 'scores': '../outside/scores.csv' is outside the run folder")
    r = copy("index_etc"); index(r, errors="../../../../../../../../etc/hostname")
    add("index_etc_hostname", ["report", r], 2, "artifact 'errors'")
    r = copy("artifact_symlink"); _link(r / "scores.csv", str(outside_scores))
    add("artifact_is_a_symlink_out", ["report", r], 2, "artifact 'scores': 'scores.csv' is outside the run folder")
    r = copy("index_old_run"); index(r, scores=str(outside_scores))            # a run from before the size and sha256 records
    m = json.loads((r / "run_manifest.json").read_text()); m.pop("artifact_files", None)
    (r / "run_manifest.json").write_text(json.dumps(m))
    add("index_absolute_path_in_an_old_run", ["report", r], 2, "artifact 'scores': '" + str(outside_scores) + "' is outside the run folder")
    r = copy("index_number"); index(r, scores=5)
    add("index_path_not_text", ["report", r], 2, "artifact 'scores': expected a path inside the run folder")
    r = copy("emulate_index_outside"); index(r, scores=str(outside_scores))
    add("emulate_run_index_outside", ["emulate", cfg, "--run", r, "-q"], 2, "is outside the run folder")

    # --- 3. artifacts changed or cut short after the run
    r = copy("truncated_scores"); s = r / "scores.csv"; s.write_bytes(s.read_bytes()[: s.stat().st_size // 2])
    add("truncated_scores", ["report", r], 2, "artifact 'scores' (")
    r = copy("changed_endpoints"); e = r / "endpoints.json"; e.write_text(e.read_text().replace('"protocol_version": "2"', '"protocol_version": "3"'))
    add("changed_endpoints_same_size", ["report", r], 2, "artifact 'endpoints' (")
    r = copy("missing_errors"); (r / "errors.csv").unlink()
    add("deleted_artifact", ["report", r], 2, "artifact 'errors' (")
    r = copy("emulate_truncated"); s = r / "scores.csv"; s.write_bytes(s.read_bytes()[: s.stat().st_size - 7])
    add("emulate_run_truncated_scores", ["emulate", cfg, "--run", r, "-q"], 2, "artifact 'scores' (")

    # --- 4. emulate --run on a run of another dataset
    flipped = [row if i != 3 else row[:3] + [1 - row[3], row[4]] for i, row in enumerate(CORR)]
    other = write_dataset(t / "other_ds", corr=flipped, config={"reasoning": {"models": [{"id": "m"}], "emulation": RATERS}})
    add("emulate_run_of_another_dataset", ["emulate", other, "--run", copy("other_dataset"), "-q"], 2,
        "input 'table.correct_context' differs")
    snaps = write_dataset(t / "other_snaps", snaps={"001": {"summary": "lives with family"}, "002": {"medical_history": ["asthma"]},
                                                      "003": {"social_history": "new partner"}},
                          config={"reasoning": {"models": [{"id": "m"}], "emulation": RATERS}})
    add("emulate_run_other_snapshots", ["emulate", snaps, "--run", copy("other_snaps_run"), "-q"], 2, "input 'snapshots' differs")

    # --- 5. every call fails: one line, with the failures by kind
    dead = write_dataset(t / "dead_ds", config={"reasoning": {"models": [{"id": "m", "malformed_rate": 1.0}], "repair_attempts": 0,
                                                              "emulation": RATERS}})
    add("emulate_every_call_fails", ["emulate", dead, "--out", t / "dead_emulation", "-q"], 2, "no rater answered: 16 of 16 calls")

    # --- 6. an emulation too large to start is refused before anything is built
    crowd = yaml.safe_load(cfg.read_text())
    crowd["dataset"] = {**crowd["dataset"], "path": str(cfg.parent / "data"), "snapshots": str(cfg.parent / "snapshots.json")}
    crowd["reasoning"]["emulation"] = {"raters": [{"id": f"r{i}", "persona": "p"} for i in range(10_000)]}
    (t / "crowd.yaml").write_text(json.dumps(crowd))                   # JSON is YAML: the fastest form to read
    add("emulate_10000_raters", ["emulate", t / "crowd.yaml", "--out", t / "crowd_emulation", "-q"], 2,
        "reasoning.emulation.max_calls: the emulation would make 80,000 calls (10,000 raters")
    crowd["reasoning"]["emulation"] = {"raters": [{"id": f"r{i}", "persona": "p"} for i in range(2_501)]}
    (t / "crowd_run.yaml").write_text(json.dumps(crowd))
    add("emulate_run_2501_raters", ["emulate", t / "crowd_run.yaml", "--run", copy("crowd_run"), "-q"], 2,
        "above the bound of 20,000")
    crowd["reasoning"]["emulation"] = {"raters": [{"id": f"r{i}", "persona": "p"} for i in range(10)], "max_calls": 50}
    (t / "crowd_small_bound.yaml").write_text(json.dumps(crowd))
    add("emulate_under_a_lowered_bound", ["emulate", t / "crowd_small_bound.yaml", "--out", t / "small_bound", "-q"], 2,
        "above the bound of 50")
    crowd["reasoning"]["emulation"] = {"raters": [{"id": "r1", "persona": "p"}], "max_calls": 0}
    (t / "crowd_zero_bound.yaml").write_text(json.dumps(crowd))
    add("emulate_max_calls_zero", ["validate", t / "crowd_zero_bound.yaml"], 2, "max_calls must be at least 1")
    return out
