"""Hostile data inputs (hardening 3): database URLs that would download a DuckDB extension or create a file, folders holding
FIFOs and device links, binary score and label tables, OMOP tables twice or with NaN and control characters, and Dawid-Skene
with one observer per pair. Every case's name starts with `h26_data_`."""
import csv
import json
import os
import sqlite3
from pathlib import Path

import yaml

from hostile_corpus import CORR, FREE, LABELS, SNAPS, TOKEN, Case, _fifo, _link, write_dataset

LONG_HEADER = ["patient_id", "observer", "item", "condition", "category", "label"]
LONG_ROWS = [[p, o, i, cond, k, v] for cond, rows in (("context_free", FREE), ("correct_context", CORR))
             for p, o, i, risk, care in rows for k, v in (("risk", risk), ("care", care))]
PERSON = "person_id,person_source_value\n1,001\n2,002\n3,003\n"
CONCEPT = "concept_id,concept_name,vocabulary_id,concept_code\n10,type 2 diabetes,SNOMED,44054006\n"
NUL_BYTES = 300 * 2 ** 20           # a file of NULs this large took minutes and gigabytes to refuse


def _nuls(path: Path, size: int = NUL_BYTES, head: bytes = b"") -> Path:
    "A file of `head` then NUL bytes up to `size` (written at once: reading it is what costs)."
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as f:
        f.write(head)
        f.truncate(size)
    return path


def _write(path: Path, rows) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="", encoding="utf-8") as f: csv.writer(f).writerows(rows)
    return path


def _yaml(path: Path, dataset: dict) -> Path:
    path.write_text(yaml.safe_dump({"dataset": dataset, "label_space": LABELS}, sort_keys=False))
    return path


