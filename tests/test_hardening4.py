"""Hardening 4, checked by what reaches the disk and the chart: no secret in a run folder made by papermill, a FHIR chart
sanitised of what a reader cannot see, an open-ended period that never becomes the index date, an item that leaks by its
code, a relative database URL read from the config's folder, worker processes capped by the machine, and a plan under
no effect that plants none."""
import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from conftest import ROOT, run_cli

CANARY = "c4n4ryT0kenZq8x0"
LABELS = [{"key": "risk", "name": "Risk", "definition": "risk of harm"}, {"key": "care", "name": "Care", "definition": "care"}]


def _long(path: Path, rows: list) -> Path:
    "A long labels table: each (patient, item) labelled by two observers in both conditions, the labels moving a little."
    lines = ["patient_id,observer,item,condition,category,label"]
    for k, (p, item) in enumerate(rows):
        for o in ("o1", "o2"):
            for cond in ("context_free", "correct_context"):
                for j, cat in enumerate(("risk", "care")):
                    lines.append(f"{p},{o},{item},{cond},{cat},{int(cond == 'correct_context' and (k + j) % 2 == 0)}")
    path.write_text("\n".join(lines) + "\n")
    return path


def _fhir_dataset(folder: Path, resources: list, items: list | None = None, rows=None, **extra) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "bundle.ndjson").write_text("\n".join(json.dumps(r) for r in resources) + "\n")
    ds = {"adapter": "fhir", "bundles": "bundle.ndjson",
          "labels": str(_long(folder / "labels.csv", rows or [("001", "statin"), ("002", "insulin"), ("003", "HIV test")])),
          **extra}
    if items is not None:
        (folder / "items.ndjson").write_text("\n".join(json.dumps(r) for r in items) + "\n")
        ds["items"] = "items.ndjson"
    (folder / "config.yaml").write_text(yaml.safe_dump({"dataset": ds, "label_space": LABELS}))
    return folder / "config.yaml"


def _patients(*extra):
    "Three patients, each with an immunization (a chart with nothing to show is refused), and `extra` resources."
    born = {"001": "1950-03-04", "002": "1962-07-01", "003": "1980-01-20"}
    shot = lambda p: {"resourceType": "Immunization", "id": f"imm{p}", "status": "completed", "patient": {"reference": f"Patient/{p}"},
                      "occurrenceDateTime": "2015-10-01", "vaccineCode": {"text": "Influenza vaccine"}}
    return ([{"resourceType": "Patient", "id": p, "gender": "female", "birthDate": b} for p, b in born.items()]
            + [shot(p) for p in born] + list(extra))


def _condition(cid, patient, text, code=None, **more):
    coding = [{"system": "http://snomed.info/sct", "code": code, "display": text}] if code else []
    return {"resourceType": "Condition", "id": cid, "subject": {"reference": f"Patient/{patient}"},
            "code": {"coding": coding, "text": text}, **more}


def test_no_secret_reaches_a_run_folder_made_by_papermill(tmp_path):
    "papermill -p api_key TOKEN -p hf_token X: the run's manifest records the command without either value."
    pytest.importorskip("papermill")
    import nbformat
    nb = nbformat.v4.new_notebook(metadata={"kernelspec": {"name": "python3", "language": "python", "display_name": "Python 3"}})
    nb.cells = [nbformat.v4.new_code_cell("api_key = None\nhf_token = None\nout = None", metadata={"tags": ["parameters"]}),
                nbformat.v4.new_code_cell("from carebench.core.config import load_config\nfrom carebench.core.runs import create_run\n"
                                          f"create_run(None, load_config({str(ROOT / 'data' / 'example' / 'config.yaml')!r}), path=out)")]
    src = tmp_path / "make_run.ipynb"
    nbformat.write(nb, src)
    run = tmp_path / "run"
    r = subprocess.run([sys.executable, "-m", "papermill", str(src), str(tmp_path / "out.ipynb"), "-p", "api_key", CANARY,
                        "-p", "hf_token", "X" * 12, "-p", "out", str(run), "-k", "python3", "--no-progress-bar"],
                       capture_output=True, text=True, cwd=tmp_path, timeout=240)
    assert r.returncode == 0, r.stderr[-2000:]
    command = json.loads((run / "run_manifest.json").read_text())["command"]
    assert command[0] == "papermill" and command[command.index("api_key") + 1] == "<redacted>", command
    found = [p for p in run.rglob("*") if p.is_file() and (CANARY in p.read_text(errors="replace") or "X" * 12 in p.read_text(errors="replace"))]
    assert found == []


def test_a_fhir_chart_holds_only_what_a_reader_sees(tmp_path):
    "A NUL, a terminal escape and a right-to-left override in a FHIR display never reach the chart; each is counted."
    from carebench.adapters.load import load_dataset
    odd = _condition("c1", "001", "Asthma\x00 \x1b[31mmild\x1b[0m \u202epersistent\u202c", "195967001",
                     onsetDateTime="2018-04-02")
    ds = load_dataset(_fhir_dataset(tmp_path / "fhir", _patients(odd)))
    chart = {p.id: p.as_dict() for p in ds.patients}["001"]
    assert chart["medical_history"] == ["Asthma mild persistent (2018-04)"], chart
    assert any("1 snapshot text(s) held control, invisible or bidirectional characters" in n for n in ds.provenance["notes"])


