"""The `carebench synth` and `carebench validate` commands, run as subprocesses."""
import csv
import json

import numpy as np
import openpyxl

from carebench.adapters.synth import expected_labels
from conftest import EXAMPLE, run_cli

FILES = ("dataset.xlsx", "snapshots.json", "truth.json", "config.yaml")


def test_synth_is_deterministic_whatever_the_hash_seed(tmp_path):
    a = run_cli("synth", "--out", tmp_path / "a", "--seed", 11, env={"PYTHONHASHSEED": "1"})
    b = run_cli("synth", "--out", tmp_path / "b", "--seed", 11, env={"PYTHONHASHSEED": "987"})
    c = run_cli("synth", "--out", tmp_path / "c", "--seed", 12)
    assert a.returncode == b.returncode == c.returncode == 0, a.stderr + b.stderr + c.stderr
    for name in FILES:
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name
    assert (tmp_path / "a/truth.json").read_bytes() != (tmp_path / "c/truth.json").read_bytes()


def _observed_nonzero(truth):
    """Non-zero Δ_ref counts rebuilt from truth.json alone (designed shifts, misses and slips)."""
    exp = expected_labels(truth)
    keys = truth["categories"]
    counts = np.zeros(len(keys), dtype=int)
    for pair, free in exp["context_free"].items():
        counts += (exp["correct_context"][pair].mean(0) - free.mean(0) != 0)
    return dict(zip(keys, counts.tolist()))


