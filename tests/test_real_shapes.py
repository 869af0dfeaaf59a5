"""Datasets in the shapes real public exports have (Synthea FHIR, Eunomia and SynPUF OMOP; written by
tests/fixtures/make_real_shapes.py) validate and run with the documented keys, the leakage check on, and their charts
read as a clinician would write them."""
import json
import re
import sys

import pytest

from conftest import ROOT, run_cli

FIXTURES = ROOT / "tests" / "fixtures"
sys.path.insert(0, str(FIXTURES))
import make_real_shapes  # noqa: E402


def test_the_committed_fixtures_are_what_the_script_writes(tmp_path):
    fresh = make_real_shapes.write_all(tmp_path / "real_shapes")
    committed = FIXTURES / "real_shapes"
    names = sorted(p.relative_to(fresh) for p in fresh.rglob("*") if p.is_file())
    assert names == sorted(p.relative_to(committed) for p in committed.rglob("*") if p.is_file())
    assert [n for n in names if (fresh / n).read_bytes() != (committed / n).read_bytes()] == []


@pytest.mark.parametrize("shape", ["synthea", "eunomia", "synpuf"])
def test_each_shape_validates_with_the_leakage_check_on(shape, tmp_path):
    config = FIXTURES / "real_shapes" / shape / "config.yaml"
    assert "leakage_check" not in config.read_text()                     # on, by default
    r = run_cli("validate", config, "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["leakage"] == {"enabled": True, "leaking_pairs": 0, "leaking_fields": []}


def load(shape):
    from carebench.adapters.load import load_dataset
    return load_dataset(FIXTURES / "real_shapes" / shape / "config.yaml")


def test_a_synthea_chart_reads_as_a_clinician_writes_it():
    ds = load("synthea")
    a = dict(ds.patient("a01").snapshot)
    lines = [t for v in a.values() for t in ([v] if isinstance(v, str) else v)]
    for field, v in a.items():                                              # no repeated line in any field
        if not isinstance(v, str): assert len(set(v)) == len(v), field
    assert a["summary"].startswith("62-year-old female.")                  # age at the index date (2019-06-30), sex
    assert dict(ds.patient("b02").snapshot)["summary"].startswith("7-year-old male.")
    assert any(re.fullmatch(r"Blood pressure panel 1\d\d/\d\d mmHg \(2019-05; 9 earlier readings since 2010-05\)", t)
               for t in a["labs"])
    assert "Simvastatin 10 MG Oral Tablet, stopped (×9, last 2018-05)" in a["medication_history"]
    assert not [t for t in lines if re.search(r"\d\.\d{5,}", t)]             # no number with more than 4 decimals
    assert not [t for t in lines if re.search(r"\((finding|disorder|procedure)\)|mm\[Hg\]|\{score\}", t)]
    assert "Diabetes mellitus type 2" not in str(a) and "Prediabetes" not in str(a)   # refuted, entered in error
    assert "Full-time employment" not in str(a.get("medical_history"))      # a social finding is social history


def test_a_synthea_export_counts_what_it_left_out():
    ds = load("synthea")
    notes, records = ds.provenance["notes"], ds.provenance["records"]
    assert "FHIR: 2 Condition resource(s) not shown (refuted)" in notes
    assert "FHIR: 8 record(s) dated after their patient's index date not shown" in notes
    assert records["not_used"] == {"Claim": 2, "Organization": 2}             # counted, not validated (they conflict)
    assert records["withheld_items"] == {"medical_history": 1, "social_history": 2}
    budget = ds.provenance["snapshot_budget"]
    assert budget["max_tokens"] == 300 and budget["patients_cut"] == 1 and budget["entries_cut"]
    cut = budget["per_patient"]["a01"]
    assert cut["tokens"] > 300 >= cut["shown"] and any(n.startswith("FHIR: the snapshot budget") for n in notes)


@pytest.mark.parametrize("shape", ["eunomia", "synpuf"])
def test_an_omop_chart_has_demographics_units_ranges_and_dates(shape):
    ds = load(shape)
    p1, p2 = dict(ds.patient("p001").snapshot), dict(ds.patient("p002").snapshot)
    assert p1["summary"] == "62-year-old female. Seen for a yearly visit; well."
    # the last exposure ended before the index date: stopped, as the same data in FHIR reads
    assert p1["medication_history"] == ("Simvastatin 10 MG Oral Tablet, stopped (×9, last 2018-05)",)
    assert "Hemoglobin A1c/Hemoglobin.total in Blood 6.1 % (high; ref 4–5.6) (2018-05)" in p1["labs"]
    assert "Diastolic blood pressure 82 mmHg (2018-05)" in p1["labs"]
    assert p2["labs"] == ("Calcium [Mass/volume] in Serum or Plasma <8.5 mg/dL (low; ref 8.6–10.3) (2019-01)",
                          "Albumin [Presence] in Urine by Test strip: Negative (2019-01)")
    skipped = ds.provenance["records"]["skipped"]
    assert skipped == ({"observation: a row whose observation_id repeats an earlier row's": 1} if shape == "eunomia" else {})


def test_a_synthea_shaped_export_runs(tmp_path):
    r = run_cli("run", FIXTURES / "real_shapes" / "synthea" / "config.yaml", "--track", "reasoning", "--out", tmp_path / "run",
                "--cache", tmp_path / "cache.sqlite", "--quiet", "--no-report", "--no-validity")
    assert r.returncode == 0, r.stderr
    manifest = json.loads((tmp_path / "run" / "adapter_manifest.json").read_text())
    assert manifest["counts"]["n_patients"] == 2


@pytest.mark.parametrize("key, value, message", [
    ("routes", {"Encouter": "none"}, "dataset.routes names 'Encouter', which no snapshot field reads"),
    ("index_date", "seen_on", "index_date names the column 'seen_on', which the labels table lacks"),
    ("snapshot", {"max_tokens": 0}, "max_tokens must be a whole number of at least 1"),
])
def test_a_mistyped_chart_key_is_a_clear_error(tmp_path, key, value, message):
    import shutil
    import yaml
    folder = shutil.copytree(FIXTURES / "real_shapes" / "synthea", tmp_path / "synthea")
    cfg = yaml.safe_load((folder / "config.yaml").read_text())
    cfg["dataset"][key] = value
    (folder / "config.yaml").write_text(yaml.safe_dump(cfg))
    r = run_cli("validate", folder / "config.yaml")
    assert r.returncode != 0 and message in r.stderr + r.stdout and "Traceback" not in r.stderr, r.stderr


def test_convert_keeps_the_standard_codes_and_every_field(tmp_path):
    """Synthea's FHIR → OMOP → FHIR: the same snapshots (immunizations, encounters and the other record fields
    included) and the same standard codes; the CONCEPT table names SNOMED, RxNorm, LOINC and CVX codes, not local
    ones."""
    import pandas as pd
    from carebench.adapters.convert import convert
    from carebench.adapters.load import load_dataset
    source = load("synthea")
    omop = convert(FIXTURES / "real_shapes" / "synthea" / "config.yaml", "omop", tmp_path / "omop")
    back = convert(omop, "fhir", tmp_path / "fhir")
    concepts = pd.read_csv(tmp_path / "omop" / "omop" / "concept.csv", dtype=str)
    assert {"SNOMED", "RxNorm", "LOINC", "CVX"} <= set(concepts["vocabulary_id"])
    coded = concepts[concepts["vocabulary_id"] == "RxNorm"]
    assert coded["concept_code"].str.fullmatch(r"[0-9]+").all()
    assert sum(len(p.codes) for p in source.patients) > 10
    assert any(f == "immunizations" for p in source.patients for f, _ in p.snapshot)
    for config in (omop, back):
        ds = load_dataset(config)
        assert [p.snapshot for p in ds.patients] == [p.snapshot for p in source.patients]
        assert [dict(p.codes) for p in ds.patients] == [dict(p.codes) for p in source.patients]
    r = run_cli("validate", back)
    assert r.returncode == 0, r.stderr


@pytest.mark.parametrize("shape", ["eunomia", "synpuf", "parquet"])
def test_omop_files_read_in_frames_give_the_same_dataset(shape, tmp_path, monkeypatch):
    """A table file read in frames (as files from 32 MiB are; here every file, in frames of 3 rows) gives the dataset
    the whole-file reading gives: Eunomia's CSVs (a repeated id skipped), SynPUF's headerless TSVs, Parquet."""
    import carebench.adapters.omop.read as omop_read
    from carebench.adapters.convert import convert
    from carebench.adapters.load import load_dataset
    config = FIXTURES / "real_shapes" / shape / "config.yaml"
    if shape == "parquet":
        config = convert(ROOT / "data" / "example" / "config.yaml", "omop", tmp_path / "pq", fmt="parquet")
    whole = load_dataset(config)
    monkeypatch.setattr(omop_read, "FILE_CHUNK_BYTES", 0)
    real = omop_read.FolderSource.frames
    sizes = []
    def small(self, name, wanted=None, size=None):
        sizes.append(size)
        return real(self, name, wanted, 3 if size else None)
    monkeypatch.setattr(omop_read.FolderSource, "frames", small)
    framed = load_dataset(config)
    assert 100_000 in sizes                                                   # the clinical tables went in frames
    assert [p.snapshot for p in framed.patients] == [p.snapshot for p in whole.patients]
    assert [dict(p.codes) for p in framed.patients] == [dict(p.codes) for p in whole.patients]
    assert framed.provenance.get("notes") == whole.provenance.get("notes")
