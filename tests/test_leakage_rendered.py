"""The leakage check reads the text the model reads: in every format the adapters read (paired, long, FHIR, OMOP), no
item appears in its own patient's rendered snapshot, and an item planted in each shape, spelled as a terminology or
a careless export spells it (a semantic tag, other case, spacing, an invisible character, a full-width letter), is
withheld from the chart (FHIR, OMOP) or stops the run (paired, long)."""
import csv
import json
import shutil

import pandas as pd
import pytest

from conftest import ROOT, run_cli

SHAPES = {"paired": ROOT / "data" / "example", "fhir": ROOT / "data" / "example_fhir",
          "omop": ROOT / "data" / "example_omop",
          "synthea": ROOT / "tests" / "fixtures" / "real_shapes" / "synthea",
          "eunomia": ROOT / "tests" / "fixtures" / "real_shapes" / "eunomia",
          "synpuf": ROOT / "tests" / "fixtures" / "real_shapes" / "synpuf",
          "chart_fhir": ROOT / "tests" / "fixtures" / "real_shapes" / "chart_fhir",
          "chart_omop": ROOT / "tests" / "fixtures" / "real_shapes" / "chart_omop"}


def load(config):
    from carebench.adapters.load import load_dataset
    return load_dataset(config)


def rendered_lines(patient) -> list:
    "The snapshot's lines as the prompt shows them (bullets and field titles off)."
    from carebench.models.prompts import render_snapshot
    return [line.removeprefix("- ") for line in render_snapshot(patient).splitlines()[1:]]


def leaking(ds) -> list:
    "Pairs whose item, in its comparison form, is a phrase of one of its own patient's rendered lines."
    from carebench.core.text import comparable_text
    patients = {p.id: p for p in ds.patients}
    lines = {pid: [f" {comparable_text(t)} " for t in rendered_lines(p)] for pid, p in patients.items()}
    return [(pid, item) for pid, item in zip(ds.pair_patient, ds.pair_item)
            if any(f" {comparable_text(item)} " in t for t in lines[pid])]


def disguised(item: str) -> str:
    """The item as another export may spell it: other case, a soft hyphen and a zero-width space inside its longest
    word, doubled spacing, a full-width first letter and SNOMED CT's semantic tag."""
    words = item.split()
    k = max(range(len(words)), key=lambda i: len(words[i]))
    w = words[k]
    words[k] = w[: len(w) // 2] + "\u00ad" + w[len(w) // 2:] + "\u200b"
    text = "  ".join(words).swapcase()
    return chr(ord(text[0]) + 0xFEE0) + text[1:] + " (disorder)" if text[0].isascii() and text[0].isalpha() else text


@pytest.fixture(scope="module")
def long_shape(tmp_path_factory):
    out = tmp_path_factory.mktemp("long") / "long"
    r = run_cli("convert", SHAPES["paired"] / "config.yaml", "--to", "long", "--out", out)
    assert r.returncode == 0, r.stderr
    return out


def test_no_item_is_in_its_own_rendered_snapshot_in_any_shape(long_shape):
    for name, folder in {**SHAPES, "long": long_shape}.items():
        ds = load(folder / "config.yaml")
        assert leaking(ds) == [], name
        assert ds.provenance.get("leakage", {}).get("leaking_pairs", 0) == 0, name


def test_the_disguise_defeats_plain_normalization():
    # what the planted leaks test: without the chart's own reading of names, the two spellings differ
    from carebench.core.text import comparable_text, normalize_text
    d = disguised("Essential hypertension")
    assert normalize_text(d) != normalize_text("Essential hypertension")
    assert comparable_text(d) == comparable_text("Essential hypertension (2010-05)")[: len("essential hypertension")]


def relabel(labels, old: str, new: str, patient: str | None = None) -> None:
    "Rename an item in a labels CSV (for one patient, or all)."
    rows = list(csv.reader(labels.open(newline="", encoding="utf-8")))
    head = rows[0]
    pcol, icol = head.index("patient_id"), head.index("item")
    for r in rows[1:]:
        if r[icol] == old and (patient is None or r[pcol] == patient): r[icol] = new
    with labels.open("w", newline="", encoding="utf-8") as f: csv.writer(f).writerows(rows)


def withheld(ds) -> int:
    return sum(int(n.split(": ")[1].split()[0]) for n in ds.provenance["notes"] if "withheld from their own" in n)


@pytest.mark.parametrize("shape,patient,item", [("synthea", "a01", "Essential hypertension"),
                                                ("eunomia", "p001", "Essential hypertension")])
def test_a_disguised_item_is_withheld_from_its_own_chart(shape, patient, item, tmp_path):
    base = load(SHAPES[shape] / "config.yaml")
    folder = tmp_path / shape
    shutil.copytree(SHAPES[shape], folder)
    relabel(folder / "labels.csv", item, disguised(item), patient)
    ds = load(folder / "config.yaml")
    assert disguised(item) in ds.pair_item
    assert withheld(ds) == withheld(base)            # the renamed item's entry is still withheld: it is the same words
    assert leaking(ds) == []
    mine = [t for t in rendered_lines(ds.patient(patient)) if t.lower().startswith(item.lower())]
    assert mine == []


def test_a_disguised_entry_in_a_paired_chart_stops_the_run(tmp_path):
    folder = tmp_path / "paired"
    shutil.copytree(SHAPES["paired"], folder)
    snaps = json.loads((folder / "snapshots.json").read_text())
    item = str(pd.read_excel(folder / "dataset.xlsx", sheet_name="context_free")["item"].iloc[0])
    patient = next(k for k in snaps if k.lstrip("0") == "1")
    snaps[patient]["medical_history"].append(disguised(item) + " (2019-05)")
    (folder / "snapshots.json").write_text(json.dumps(snaps))
    r = run_cli("validate", folder / "config.yaml")
    assert r.returncode != 0 and "appears in its own patient's snapshot" in r.stderr, r.stderr


def test_an_item_with_its_tag_leaks_where_a_long_chart_shows_it_without(long_shape, tmp_path):
    folder = tmp_path / "long"
    shutil.copytree(long_shape, folder)
    labels, snap_file = folder / "labels.csv", folder / "snapshots.json"           # as `convert --to long` names them
    rows = list(csv.DictReader(labels.open(encoding="utf-8")))
    pid, item = rows[0]["patient_id"], rows[0]["item"]
    relabel(labels, item, disguised(item), pid)
    snaps = json.loads(snap_file.read_text())
    snaps[pid].setdefault("medical_history", []).append(f"{item} (2019-05)")
    snap_file.write_text(json.dumps(snaps))
    r = run_cli("validate", folder / "config.yaml")
    assert r.returncode != 0 and "appears in its own patient's snapshot" in r.stderr, r.stderr