def test_validate_reports_delta_ref_that_match_truth(tmp_path):
    assert run_cli("synth", "--out", tmp_path, "--seed", 4, "--patients", 10, "--observers", 3).returncode == 0
    r = run_cli("validate", tmp_path / "config.yaml", "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    truth = json.loads((tmp_path / "truth.json").read_text())
    assert (out["n_patients"], out["n_pairs"], out["observers_per_pair"]) == (10, 100, 3)
    assert out["categories"] == truth["categories"]
    assert out["nonzero_delta_ref"] == _observed_nonzero(truth)
    # observer noise moves the counts only a little away from the design
    designed = truth["designed_nonzero_delta_ref"]
    assert sum(abs(out["nonzero_delta_ref"][k] - designed[k]) for k in designed) <= len(truth["slips"]) + len(truth["misses"])


def test_validate_without_noise_equals_the_design(tmp_path):
    assert run_cli("synth", "--out", tmp_path, "--seed", 9, "--noise", 0, "--miss-rate", 0).returncode == 0
    out = json.loads(run_cli("validate", tmp_path / "config.yaml", "--json").stdout)
    assert out["nonzero_delta_ref"] == json.loads((tmp_path / "truth.json").read_text())["designed_nonzero_delta_ref"]


def test_validate_text_summary_never_prints_item_or_snapshot_text(tmp_path):
    assert run_cli("synth", "--out", tmp_path, "--seed", 2).returncode == 0
    r = run_cli("validate", tmp_path / "config.yaml")
    assert r.returncode == 0 and "OK" in r.stdout
    truth = json.loads((tmp_path / "truth.json").read_text())
    snaps = json.loads((tmp_path / "snapshots.json").read_text())
    texts = {p["item"] for p in truth["pairs"]} | {snaps[p]["summary"] for p in snaps}
    assert not any(t in r.stdout or t in r.stderr for t in texts)


def test_invalid_data_exits_2_with_one_line_naming_the_place(tmp_path):
    assert run_cli("synth", "--out", tmp_path, "--seed", 5).returncode == 0
    wb = openpyxl.load_workbook(tmp_path / "dataset.xlsx")
    wb["context_free"]["E7"] = "yes"          # column E = "Diagnoses", row 7
    wb.save(tmp_path / "dataset.xlsx")
    r = run_cli("validate", tmp_path / "config.yaml")
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.count("\n") == 1 and r.stderr.startswith("error: ") and "Traceback" not in r.stderr
    assert "dataset.xlsx, table 'context_free', row 7, column 'Diagnoses': label 'yes' is not 0 or 1" in r.stderr


def test_invalid_config_exits_2(tmp_path):
    (tmp_path / "c.yaml").write_text("dataset:\n  adapter: paired_context\n  path: x.xlsx\n  snapshots: s.json\nanalysis: {epsilon: 0.01, epsilom: 1}\n")
    r = run_cli("validate", tmp_path / "c.yaml")
    assert r.returncode == 2 and "analysis.epsilom: unknown key" in r.stderr and "Traceback" not in r.stderr


def test_other_names_csv_and_custom_taxonomy_load_through_config_alone(tmp_path):
    """A dataset unlike the default in every configurable way: CSV folder, table and column names, taxonomy."""
    data = tmp_path / "study_tables"
    data.mkdir()
    header = ["PID", "Rater", "EHR string", "Stigma", "Privacy risk", "Comment"]
    free = [["007", "A", "NA", 0, 1, ""], ["007", "B", "NA", 0, 1, ""], ["010", "A", "HbA1c 9%", 0, 0, "x"], ["010", "B", "HbA1c 9%", 1, 0, ""]]
    corr = [["007", "A", "NA", 1, 1, ""], ["007", "B", "NA", 1, 1, ""], ["010", "A", "HbA1c 9%", 0, 0, ""], ["010", "B", "HbA1c 9%", 0, 0, ""]]
    for name, rows in (("baseline", free), ("with_chart", corr)):
        with open(data / f"{name}.csv", "w", newline="") as f:
            csv.writer(f).writerows([header, *rows])
    (tmp_path / "charts.json").write_text(json.dumps({"007": {"summary": "Seen for follow-up", "labs": ["Sodium 128 mmol/L"]},
                                                      "010": {"medical_history": ["Type 2 diabetes"], "custom_field": "kept"}}))
    (tmp_path / "study.yaml").write_text("""
dataset:
  adapter: paired_context
  path: study_tables
  snapshots: charts.json
  tables: {train: null, context_free: baseline, correct_context: with_chart}
  columns: {patient: PID, observer: Rater, item: EHR string}
  categories: {stigma: Stigma, privacy: Privacy risk}
  ignore_columns: [Comment]
label_space:
  - {key: privacy, name: Privacy, definition: Disclosure would harm the patient's privacy.}
  - {key: stigma, name: Stigma, definition: The item could expose the patient to stigma.}
""")
    r = run_cli("validate", tmp_path / "study.yaml", "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["categories"] == ["privacy", "stigma"]
    assert (out["n_patients"], out["n_pairs"], out["n_train_items"]) == (2, 2, 0)
    # patient 007, item "NA": stigma 0 -> 1 (up); patient 010: stigma 0.5 -> 0 (down)
    assert out["nonzero_delta_ref"] == {"privacy": 0, "stigma": 2}
    assert out["delta_ref_up"]["stigma"] == 1 and out["delta_ref_down"]["stigma"] == 1


def test_limit_smoke_run_and_cache_status_json(tmp_path):
    r = run_cli("run", EXAMPLE / "config.yaml", "--track", "reasoning", "--limit", "3", "--out", tmp_path / "run", "--cache",
                tmp_path / "cache.sqlite", "--quiet", "--no-report", "--no-validity")
    assert r.returncode == 0, r.stderr
    manifest = json.loads((tmp_path / "run" / "adapter_manifest.json").read_text())
    assert manifest["counts"]["n_patients"] == 3 and any("limited to the first 3" in n for n in manifest["notes"])
    assert "requests: 90 (90 distinct prompts: 0 from the cache, 90 asked)" in r.stdout
    s = run_cli("cache", "status", "--cache", tmp_path / "cache.sqlite", "--json")
    entries = json.loads(s.stdout)["entries"]
    assert s.returncode == 0 and entries[0]["model"] == "dry_run_example" and entries[0]["completed"] + entries[0]["failed"] == 90
    bad = run_cli("run", EXAMPLE / "config.yaml", "--limit", "1", "--out", tmp_path / "run1")
    assert bad.returncode == 2 and "at least 2" in bad.stderr and not (tmp_path / "run1").exists()


def test_shifted_pair_runs_offline_to_a_shift_page(tmp_path):
    """`carebench synth --shift` writes a pair; `carebench validate` checks both datasets; `carebench run` fits the representation track on one,
    scores the other, prints the shift summary and builds the report with its shift page, all offline."""
    r = run_cli("synth", "--out", tmp_path / "pair", "--shift", "--patients", 8, "--seed", 5)
    assert r.returncode == 0, r.stderr
    assert {p.name for p in (tmp_path / "pair").iterdir()} >= {"source", "shifted", "config.yaml"}
    r = run_cli("validate", tmp_path / "pair" / "config.yaml")
    assert r.returncode == 0 and "OK: the dataset passed every check (and the shifted one)" in r.stdout, r.stderr
    r = run_cli("run", tmp_path / "pair" / "config.yaml", "--track", "representation", "--no-validity", "--out", tmp_path / "run", "-q")
    assert r.returncode == 0, r.stderr
    assert "shift: another site (vocabulary 0.5, length 1.5, prevalence 1): in-distribution → shifted" in r.stdout
    assert "context_specificity" in r.stdout.split("shift:")[1]
    site = tmp_path / "run" / "report"
    shift_page = next(site.rglob("shift.html"))
    text = shift_page.read_text(encoding="utf-8")
    assert "Jaccard overlap" in text and "Context specificity" in text and "Traceback" not in text
    m = json.loads((tmp_path / "run" / "run_manifest.json").read_text())
    assert m["shift"]["n_patients"] == 8 and m["representation_shift"]["n_pairs_shifted"] == 80


def test_every_command_runs_as_a_module():
    "`python -m carebench.cli` knows the study commands too (they register into the package's module, not `__main__`)."
    import subprocess, sys
    for command in ("simulate", "plan", "bench"):
        r = subprocess.run([sys.executable, "-m", "carebench.cli", command, "--help"], capture_output=True, text=True,
                           timeout=120)
        assert r.returncode == 0 and f"usage: carebench {command}" in r.stdout, (command, r.stderr)
