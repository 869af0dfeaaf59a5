"""Reading speed and memory of the OMOP adapter on a large DuckDB database or folder of table files (issue 28, item 5).
Not a test: it prints figures.

It writes a DuckDB file with `--rows` measurement rows (and a tenth as many condition rows) over `--persons`
patients, a small CONCEPT table and a labels table for 200 of the patients (with `--files csv|parquet`, the tables
exported as files instead, in key order as exports write them), then runs `carebench validate` in a fresh process and
reports wall seconds, CPU seconds and peak RSS (the whole process tree, sampled). `--concepts N` adds N concepts that
no row names, as an Athena download's CONCEPT table brings millions (ids in shuffled order, as a download is not sorted).

    python bench/omop_scale.py --rows 1000000
    python bench/omop_scale.py --rows 10000000 --persons 20000
    python bench/omop_scale.py --rows 10000000 --persons 20000 --files csv
    python bench/omop_scale.py --rows 100000 --concepts 5000000 --files csv
"""
import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fhir_scale import run_validate, write_labels  # noqa: E402

LABELLED = 200


def write_database(root: Path, rows: int, persons: int, files: str | None = None, concepts: int = 0) -> Path:
    "A DuckDB OMOP database generated in SQL (no row passes through Python)."
    import duckdb
    db = root / "cdm.duckdb"
    con = duckdb.connect(str(db))
    con.execute(f"""CREATE TABLE person AS SELECT i AS person_id, 8507 + 25 * (i % 2) AS gender_concept_id,
                    1940 + i % 60 AS year_of_birth, 1 + i % 12 AS month_of_birth, 1 + i % 28 AS day_of_birth,
                    'p' || lpad(CAST(i AS VARCHAR), 7, '0') AS person_source_value
                    FROM range(1, {persons + 1}) t(i)""")
    con.execute("""CREATE TABLE concept (concept_id INTEGER, concept_name VARCHAR, domain_id VARCHAR,
                   vocabulary_id VARCHAR, concept_class_id VARCHAR, standard_concept VARCHAR, concept_code VARCHAR)""")
    con.execute("""INSERT INTO concept VALUES (3004410, 'Hemoglobin A1c', 'Measurement', 'LOINC', 'Lab Test', 'S', '4548-4'),
                   (3012888, 'Diastolic blood pressure', 'Measurement', 'LOINC', 'Clinical Observation', 'S', '8462-4'),
                   (8554, 'percent', 'Unit', 'UCUM', 'Unit', 'S', '%'), (8876, 'millimeter mercury column', 'Unit',
                   'UCUM', 'Unit', 'S', 'mm[Hg]'), (320128, 'Essential hypertension', 'Condition', 'SNOMED',
                   'Clinical Finding', 'S', '59621000')""")
    if concepts:                                  # an Athena-sized vocabulary, none of it named by a row
        con.execute(f"""INSERT INTO concept SELECT 40000000 + i, 'Filler concept number ' || i, 'Drug', 'RxNorm',
                        'Clinical Drug', 'S', CAST(900000 + i AS VARCHAR) FROM range({concepts}) t(i)
                        ORDER BY hash(i)""")
    con.execute(f"""CREATE TABLE measurement AS SELECT i AS measurement_id, 1 + i % {persons} AS person_id,
                    CASE WHEN i % 2 = 0 THEN 3004410 ELSE 3012888 END AS measurement_concept_id,
                    DATE '2010-01-01' + CAST(i % 3650 AS INTEGER) AS measurement_date,
                    CASE WHEN i % 2 = 0 THEN 5 + (i % 30) / 10.0 ELSE 70 + i % 20 END AS value_as_number,
                    CASE WHEN i % 2 = 0 THEN 8554 ELSE 8876 END AS unit_concept_id
                    FROM range(1, {rows + 1}) t(i)""")
    con.execute(f"""CREATE TABLE condition_occurrence AS SELECT i AS condition_occurrence_id,
                    1 + i % {persons} AS person_id, 320128 AS condition_concept_id,
                    DATE '2005-01-01' + CAST(i % 5000 AS INTEGER) AS condition_start_date
                    FROM range(1, {rows // 10 + 1}) t(i)""")
    if files:                                     # each table as a file, sorted by its key
        (root / "tables").mkdir()
        for table in ("person", "concept", "measurement", "condition_occurrence"):
            key = {"person": "person_id", "concept": "hash(concept_id)"}.get(table, f"{table}_id")
            options = "(FORMAT PARQUET)" if files == "parquet" else "(HEADER, DELIMITER ',')"
            con.execute(f"COPY (SELECT * FROM {table} ORDER BY {key}) TO '{root / 'tables' / table}.{files}' "
                        f"{options}")
    con.close()
    if files: db.unlink()
    write_labels(root / "labels.csv", [f"p{k:07d}" for k in range(1, LABELLED + 1)])
    source = "tables: tables" if files else f"url: duckdb:///{db}"
    (root / "config.yaml").write_text(f"dataset:\n  adapter: omop\n  {source}\n  labels: labels.csv\n"
                                      "  patient_id: person_source_value\n")
    return root / "tables" if files else db


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=1_000_000, help="measurement rows (default 1,000,000)")
    ap.add_argument("--persons", type=int, default=10_000, help="patients (default 10,000)")
    ap.add_argument("--files", choices=("csv", "parquet"), help="the tables as files of this format, not a database")
    ap.add_argument("--concepts", type=int, default=0, help="unused concepts added to CONCEPT (default 0)")
    ap.add_argument("--json", type=Path, help="also write the figures to this file")
    a = ap.parse_args(argv)
    root = Path(tempfile.mkdtemp(prefix="omop_scale_"))
    try:
        t0 = time.perf_counter()
        where = write_database(root, a.rows, a.persons, a.files, a.concepts)
        size = sum(f.stat().st_size for f in where.iterdir()) if where.is_dir() else where.stat().st_size
        out = dict(measurement_rows=a.rows, condition_rows=a.rows // 10, persons=a.persons, concepts=a.concepts + 5,
                   source=f"{a.files} files" if a.files else "duckdb", input_mb=round(size / 1e6, 1),
                   write_s=round(time.perf_counter() - t0, 1),
                   validate=run_validate(root / "config.yaml"))
        out["rows_per_s"] = round((a.rows * 1.1) / out["validate"]["wall_s"])
        print(json.dumps(out, indent=1))
        if a.json: a.json.write_text(json.dumps(out, indent=1) + "\n")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
