"""Hostile inputs of the fourth round (hardening 4): leaks hidden from the eye (zero-width characters, soft hyphens,
look-alike letters, dropped diacritics), gzip bombs, a Bundle too large to read whole, UTF-16 tables, headerless OMOP
tables of another CDM version, FHIR resources that all fail validation or nest too deeply, a latent-class sensitivity
analysis with one observer, and a plan too large for the machine. Every case's name starts with `h50_`."""
import gzip
import json
from pathlib import Path

import yaml

from hostile_corpus import CORR, FREE, LABELS, SNAPS, Case, write_dataset
from hostile_data import LONG_HEADER, LONG_ROWS, _write, _yaml

# the item "statin" of patient 001, written into its own chart so that only an eye would miss it
HIDDEN = {"soft_hyphen": "sta\u00adtin", "zero_width_space": "sta\u200btin", "zero_width_joiner": "sta\u200dtin",
          "cyrillic_a": "st\u0430tin", "diacritic": "st\u00e1tin", "bidi_isolate": "\u2066statin\u2069"}


def _leaky(t: Path, name: str, text: str) -> Path:
    snaps = {**SNAPS, "001": {**SNAPS["001"], "medications": [f"{text} 40 mg daily"]}}
    return write_dataset(t / f"leak_{name}", snaps=snaps)