def test_an_open_ended_period_never_becomes_the_index_date(tmp_path):
    "effectivePeriod ending 9999-12-31 is dated by its start; a date of 9999 alone is taken as unknown, and counted."
    from carebench.adapters.load import load_dataset
    open_ended = {"resourceType": "MedicationStatement", "id": "m1", "status": "active", "subject": {"reference": "Patient/001"},
                  "medicationCodeableConcept": {"text": "Metformin 500 MG"},
                  "effectivePeriod": {"start": "2019-05-02", "end": "9999-12-31"}}
    placeholder = _condition("c2", "001", "Hypertension", "38341003", recordedDate="9999-12-31")
    ds = load_dataset(_fhir_dataset(tmp_path / "fhir", _patients(open_ended, placeholder)))
    chart = {p.id: p.as_dict() for p in ds.patients}["001"]
    assert chart["summary"].startswith("69-year-old female"), chart                 # index 2019-05: not 8049 years old
    assert "Hypertension" in chart["medical_history"] and any("taken as unknown" in n for n in ds.provenance["notes"])


def test_an_item_leaks_by_its_code_under_another_text(tmp_path):
    "An item resource coded SNOMED 44054006: the chart's entry with that code is withheld, whatever its text."
    from carebench.adapters.load import load_dataset
    item = _condition("i1", "001", "Diabetes mellitus type 2", "44054006")
    chart = _condition("c3", "001", "Type 2 diabetes with no complication", "44054006", onsetDateTime="2015-01-01")
    config = _fhir_dataset(tmp_path / "fhir", _patients(chart, _condition("c4", "001", "Asthma", "195967001")), items=[item],
                           rows=[("001", "Condition/i1"), ("002", "insulin"), ("003", "HIV test")])
    ds = load_dataset(config)
    history = {p.id: p.as_dict() for p in ds.patients}["001"]["medical_history"]
    assert history == ["Asthma"], history
    assert ds.provenance["leakage"]["leaking_pairs"] == 0
    assert {"text": "Diabetes mellitus type 2", "code": ["SNOMED", "44054006"]}.items() <= ds.provenance["item_codes"][0].items()


def test_a_relative_database_url_is_read_from_the_configs_folder(tmp_path):
    "url: sqlite:///cdm.sqlite names the file beside the config, whatever folder the command runs in."
    study = tmp_path / "study"
    study.mkdir()
    with sqlite3.connect(study / "cdm.sqlite") as db:
        db.execute("CREATE TABLE person (person_id INTEGER, person_source_value TEXT)")
        db.executemany("INSERT INTO person VALUES (?, ?)", [(1, "001"), (2, "002"), (3, "003")])
        db.execute("CREATE TABLE concept (concept_id INTEGER, concept_name TEXT, vocabulary_id TEXT, concept_code TEXT)")
        db.execute("INSERT INTO concept VALUES (10, 'type 2 diabetes', 'SNOMED', '44054006')")
        db.execute("CREATE TABLE condition_occurrence (condition_occurrence_id INTEGER, person_id INTEGER, condition_concept_id INTEGER)")
        db.executemany("INSERT INTO condition_occurrence VALUES (?, ?, 10)", [(1, 1), (2, 2), (3, 3)])
    _long(study / "labels.csv", [("001", "statin"), ("002", "insulin"), ("003", "HIV test")])
    (study / "config.yaml").write_text(yaml.safe_dump({"dataset": {"adapter": "omop", "url": "sqlite:///cdm.sqlite", "labels": "labels.csv",
                                                                   "patient_id": "person_source_value"}, "label_space": LABELS}))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    r = run_cli("validate", study / "config.yaml", "--json", cwd=elsewhere)
    assert r.returncode == 0, r.stderr
    assert not (elsewhere / "cdm.sqlite").exists()


def test_reading_workers_are_capped_by_the_machine(tmp_path):
    "dataset.workers: 1000 starts no more processes than there are cores, and says so."
    from carebench.adapters.load import load_dataset
    ds = load_dataset(_fhir_dataset(tmp_path / "fhir", _patients(_condition("c1", "001", "Asthma", "195967001")), workers=1000))
    cores = len(os.sched_getaffinity(0))
    assert any(f"1000 worker processes asked for, {cores} started" in n for n in ds.provenance["notes"]), ds.provenance["notes"]


def test_a_plan_under_no_effect_plants_none():
    "plan --effect 0: the rates are the tests' size, the text says no size has power, the plan does not grow its sizes."
    r = run_cli("plan", "--effect", "0", "--patients", "24", "--datasets", "20", "--items", "4", "--categories", "3",
                "--delta-ref-rate", "0.3", "--json", "--quiet")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert {p["n_patients"] for p in out["power"]} == {24} and all(p["power"] <= 0.25 for p in out["power"])