def cases(t: Path) -> list:
    t.mkdir(parents=True, exist_ok=True)
    out = []
    add = lambda *a, **k: out.append(Case(*a, **k))
    labels = _write(t / "labels.csv", [LONG_HEADER, *LONG_ROWS])
    snaps = t / "snapshots.json"
    snaps.write_text(json.dumps(SNAPS))

    # --- database URLs: no download, no file created, nothing but a regular file opened
    def omop_url(name, url=None, env_url=None):
        ds = {"adapter": "omop", "labels": str(labels), "patient_id": "person_source_value"}
        ds.update({"url": url} if url is not None else {"url_env": "CB_H26_CDM"})
        return ["validate", _yaml(t / f"{name}.yaml", ds)]
    lite = t / "cdm.sqlite"
    with sqlite3.connect(lite) as conn:
        conn.execute("CREATE TABLE person (person_id INTEGER, person_source_value TEXT)")
    add("h26_data_duckdb_url_naming_a_sqlite_file", omop_url("ddb_lite", f"duckdb:///{lite}"), 2,
        "cdm.sqlite: cannot open the OMOP database (the file is a SQLite database")
    add("h26_data_duckdb_url_from_the_environment_naming_a_sqlite_file", omop_url("ddb_lite_env"), 2,
        "cdm.sqlite: cannot open the OMOP database (the file is a SQLite database", env={"CB_H26_CDM": f"duckdb:///{lite}"})
    add("h26_data_sqlite_url_naming_a_missing_file", omop_url("lite_missing", f"sqlite:///{t / 'absent.db'}"), 2,
        "absent.db: cannot open the OMOP database (no such file)")
    add("h26_data_sqlite_url_naming_a_missing_sqlite_file", omop_url("lite_missing2", f"sqlite:///{t / 'absent.sqlite'}"), 2,
        "absent.sqlite: cannot open the OMOP database (no such file)")
    add("h26_data_duckdb_url_naming_a_missing_file", omop_url("ddb_missing", f"duckdb:///{t / 'absent.duckdb'}"), 2,
        "absent.duckdb: cannot open the OMOP database (no such file)")
    add("h26_data_sqlite_url_with_a_password_naming_a_missing_file", omop_url("lite_pw"), 2,
        "absent_pw.db: cannot open the OMOP database (no such file)", forbid=(TOKEN,),
        env={"CB_H26_CDM": f"sqlite+pysqlite://admin:{TOKEN}@/{t / 'absent_pw.db'}"})
    add("h26_data_sqlite_url_naming_a_fifo", omop_url("lite_fifo", f"sqlite:///{_fifo(t / 'fifo.db')}"), 2,
        "fifo.db: cannot open the OMOP database (a FIFO (named pipe), not a regular file)")
    add("h26_data_duckdb_url_that_switches_extensions_back_on",
        omop_url("ddb_query", f"duckdb:///{t / 'any.duckdb'}?autoinstall_known_extensions=true&access_mode=read_write"), 2,
        "a duckdb URL takes no query parameters: access_mode, autoinstall_known_extensions")
    add("h26_data_duckdb_url_naming_dev_zero", omop_url("ddb_zero", f"duckdb:///{_link(t / 'zero.duckdb', '/dev/zero')}"), 2,
        "zero.duckdb: cannot open the OMOP database (a character device, not a regular file)")

    # --- folders: only regular files are read from them
    fhir = t / "fhir"
    fhir.mkdir()
    good = [{"resourceType": "Patient", "id": p} for p in ("001", "002", "003")]
    def bundles(name, bad=None):
        folder = fhir / name
        folder.mkdir()
        (folder / "a.ndjson").write_text("\n".join(json.dumps(r) for r in good) + "\n")
        if bad: bad(folder)
        return ["validate", _yaml(fhir / f"{name}.yaml", {"adapter": "fhir", "bundles": str(folder), "labels": str(labels)})]
    add("h26_data_fhir_folder_holding_a_fifo", bundles("fifo", lambda f: _fifo(f / "b.ndjson")), 2,
        "b.ndjson: cannot read the FHIR file (a FIFO (named pipe), not a regular file)")
    add("h26_data_fhir_folder_holding_a_link_to_dev_zero", bundles("zero", lambda f: _link(f / "z.json", "/dev/zero")), 2,
        "z.json: cannot read the FHIR file (a character device, not a regular file)")
    add("h26_data_fhir_folder_holding_a_broken_link", bundles("dangling", lambda f: _link(f / "gone.json", str(f / "nowhere.json"))), 2,
        "gone.json: cannot read the FHIR file (no such file)")
    add("h26_data_fhir_folder_holding_a_file_of_nuls", bundles("nuls", lambda f: _nuls(f / "n.json", 900 * 2 ** 20)), 2,
        "n.json: cannot read the FHIR file (binary data")

    # --- binary or absurd tables: refused from their first block, naming the file
    import pandas as pd
    base = write_dataset(t / "base")
    from carebench.adapters.load import load_dataset
    from carebench.core.config import load_config
    from carebench.evaluation.scores import planted_scores
    good_scores = planted_scores(load_dataset(load_config(base)))
    nul_scores = _nuls(t / "scores" / "nuls.csv")
    add("h26_data_scores_file_of_nul_bytes", ["analyze", "--config", base, "--scores", nul_scores, "--out", t / "an_nuls", "--quiet"], 2,
        "nuls.csv: cannot read the score file (binary data")
    header = (",".join(good_scores.columns) + "\n").encode()
    nul_after = _nuls(t / "scores" / "after_header.csv", head=header)
    add("h26_data_scores_header_then_nul_bytes", ["analyze", "--config", base, "--scores", nul_after, "--out", t / "an_after", "--quiet"], 2,
        "after_header.csv: cannot read the score file (binary data")
    endless = t / "scores" / "one_line.csv"
    with open(endless, "wb") as f: f.write(b"model," + b"x" * (64 * 2 ** 20))
    add("h26_data_scores_first_line_of_64_mib", ["analyze", "--config", base, "--scores", endless, "--out", t / "an_line", "--quiet"], 2,
        "one_line.csv: cannot read the score file (the first line is longer than")
    long_nul = _nuls(t / "long_nuls.csv")
    add("h26_data_long_table_of_nul_bytes", ["validate", _yaml(t / "long_nuls.yaml", {"adapter": "long", "path": str(long_nul),
                                                                                       "snapshots": str(snaps)})], 2,
        "long_nuls.csv: cannot read the long table (binary data")
    pc = write_dataset(t / "pc_nuls")
    _nuls(pc.parent / "data" / "train.csv")
    add("h26_data_paired_table_of_nul_bytes", ["validate", pc], 2, "train.csv, table 'train': cannot read the table (binary data")
    sn = write_dataset(t / "snap_nuls")
    _nuls(sn.parent / "snapshots.json", 900 * 2 ** 20)
    add("h26_data_snapshots_file_of_nul_bytes", ["validate", sn], 2, "snapshots.json: cannot read the snapshots file (binary data")

    # --- OMOP folders: one file per table, NaN is no missing value, no control character reaches a snapshot
    import pyarrow.parquet as pq
    omop = t / "omop"
    def omop_cfg(name, files: dict):
        folder = omop / name
        folder.mkdir(parents=True)
        for k, v in {"person.csv": PERSON, "concept.csv": CONCEPT, **files}.items():
            if isinstance(v, str): (folder / k).write_text(v)
            elif hasattr(v, "to_parquet"): v.to_parquet(folder / k, index=False)
            elif v is not None: pq.write_table(v, folder / k)
        return ["validate", _yaml(omop / f"{name}.yaml", {"adapter": "omop", "tables": str(folder), "labels": str(labels),
                                                           "patient_id": "person_source_value"})]
    persons = pd.DataFrame({"person_id": [1, 2, 3], "person_source_value": ["001", "002", "003"]})
    add("h26_data_omop_table_as_csv_and_parquet", omop_cfg("twice", {"person.parquet": persons}), 2,
        "the person table is there twice: person.csv and person.parquet")
    import pyarrow as pa
    nan = pa.table({"measurement_id": [1, 2], "person_id": [1, 2], "measurement_concept_id": [10, 10],     # Arrow: a NaN, then a NULL
                    "value_as_number": pa.array([float("nan"), None], pa.float64()), "unit_source_value": ["mg/dL", "mg/dL"]})
    add("h26_data_omop_parquet_nan_value", omop_cfg("nan", {"measurement.parquet": nan}), 2,
        "table 'measurement', row 2, column 'value_as_number': value_as_number must be a finite number, not 'nan'")
    add("h26_data_omop_nul_in_a_concept_name", omop_cfg("nul", {"concept.csv": CONCEPT.replace("type 2", "type\x002")}), 2,
        "table 'concept', row 2, column 'concept_name': a control character (U+0000)")
    add("h26_data_omop_escape_in_a_note", omop_cfg("esc", {"note.csv": "note_id,person_id,note_text\n1,1,lives\x1b[2J alone\n"}), 2,
        "table 'note', row 2, column 'note_text': a control character (U+001B)")

    # --- a latent-class reference needs more than one observer per pair
    one = [r for r in LONG_ROWS if r[1] == "o1"]
    one_labels = _write(t / "one_observer.csv", [LONG_HEADER, *one])
    for policy in ("dawid_skene", "one_coin"):
        add(f"h26_data_{policy}_with_one_observer_per_pair",
            ["validate", _yaml(t / f"{policy}.yaml", {"adapter": "long", "path": str(one_labels), "snapshots": str(snaps),
                                                      "observers_per_pair": 1, "aggregation": policy})], 2,
            f"dataset.aggregation: the {policy} aggregation needs at least 2 observers per pair")
    return out