def _stream(path: Path, head: bytes, fill: bytes, size: int, tail: bytes = b"", gz: bool = False) -> Path:
    """A file of `head`, then `fill` repeated to `size` bytes, then `tail`, gzipped or not, written a MiB at a time: the
    test's own process never holds it (a zygote forked after would report that memory as its children's peak)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    block = fill * ((1 << 20) // len(fill))
    with (gzip.open(path, "wb", compresslevel=9) if gz else open(path, "wb")) as f:
        f.write(head)
        for _ in range(size // len(block)): f.write(block)
        f.write(tail)
    return path


def _fhir(t: Path, name: str, files: dict, extra: dict | None = None) -> list:
    folder = t / "fhir" / name
    folder.mkdir(parents=True, exist_ok=True)
    for fname, data in files.items():
        if data is not None: (folder / fname).write_bytes(data)
    labels = _write(t / "fhir" / "labels.csv", [LONG_HEADER, *LONG_ROWS])
    return ["validate", _yaml(t / "fhir" / f"{name}.yaml", {"adapter": "fhir", "bundles": str(folder), "labels": str(labels),
                                                            **(extra or {})})]


def cases(t: Path) -> list:
    t.mkdir(parents=True, exist_ok=True)
    out = []
    add = lambda *a, **k: out.append(Case(*a, **k))

    # --- a leak a reader cannot see is still a leak
    for name, text in HIDDEN.items():
        add(f"h50_leak_through_{name}", ["validate", _leaky(t, name, text)], 2, "the item's text appears in its own patient's snapshot")
    long_rows = [r for r in LONG_ROWS]
    snaps = t / "long_snaps.json"
    snaps.write_text(json.dumps({**SNAPS, "001": {**SNAPS["001"], "medications": ["sta\u00adtin 40 mg"]}}))
    long_labels = _write(t / "long_labels.csv", [LONG_HEADER, *long_rows])
    add("h50_leak_through_soft_hyphen_long_format",
        ["validate", _yaml(t / "long.yaml", {"adapter": "long", "path": str(long_labels), "snapshots": str(snaps)})], 2,
        "the item's text appears in its own patient's snapshot")

    # --- bounded decompression: a gzip bomb and a Bundle too large to read whole are refused by size, not by memory
    patients = b"".join(json.dumps({"resourceType": "Patient", "id": p}).encode() + b"\n" for p in ("001", "002", "003"))
    _stream(t / "fhir" / "bomb" / "bulk.ndjson.gz", patients + b'{"resourceType": "Observation", "note": [{"text": "', b"a",
            96 << 20, gz=True)
    add("h50_gzip_ndjson_line_of_96_mib", _fhir(t, "bomb", {"bulk.ndjson.gz": None}), 2,
        "bulk.ndjson.gz: line 4 is longer than 64 MiB (decompressed)")
    _stream(t / "fhir" / "bundle" / "big.json.gz", b'{"resourceType": "Bundle", "type": "collection", "entry": [', b" ",
            300 << 20, b"]}", gz=True)
    add("h50_gzip_bundle_of_300_mib", _fhir(t, "bundle", {"big.json.gz": None}), 2,
        "big.json.gz: more than 256 MiB of text (decompressed) to read whole")
    _stream(t / "fhir" / "plain" / "p.ndjson", patients + b'{"resourceType": "Observation", "note": [{"text": "', b"a", 80 << 20)
    add("h50_plain_ndjson_line_of_80_mib", _fhir(t, "plain", {"p.ndjson": None}), 2, "p.ndjson: line 4 is longer than 64 MiB")

    # --- a skip that leaves nothing says why; a resource nested too deeply is one resource to skip
    bad = b"".join(json.dumps({"resourceType": "Patient", "id": p, "birthDate": "last spring"}).encode() + b"\n" for p in ("001", "002"))
    add("h50_fhir_every_resource_invalid_with_skip", _fhir(t, "allbad", {"a.ndjson": bad}, {"on_invalid": "skip"}), 2,
        "no FHIR resource left: every one was invalid and left out (on_invalid: skip)")
    deep = b'{"resourceType": "Observation", "extension": ' + b"[" * 100_000 + b"]" * 100_000 + b"}\n"
    add("h50_fhir_deep_resource_error_names_it", _fhir(t, "deep", {"a.ndjson": patients + deep}), 2,
        "a.ndjson, row 4: the JSON is nested too deeply")

    # --- a UTF-16 table is named as such
    utf16 = write_dataset(t / "utf16")
    train = utf16.parent / "data" / "train.csv"
    train.write_bytes(train.read_text().encode("utf-16"))
    add("h50_utf16_csv_named", ["validate", utf16], 2, "UTF-16 text (Excel's \"Unicode text\"), not UTF-8 CSV text: save it as UTF-8")

    # --- a headerless CDM 5.3 table read as 5.2 (its extra last column empty) is refused, naming the version it fits
    omop = t / "omop53"
    omop.mkdir()
    (omop / "person.csv").write_text("1\t8507\t1950" + "\t" * 9 + "001" + "\t" * 6 + "\n2\t8532\t1960" + "\t" * 9 + "002" + "\t" * 6
                                     + "\n3\t8507\t1970" + "\t" * 9 + "003" + "\t" * 6 + "\n")
    (omop / "concept.csv").write_text("10\ttype 2 diabetes\tCondition\tSNOMED\tClinical Finding\tS\t44054006\t\t\t\n")
    (omop / "condition_occurrence.csv").write_text("1\t2\t10\t2019-05-02" + "\t" * 12 + "\n")
    labels = _write(t / "omop_labels.csv", [LONG_HEADER, *LONG_ROWS])
    add("h50_headerless_cdm53_read_as_52",
        ["validate", _yaml(t / "omop53.yaml", {"adapter": "omop", "tables": str(omop), "labels": str(labels),
                                               "patient_id": "person_source_value", "cdm_version": "5.2"})], 2,
        "a CDM 5.3 table has 16: set dataset.cdm_version: '5.3'")

    # --- a latent-class sensitivity analysis that cannot run is refused before any work
    one = [r for r in LONG_ROWS if r[1] == "o1"]
    one_labels = _write(t / "one_observer.csv", [LONG_HEADER, *one])
    (t / "one_snaps.json").write_text(json.dumps(SNAPS))
    cfg = t / "sensitivity.yaml"
    cfg.write_text(yaml.safe_dump({"dataset": {"adapter": "long", "path": str(one_labels), "snapshots": str(t / "one_snaps.json"),
                                               "observers_per_pair": 1},
                                   "label_space": LABELS, "analysis": {"aggregation_sensitivity": ["dawid_skene"]}}))
    add("h50_dawid_skene_sensitivity_with_one_observer", ["validate", cfg], 2,
        "analysis.aggregation_sensitivity: the dawid_skene aggregation needs at least 2 observers per pair")

    # --- a plan too large for the machine is refused before it starts
    add("h50_plan_of_a_hundred_thousand_items", ["plan", "--items", "100000", "--categories", "1000", "--datasets", "1"], 2,
        "the simulation would need about")
    add("h50_plan_of_a_hundred_thousand_patients", ["plan", "--patients", "100000", "--datasets", "20"], 2,
        "the simulation would need about")
    return out
