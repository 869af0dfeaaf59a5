"""A corpus of malformed and hostile inputs for the command line: configs, tables, workbooks, snapshots, score files, caches and
run folders. Each case names the command to run, the exit code it must end with and what its one error line must say."""
import csv
import json
import os
import sqlite3
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import yaml

LABELS = [{"key": "risk", "name": "Risk", "definition": "risk of harm"}, {"key": "care", "name": "Care", "definition": "care setting"}]
HEADER = ["patient", "observer", "item", "Risk", "Care"]
FREE = [["001", "o1", "NA", 0, 1], ["001", "o2", "NA", 0, 1], ["001", "o1", "statin", 1, 0], ["001", "o2", "statin", 0, 0],
        ["002", "o1", "insulin", 1, 0], ["002", "o2", "insulin", 1, 0], ["003", "o1", "HIV test", 0, 0], ["003", "o2", "HIV test", 0, 1]]
CORR = [["001", "o1", "NA", 1, 1], ["001", "o2", "NA", 1, 0], ["001", "o1", "statin", 1, 0], ["001", "o2", "statin", 1, 0],
        ["002", "o1", "insulin", 1, 1], ["002", "o2", "insulin", 1, 1], ["003", "o1", "HIV test", 1, 0], ["003", "o2", "HIV test", 1, 1]]
SNAPS = {"001": {"summary": "lives alone", "labs": ["LDL 190"]}, "002": {"medical_history": ["type 2 diabetes"]},
         "003": {"social_history": "new partner"}}
TOKEN = "sk-live-Zq8x0T3stT0kenValue9876"


@dataclass
class Case:
    name: str
    args: list
    code: int                       # expected exit code
    expect: str = ""                # a substring of the single error line (the place and the problem)
    forbid: tuple = ()              # strings that must appear nowhere in the output (secrets)
    unchanged: Path | None = None   # a file that must be byte-identical afterwards
    env: dict = field(default_factory=dict)


def write_dataset(folder: Path, free=None, corr=None, train=None, snaps=None, header=None, config=None, raw_snaps=None) -> Path:
    "A small valid CSV-folder dataset (3 patients, 4 pairs, 2 categories) with one thing changed; returns its config path."
    folder.mkdir(parents=True, exist_ok=True)
    data = folder / "data"
    data.mkdir(exist_ok=True)
    header = header or HEADER
    for name, rows in (("context_free", FREE if free is None else free), ("correct_context", CORR if corr is None else corr),
                       ("train", [["001", "o1", "aspirin", 0, 0], ["001", "o2", "aspirin", 0, 1]] if train is None else train)):
        if rows is False: continue
        with open(data / f"{name}.csv", "w", newline="", encoding="utf-8") as f: csv.writer(f).writerows([header, *rows])
    if raw_snaps is not None: (folder / "snapshots.json").write_bytes(raw_snaps)
    elif not (folder / "snapshots.json").exists(): (folder / "snapshots.json").write_text(json.dumps(SNAPS if snaps is None else snaps))
    cfg = {"dataset": {"adapter": "paired_context", "path": "data", "snapshots": "snapshots.json"}, "label_space": LABELS,
           "analysis": {"n_bootstrap": 100, "n_permutations": 200}}
    for k, v in (config or {}).items():
        if isinstance(v, dict) and isinstance(cfg.get(k), dict): cfg[k] = {**cfg[k], **v}
        else: cfg[k] = v
    (folder / "config.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
    return folder / "config.yaml"


def _cfg(folder: Path, text: str) -> Path:
    "A config file whose dataset is the valid one of `folder/base`, with `text` appended (raw YAML)."
    base = folder / "base"
    if not base.exists(): write_dataset(base)
    head = (f"dataset: {{adapter: paired_context, path: {base / 'data'}, snapshots: {base / 'snapshots.json'}}}\n"
            f"label_space: {json.dumps(LABELS)}\n")
    path = folder / f"cfg{len(list(folder.glob('cfg*.yaml')))}.yaml"
    path.write_text(head + text)
    return path


def _fifo(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists() or path.is_symlink(): path.unlink()
    os.mkfifo(path)
    return path


def _link(path: Path, target: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists() or path.is_symlink(): path.unlink()
    path.symlink_to(target)
    return path


def build(tmp: Path, scores_csv: Path) -> list:
    "Every case; `scores_csv` is a valid long score file for the base dataset (for the analyze cases)."
    t, out = Path(tmp), []
    add = lambda *a, **k: out.append(Case(*a, **k))
    base = write_dataset(t / "base")

    # --- configs: bombs, nesting, oversized values, types, files that are not files
    bomb = "lol:\n  a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"  {c}: &{c} [*{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}]\n" for p, c in zip("abcdefgh", "bcdefghi"))
    add("yaml_billion_laughs", ["validate", _cfg(t, bomb)], 2, "expands to more than 100,000 values")
    add("yaml_alias_bomb_in_a_value", ["validate", _cfg(t, bomb + "seed: *i\n")], 2, "expands to more than")
    add("yaml_alias_bomb_in_run", ["run", _cfg(t, bomb), "--no-report", "--out", t / "bomb_run"], 2, "expands to more than")
    add("yaml_flow_nesting_20000", ["validate", _cfg(t, "x: " + "[" * 20000 + "]" * 20000 + "\n")], 2, "nested deeper than 64 levels")
    add("yaml_block_nesting_3000", ["validate", _cfg(t, "".join(" " * i + f"k{i}:\n" for i in range(3000)))], 2, "nested deeper than 64")
    add("yaml_5000_digit_integer", ["validate", _cfg(t, "seed: " + "9" * 5000 + "\n")], 2, "an integer of more than 64 characters")
    add("yaml_megabyte_string", ["validate", _cfg(t, "seed: '" + "x" * 1_000_000 + "'\n")], 2, "seed: expected an integer")
    add("yaml_duplicate_key", ["validate", _cfg(t, "seed: 1\nseed: 2\n")], 2, "duplicate key 'seed'")
    add("yaml_unknown_section", ["validate", _cfg(t, "analysys: {}\n")], 2, "analysys: unknown key")
    add("yaml_syntax_error", ["validate", _cfg(t, "analysis: [1,\n")], 2, "line ")
    add("yaml_tabs", ["validate", _cfg(t, "analysis:\n\tepsilon: 0.1\n")], 2, "line 4: found character")
    (t / "list.yaml").write_text("- 1\n- 2\n")
    add("yaml_top_level_list", ["validate", t / "list.yaml"], 2, "top level must be a mapping")
    (t / "binary.yaml").write_bytes(b"\xff\xfe\x00garbage\x80")
    add("yaml_not_utf8", ["validate", t / "binary.yaml"], 2, "not UTF-8")
    (t / "empty.yaml").write_text("")
    add("yaml_empty_file", ["validate", t / "empty.yaml"], 2, "dataset: missing required key")
    add("config_is_a_fifo", ["validate", _fifo(t / "fifo.yaml")], 2, "a FIFO (named pipe), not a regular file")
    add("config_is_dev_zero", ["validate", _link(t / "zero.yaml", "/dev/zero")], 2, "a character device, not a regular file")
    add("config_is_a_folder", ["validate", t / "base"], 2, "a folder, not a regular file")
    add("config_missing", ["validate", t / "absent.yaml"], 2, "no such file")
    add("seed_negative", ["validate", _cfg(t, "seed: -1\n")], 2, "seed must be a non-negative integer")
    add("seed_boolean", ["validate", _cfg(t, "seed: true\n")], 2, "seed: expected an integer, got True")
    add("epsilon_nan", ["validate", _cfg(t, "analysis: {epsilon: .nan}\n")], 2, "epsilon must be in [1e-6, 1)")
    add("epsilon_infinite", ["validate", _cfg(t, "analysis: {epsilon: .inf}\n")], 2, "epsilon must be in [1e-6, 1)")
    add("n_bootstrap_1e12", ["validate", _cfg(t, "analysis: {n_bootstrap: 1000000000000}\n")], 2, "n_bootstrap must be between 10 and")
    add("n_bootstrap_1e12_in_run", ["run", _cfg(t, "analysis: {n_bootstrap: 1000000000000}\nreasoning: {models: [{id: m}]}\n"),
                                    "--no-report", "--out", t / "boot_run"], 2, "n_bootstrap must be between 10 and")
    add("resampling_over_memory_bound", ["validate", _cfg(t, "analysis: {n_bootstrap: 10000000, max_memory_gb: 0.01}\n")], 2,
        "above analysis.max_memory_gb")
    add("unknown_endpoint_in_validate", ["validate", _cfg(t, "analysis: {endpoints: [nonsense]}\n")], 2, "analysis.endpoints: unknown endpoint 'nonsense'")
    add("unknown_endpoint_before_any_call", ["run", _cfg(t, "analysis: {endpoints: [nonsense]}\nreasoning: {models: [{id: m}]}\n"),
                                             "--no-report", "--out", t / "ep_run"], 2, "unknown endpoint 'nonsense'")
    add("unknown_backend", ["validate", _cfg(t, "reasoning: {models: [{id: m, backend: telepathy}]}\n")], 2, "reasoning.models[0].backend: unknown backend")
    add("perturbation_of_a_missing_field", ["validate", _cfg(t, "reasoning: {models: [{id: m}], perturbations: ['drop:radiology']}\n")],
        2, "reasoning.perturbations: perturbation 'drop:radiology': no snapshot field 'radiology'")
    add("unknown_perturbation", ["validate", _cfg(t, "reasoning: {models: [{id: m}], perturbations: [rot13]}\n")],
        2, "reasoning.perturbations: unknown perturbation 'rot13'")
    add("perturbations_not_a_list", ["validate", _cfg(t, "reasoning: {models: [{id: m}], perturbations: 'drop:*'}\n")],
        2, "reasoning.perturbations: expected a list")
    add("zero_prompt_formats", ["validate", _cfg(t, "reasoning: {models: [{id: m}], formats: 0}\n")], 2, "reasoning.formats: formats must be from 1")
    add("too_many_replicates", ["validate", _cfg(t, "reasoning: {models: [{id: m}], replicates: 1000}\n")], 2, "reasoning.replicates: replicates must be")
    add("format_noise_negative", ["validate", _cfg(t, "reasoning: {models: [{id: m, format_noise: -1}]}\n")], 2, "format_noise, retest_noise")
    add("planted_field_not_in_the_data", ["validate", _cfg(t, "reasoning: {models: [{id: m, field_dependence: radiology}]}\n")],
        2, "reasoning.models[0].field_dependence")
    add("backend_option_typo", ["validate", _cfg(t, "reasoning: {models: [{id: m, alignmnet: 0.3}]}\n")], 2, "reasoning.models[0].alignmnet: unknown key")
    add("remote_without_allow_remote", ["validate", _cfg(t, "reasoning: {models: [{id: m, backend: openai, base_url: 'https://api.example.com/v1'}]}\n")],
        2, "reasoning.allow_remote")
    add("token_pasted_into_api_key_env", ["validate", _cfg(t, f"reasoning: {{models: [{{id: m, backend: openai, base_url: 'http://127.0.0.1:9/v1', "
                                                             f"api_key_env: {TOKEN}}}]}}\n")], 2, "reasoning.models[0].api_key_env", forbid=(TOKEN,))
    add("password_in_base_url", ["validate", _cfg(t, f"reasoning: {{models: [{{id: m, backend: openai, base_url: 'http://u:{TOKEN}@127.0.0.1:9/v1'}}]}}\n")],
        2, "reasoning.models[0].base_url", forbid=(TOKEN,))
    add("token_in_an_unknown_key", ["validate", _cfg(t, f"reasoning: {{models: [{{id: m, backend: openai, base_url: 'http://127.0.0.1:9/v1', "
                                                       f"api_key: {TOKEN}}}]}}\n")], 2, "reasoning.models[0].api_key: unknown key", forbid=(TOKEN,))
    add("api_key_env_not_set", ["run", _cfg(t, "reasoning: {models: [{id: m, backend: openai, base_url: 'http://127.0.0.1:9/v1', api_key_env: CB_ABSENT_VAR}]}\n"),
                                "--no-report", "--out", t / "env_run"], 2, "named in api_key_env is not set", forbid=("CB_ABSENT_VAR",))
    add("label_space_bad_key", ["validate", write_dataset(t / "ls_bad", config={"label_space": [{"key": "Bad Key", "name": "B", "definition": "d"}]})],
        2, "label_space[0]: category key 'Bad Key' must match")
    add("donors_more_than_patients", ["validate", _cfg(t, "reasoning: {models: [{id: m}], donors_per_patient: 5}\n")], 2,
        "reasoning.donors_per_patient")
    add("outer_folds_one", ["validate", _cfg(t, "representation: {enabled: true, outer_folds: 1}\n")], 2, "outer_folds must be at least 2")
    add("model_ids_sharing_a_folder_are_fine", ["validate", _cfg(t, "reasoning: {models: [{id: org/m}, {id: org_m}]}\n")], 0)
    add("model_id_of_300_characters_runs", ["run", _cfg(t, "reasoning: {models: [{id: org/" + "m" * 300 + "}]}\n"), "--no-report", "--no-validity",
                                            "--track", "reasoning", "--out", t / "long_id_run"], 0)
    add("yaml_list_as_a_key", ["validate", _cfg(t, "? [1, 2]\n: 3\n")], 2, "a key must be a plain value")
    add("yaml_mapping_as_a_key", ["validate", _cfg(t, "? {a: 1}\n: 3\n")], 2, "a key must be a plain value")
    add("password_with_a_space_in_base_url", ["validate", _cfg(t, "reasoning: {models: [{id: m, backend: openai, base_url: 'http://admin:PW CANARY@127.0.0.1:9/v1'}]}\n")],
        2, "reasoning.models[0].base_url", forbid=("CANARY",))
    add("token_with_a_line_break", ["run", _cfg(t, "reasoning: {models: [{id: m, backend: openai, base_url: 'http://127.0.0.1:9/v1', api_key_env: CB_CRLF_TOKEN}]}\n"),
                                    "--no-report", "--out", t / "crlf_run"], 2, "holds spaces or control characters", forbid=("CRLFCANARY",),
        env={"CB_CRLF_TOKEN": "sk-proj-CRLFCANARY0123\r456789"})
    add("track1_rank_zero", ["validate", _cfg(t, "representation: {enabled: true, ranks: [0, -5]}\n")], 2, "ranks must be whole numbers of at least 1")
    add("track1_encoder_batch_zero", ["validate", _cfg(t, "representation: {enabled: true, encoder: {batch_size: 0}}\n")], 2, "batch_size must be at least 1")
    add("track1_fuzzy_threshold_seven", ["validate", _cfg(t, "representation: {enabled: true, fuzzy_threshold: 7}\n")], 2, "fuzzy_threshold must be in (0, 1]")
    add("bootstrap_over_the_memory_bound", ["validate", _cfg(t, "analysis: {n_bootstrap: 6500000}\n")], 2, "above analysis.max_memory_gb")

    # --- tables: labels, ids, spellings, encodings, files that are not files
    d = lambda name, **kw: ["validate", write_dataset(t / name, **kw)]
    add("label_two", d("label_two", free=[r if i else r[:3] + [2, 1] for i, r in enumerate(FREE)]), 2,
        "context_free.csv, table 'context_free', row 2, column 'Risk': label '2' is not 0 or 1")
    add("label_text_true", d("label_true", free=[r if i else r[:3] + ["TRUE", 1] for i, r in enumerate(FREE)]), 2, "label 'TRUE' is not 0 or 1")
    add("label_half", d("label_half", corr=[r if i else r[:3] + [0.5, 1] for i, r in enumerate(CORR)]), 2, "column 'Risk': label '0.5' is not 0 or 1")
    add("label_exponent", d("label_exp", free=[r if i else r[:3] + ["1e0", 1] for i, r in enumerate(FREE)]), 2, "label '1e0' is not 0 or 1")
    add("label_patient_text", d("label_text", free=[r if i else r[:3] + ["patient reports chest pain", 1] for i, r in enumerate(FREE)]), 2,
        "label (a text of 26 characters) is not 0 or 1", forbid=("chest pain",))
    add("empty_patient_id", d("empty_id", corr=[r if i != 2 else [""] + r[1:] for i, r in enumerate(CORR)]), 2, "row 4, column 'patient': empty id cell")
    add("trailing_space_patient", d("space_patient", corr=[r if i != 4 else ["002 "] + r[1:] for i, r in enumerate(CORR)]), 2,
        "correct_context.csv, table 'correct_context', row 6, column 'patient': patient '002 ' and '002'")
    add("nfd_item_spelling", d("nfd_item", corr=[r if i != 2 else r[:2] + ["stati\u0301n"] + r[3:] for i, r in enumerate(CORR)]
                                 + [["001", "o1", "statín", 1, 0]], free=FREE + [["001", "o1", "statín", 1, 0]]), 2, "differ only by Unicode normalization")
    add("observer_near_duplicate", d("space_observer", free=[r if i != 1 else [r[0], " o2"] + r[2:] for i, r in enumerate(FREE)]), 2,
        "observer 'o2' and ' o2'")
    add("snapshot_key_near_duplicate", d("space_snap", snaps={**SNAPS, "003 ": {"summary": "x"}}), 2, "patient '003 ' and '003'")
    add("condition_mismatch", d("mismatch", corr=[r if i != 7 else r[:2] + ["HIV tests"] + r[3:] for i, r in enumerate(CORR)]), 2,
        "column 'item': patient '003', observer 'o2'")
    add("observer_count", d("count", free=FREE[:-1], corr=CORR[:-1]), 2, "has 1 observer(s), expected 2")
    add("conflicting_duplicate", d("dup", train=[["001", "o1", "aspirin", 0, 0], ["001", "o1", "aspirin", 1, 0]]), 2,
        "train.csv, table 'train', row 3, column 'item': same patient, observer and item as row 2 but other labels")
    add("unknown_column", d("unk_col", header=HEADER + ["Notes"], free=[r + ["x"] for r in FREE], corr=[r + [""] for r in CORR],
                            train=[["001", "o1", "aspirin", 0, 0, ""], ["001", "o2", "aspirin", 0, 1, ""]]), 2, "column 'Notes': unknown column")
    add("header_only_table", d("header_only", train=[]), 2, "train.csv, table 'train': the table has no data rows")
    add("ragged_row", d("ragged", free=FREE[:3] + [FREE[3] + [1, 1]] + FREE[4:]), 2, "row 5: the row has 7 cells but the header names 5")
    add("leakage", d("leak", snaps={**SNAPS, "002": {"medication_history": ["insulin glargine nightly"]}}), 2,
        "column 'item': the item's text appears in its own patient's snapshot")
    add("missing_snapshot", d("no_snap", snaps={"001": SNAPS["001"], "002": SNAPS["002"]}), 2, "patient '003' has no snapshot")
    latin = write_dataset(t / "latin")
    (latin.parent / "data/train.csv").write_bytes(",".join(HEADER).encode() + b"\n001,o1,caf\xe9,0,0\n001,o2,caf\xe9,0,0\n")
    add("table_not_utf8", ["validate", latin], 2, "train.csv, table 'train': the file is not UTF-8")
    nul = write_dataset(t / "nul")
    (nul.parent / "data/train.csv").write_bytes(",".join(HEADER).encode() + b"\n001,o1,asp\x00irin,0,0\n001,o2,asp\x00irin,0,1\n")
    add("table_with_nul_byte_is_text", ["validate", nul], 0)
    huge = write_dataset(t / "huge_field")
    (huge.parent / "data/train.csv").write_text(",".join(HEADER) + "\n001,o1," + "a" * 200_000 + ",0,0\n")
    add("table_with_200k_field", ["validate", huge], 2, "train.csv, table 'train': malformed CSV")
    missing = write_dataset(t / "missing_table", train=False)
    add("missing_table", ["validate", missing], 2, "table 'train': no file train.csv in this folder")
    fifo_t = write_dataset(t / "fifo_table"); _fifo(fifo_t.parent / "data/train.csv")
    add("table_is_a_fifo", ["validate", fifo_t], 2, "train.csv, table 'train': cannot read the table (a FIFO (named pipe)")
    zero_t = write_dataset(t / "zero_table"); _link(zero_t.parent / "data/train.csv", "/dev/zero")
    add("table_is_dev_zero", ["validate", zero_t], 2, "cannot read the table (a character device")
    crlf = write_dataset(t / "bom_crlf")
    for name in ("context_free", "correct_context", "train"):
        p = crlf.parent / "data" / f"{name}.csv"
        p.write_bytes(b"\xef\xbb\xbf" + p.read_bytes().replace(b"\r\n", b"\n").replace(b"\n", b"\r\n"))
    add("bom_and_crlf_are_fine", ["validate", crlf], 0)

    # --- workbooks
    def book(name, content: bytes):
        folder = t / name
        cfg = write_dataset(folder)
        (folder / "book.xlsx").write_bytes(content)
        text = cfg.read_text().replace("path: data", "path: book.xlsx")
        cfg.write_text(text)
        return ["validate", cfg]
    add("workbook_random_bytes", book("wb_random", os.urandom(4096)), 2, "book.xlsx: cannot read the workbook")
    add("workbook_empty_zip", book("wb_empty_zip", _empty_zip()), 2, "book.xlsx: cannot read the workbook")
    add("workbook_empty_file", book("wb_empty", b""), 2, "book.xlsx: cannot read the workbook")
    fifo_b = write_dataset(t / "wb_fifo"); _fifo(fifo_b.parent / "book.xlsx")
    fifo_b.write_text(fifo_b.read_text().replace("path: data", "path: book.xlsx"))
    add("workbook_is_a_fifo", ["validate", fifo_b], 2, "book.xlsx: a FIFO (named pipe), not a regular file")
    add("workbook_boolean_labels", ["validate", _bool_book(t / "wb_bool")], 2, "book.xlsx, table 'context_free', row 2, column 'Risk': label 'FALSE' is not 0 or 1")

    # --- snapshots
    s = lambda name, raw: ["validate", write_dataset(t / name, raw_snaps=raw)]
    add("snapshots_nested_100000", s("snap_deep", b'{"001": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"), 2, "snapshots.json: the JSON is nested too deeply")
    add("snapshots_5000_digit_number", s("snap_bigint", b'{"001": {"labs": ' + b"9" * 5000 + b"}}"), 2, "snapshots.json:")
    add("snapshots_a_list", s("snap_list", b"[1, 2, 3]"), 2, "expected a JSON object mapping patient id to snapshot")
    add("snapshots_field_a_number", s("snap_num", json.dumps({**SNAPS, "001": {"labs": 5}}).encode()), 2, "patient '001': field 'labs'")
    add("snapshots_duplicate_patient", s("snap_dup", b'{"001": {"summary": "a"}, "001": {"summary": "b"}}'), 2, "key '001' appears twice")
    add("snapshots_not_json", s("snap_bad", b"{not json"), 2, "snapshots.json: invalid JSON at line 1")
    add("snapshots_not_utf8", s("snap_latin", b'{"001": {"summary": "\xff"}}'), 2, "not UTF-8")
    fifo_s = write_dataset(t / "snap_fifo"); _fifo(fifo_s.parent / "snapshots.json")
    add("snapshots_is_a_fifo", ["validate", fifo_s], 2, "snapshots.json: cannot read the snapshots file (a FIFO")
    zero_s = write_dataset(t / "snap_zero"); _link(zero_s.parent / "snapshots.json", "/dev/zero")
    add("snapshots_is_dev_zero", ["validate", zero_s], 2, "cannot read the snapshots file (a character device")

    # --- score files for `carebench analyze`
    import pandas as pd
    good = pd.read_csv(scores_csv, dtype=str, keep_default_na=False)
    def scores(name, frame=None, raw: bytes | None = None, suffix=".csv"):
        p = t / "scores" / f"{name}{suffix}"
        p.parent.mkdir(exist_ok=True)
        if raw is not None: p.write_bytes(raw)
        elif suffix == ".parquet": frame.to_parquet(p)
        else: frame.to_csv(p, index=False)
        return ["analyze", "--config", base, "--scores", p, "--out", t / "analyze" / name, "--quiet"]
    add("scores_header_only", scores("header_only", good.head(0)), 2, "header_only.csv: the score file has a header but no scores")
    add("scores_parquet_booleans", scores("booleans", good.assign(score=good["score"].astype(float) > 0.5), suffix=".parquet"), 2,
        "score_not_numeric")
    add("scores_parquet_corrupt", scores("corrupt", raw=b"PAR1 not really", suffix=".parquet"), 2, "corrupt.parquet: cannot read the score file")
    bad = good.copy(); bad.loc[5, "score"] = "inf"
    add("scores_infinite", scores("inf", bad), 2, "row 7, column 'score': the score is not a finite number")
    bad = good.copy(); bad.loc[9, "score"] = "1.5"
    add("scores_out_of_range", scores("range", bad), 2, "row 11, column 'score': score 1.5 is outside [0, 1]")
    bad = good.copy(); bad.loc[3, "score"] = "0.5_5"
    add("scores_underscore_number", scores("underscore", bad), 2, "row 5, column 'score'")
    add("scores_missing_column", scores("no_col", good.drop(columns="category")), 2, "missing column(s) category")
    add("scores_duplicate_row", scores("dup", pd.concat([good, good.head(1)])), 2, "duplicate of row 2")
    add("scores_missing_cells", scores("holes", good.drop(index=[0])), 2, "missing_cells")
    add("scores_not_utf8", scores("latin", raw=b"model,condition,patient_id,item,category,score\nm,context_free,001,caf\xe9,risk,0.1\n"), 2,
        "cannot read the score file (UnicodeDecodeError")
    fifo_sc = _fifo(t / "scores" / "fifo.csv")
    add("scores_is_a_fifo", ["analyze", "--config", base, "--scores", fifo_sc, "--out", t / "analyze" / "fifo"], 2, "fifo.csv: cannot read the score file (a FIFO")

    # --- response caches and run folders
    foreign = t / "foreign.sqlite"
    db = sqlite3.connect(foreign); db.execute("CREATE TABLE patients (id TEXT, name TEXT)"); db.execute("INSERT INTO patients VALUES ('1', 'x')")
    db.commit(); db.close()
    add("cache_status_on_a_foreign_database", ["cache", "status", "--cache", foreign], 2, "not a CAREBench response cache", unchanged=foreign)
    add("run_on_a_foreign_database", ["run", _cfg(t, "reasoning: {models: [{id: m}]}\n"), "--cache", foreign, "--no-report", "--out", t / "foreign_run"],
        2, "not a CAREBench response cache", unchanged=foreign)
    (t / "text.sqlite").write_text("hello")
    add("cache_status_on_a_text_file", ["cache", "status", "--cache", t / "text.sqlite"], 2, "not a usable response cache", unchanged=t / "text.sqlite")
    add("cache_status_on_a_fifo", ["cache", "status", "--cache", _fifo(t / "fifo.sqlite")], 2, "a FIFO (named pipe)")
    unfinished = t / "unfinished_run"
    unfinished.mkdir()
    (unfinished / "run_manifest.json").write_text(json.dumps({"run_id": "x", "status": "running", "protocol_version": "1"}))
    (unfinished / "artifact_index.json").write_text("{}")
    add("report_on_an_unfinished_run", ["report", unfinished], 2, "is not a finished run: it is still running, or was killed")
    add("report_on_a_folder_that_is_no_run", ["report", t / "base"], 2, "is not a run folder")
    broken = t / "broken_run"
    broken.mkdir()
    (broken / "run_manifest.json").write_text('{"status": ')
    add("report_on_a_damaged_manifest", ["report", broken], 2, "run_manifest.json: not valid JSON")
    piped = t / "piped_run"
    piped.mkdir()
    (piped / "run_manifest.json").write_text(json.dumps({"run_id": "x", "status": "completed", "completed": True, "protocol_version": "2"}))
    _fifo(piped / "artifact_index.json")
    add("report_with_a_fifo_in_the_run_folder", ["report", piped], 2, "artifact_index.json: a FIFO (named pipe)")

    # --- the long format and the reference aggregation (issues 15, 16)
    long_dir = t / "long"
    long_dir.mkdir()
    (long_dir / "snapshots.json").write_text(json.dumps(SNAPS))
    def long_cfg(name, rows=None, raw=None, extra=""):
        path = long_dir / name
        if raw is not None: path.write_bytes(raw)
        elif rows is not None:
            with open(path, "w", newline="", encoding="utf-8") as f:
                csv.writer(f).writerows([["patient_id", "observer", "item", "condition", "category", "label"], *rows])
        cfg = long_dir / f"{name}.yaml"
        cfg.write_text(yaml.safe_dump({"dataset": {"adapter": "long", "path": name, "snapshots": "snapshots.json"}, "label_space": LABELS},
                                      sort_keys=False) + extra)
        return cfg
    long_rows = [[p, o, i, cond, k, v] for cond, rows in (("context_free", FREE), ("correct_context", CORR))
                 for p, o, i, risk, care in rows for k, v in (("risk", risk), ("care", care))]
    add("long_table_is_valid", ["validate", long_cfg("ok.csv", long_rows)], 0)
    add("long_unknown_condition", ["validate", long_cfg("cond.csv", long_rows[:3] + [["001", "o2", "NA", "shuffled", "care", 1]] + long_rows[4:])],
        2, "row 5, column 'condition': unknown condition 'shuffled'")
    add("long_label_two", ["validate", long_cfg("two.csv", [r[:5] + [2] if j == 6 else r for j, r in enumerate(long_rows)])], 2,
        "row 8, column 'label': the label must be 0 or 1")
    add("long_missing_category", ["validate", long_cfg("gap.csv", long_rows[1:])], 2, "row 2, column 'category': no 'risk' label")
    add("long_parquet_garbage", ["validate", long_cfg("bad.parquet", raw=b"PAR1garbage\x00\x01")], 2, "not a readable Parquet file")
    add("long_path_is_a_directory", ["validate", long_cfg("adir", raw=None)], 2, "cannot read the long table")
    (long_dir / "adir").mkdir()
    bad_policy = long_dir / "policy.yaml"
    bad_policy.write_text(yaml.safe_dump({"dataset": {"adapter": "long", "path": "ok.csv", "snapshots": "snapshots.json", "aggregation": "median"},
                                          "label_space": LABELS}, sort_keys=False))
    add("aggregation_policy_unknown", ["validate", bad_policy], 2, "dataset.aggregation: unknown aggregation 'median'")
    adj_missing = long_dir / "adj.yaml"
    adj_missing.write_text(yaml.safe_dump({"dataset": {"adapter": "long", "path": "ok.csv", "snapshots": "snapshots.json", "aggregation": "adjudicated"},
                                           "label_space": LABELS}, sort_keys=False))
    add("adjudicated_without_a_table", ["validate", adj_missing], 2, "dataset.adjudication")
    (long_dir / "adjudication.csv").write_text("patient_id,item,condition,category,label\n001,NA,context_free,risk,1\n")
    adj_open = long_dir / "adj_open.yaml"
    adj_open.write_text(yaml.safe_dump({"dataset": {"adapter": "long", "path": "ok.csv", "snapshots": "snapshots.json", "aggregation": "adjudicated",
                                                    "adjudication": "adjudication.csv"}, "label_space": LABELS}, sort_keys=False))
    add("adjudication_leaves_a_disagreement_open", ["validate", adj_open], 2, "have no adjudication")

    # --- FHIR and OMOP (issue 16): the labels are the long table above, the snapshots come from resources / CDM tables
    fhir_dir = t / "fhir"
    fhir_dir.mkdir()
    subject = lambda pid: {"reference": f"Patient/{pid}"}
    good_resources = [{"resourceType": "Patient", "id": "001"}, {"resourceType": "Patient", "id": "002"}, {"resourceType": "Patient", "id": "003"},
                      {"resourceType": "ClinicalImpression", "id": "s1", "status": "completed", "subject": subject("001"), "summary": "lives alone"},
                      {"resourceType": "Condition", "id": "c1", "subject": subject("002"), "code": {"text": "type 2 diabetes"}},
                      {"resourceType": "Observation", "id": "o1", "status": "final", "subject": subject("003"), "code": {"text": "new partner"},
                       "category": [{"coding": [{"code": "social-history"}]}]}]
    def fhir_cfg(name, resources=None, raw=None, extra=None):
        (fhir_dir / name).write_bytes(raw if raw is not None else "\n".join(json.dumps(r) for r in resources).encode())
        cfg = fhir_dir / f"{name}.yaml"
        cfg.write_text(yaml.safe_dump({"dataset": {"adapter": "fhir", "bundles": name, "labels": str(long_dir / "ok.csv"), **(extra or {})},
                                       "label_space": LABELS}, sort_keys=False))
        return cfg
    with_ = lambda i, r: [r if j == i else x for j, x in enumerate(good_resources)]
    add("fhir_ndjson_is_valid", ["validate", fhir_cfg("ok.ndjson", good_resources)], 0)
    add("fhir_resource_fails_validation", ["validate", fhir_cfg("v.ndjson", with_(4, {**good_resources[4], "code": {"coding": [{"system": 5, "code": "E11"}]}}))],
        2, "v.ndjson, row 5, resource Condition/c1, element 'code.coding[0].system': fails FHIR validation")
    add("fhir_line_is_not_json", ["validate", fhir_cfg("j.ndjson", raw=b'{"resourceType": "Patient", "id": "001"}\n{"resourceType": ')], 2,
        "j.ndjson, row 2: invalid JSON")
    add("fhir_unknown_resource_type", ["validate", fhir_cfg("u.ndjson", with_(5, {"resourceType": "Observaton", "id": "o1"}))], 2,
        "resource Observaton/o1, element 'resourceType': unknown resourceType")
    add("fhir_subject_names_no_patient", ["validate", fhir_cfg("s.ndjson", with_(4, {**good_resources[4], "subject": subject("999")}))], 2,
        "resource Condition/c1, element 'subject.reference'")
    add("fhir_deeply_nested_json", ["validate", fhir_cfg("deep.json", raw=b"[" * 200000)], 2, "nested too deeply")
    (fhir_dir / "items.ndjson").write_text(json.dumps({"resourceType": "Basic", "id": "i1", "code": {"text": "statin"}}) + "\n")
    ref_rows = [[p, o, "Basic/i9" if i == "statin" else i, c, k, v] for p, o, i, c, k, v in long_rows]
    with open(fhir_dir / "ref_labels.csv", "w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows([["patient_id", "observer", "item", "condition", "category", "label"], *ref_rows])
    add("fhir_item_reference_names_nothing", ["validate", fhir_cfg("ok2.ndjson", good_resources, extra={"labels": "ref_labels.csv", "items": "items.ndjson"})],
        2, "ref_labels.csv, row 6, column 'item': the item 'Basic/i9' names no resource")
    (fhir_dir / "map.csv").write_text("source_system,source_code,target_system\nICD,E11,SNOMED\n")
    add("fhir_terminology_map_lacks_a_column", ["validate", fhir_cfg("ok3.ndjson", good_resources, extra={"terminology": {"map": "map.csv"}})], 2,
        "map.csv: no column 'target_code'")

    omop_dir = t / "omop"
    def omop_cfg(name, extra=None, **tables):
        folder = omop_dir / name
        folder.mkdir(parents=True)
        base = {"person": "person_id,person_source_value\n1,001\n2,002\n3,003\n",
                "concept": "concept_id,concept_name,vocabulary_id,concept_code\n10,type 2 diabetes,SNOMED,44054006\n",
                "note": "note_id,person_id,note_text\n1,1,lives alone\n2,3,new partner\n",
                "condition_occurrence": "condition_occurrence_id,person_id,condition_concept_id\n1,2,10\n"}
        for k, v in {**base, **tables}.items():
            if v is not None: (folder / f"{k}.csv").write_text(v)
        cfg = omop_dir / f"{name}.yaml"
        ds = {"adapter": "omop", "tables": name, "labels": str(long_dir / "ok.csv"), "patient_id": "person_source_value", **(extra or {})}
        cfg.write_text(yaml.safe_dump({"dataset": ds, "label_space": LABELS}, sort_keys=False))
        return cfg
    add("omop_tables_are_valid", ["validate", omop_cfg("ok")], 0)
    add("omop_concept_id_not_an_integer", ["validate", omop_cfg("cid", condition_occurrence="condition_occurrence_id,person_id,condition_concept_id\n1,2,ten\n")],
        2, "condition_occurrence.csv, table 'condition_occurrence', row 2, column 'condition_concept_id': condition_concept_id must be an integer")
    add("omop_row_of_an_unknown_person", ["validate", omop_cfg("pid", condition_occurrence="condition_occurrence_id,person_id,condition_concept_id\n1,7,10\n")],
        2, "row 2, column 'person_id': person_id 7 is not in the PERSON table")
    add("omop_without_a_concept_table", ["validate", omop_cfg("noconcept", concept=None)], 2, "no CONCEPT table")
    add("omop_duplicate_person", ["validate", omop_cfg("dup", person="person_id,person_source_value\n1,001\n1,002\n3,003\n")], 2,
        "table 'person', row 3, column 'person_id': person_id '1' appears twice")
    db = omop_dir / "cdm.sqlite"
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE person (person_id INTEGER, person_source_value TEXT)")
        conn.execute("CREATE TABLE concept (concept_id INTEGER, concept_name TEXT, vocabulary_id TEXT)")
    add("omop_database_table_lacks_a_column", ["validate", omop_cfg("db", extra={"tables": None, "url": f"sqlite:///{db}"})], 2,
        "table 'concept': no column 'concept_code'")
    add("omop_database_url_with_a_password", ["validate", omop_cfg("pw", extra={"tables": None, "url": f"nosuchdb://admin:{TOKEN}@db.example/cdm"})],
        2, "dataset.url: a URL with a user name or password is refused", forbid=(TOKEN,))
    add("fhir_integer_of_5000_digits", ["validate", fhir_cfg("int.json", raw=b'{"resourceType": "Patient", "id": "001", "multipleBirthInteger": '
                                                              + b"9" * 5000 + b"}")], 2, "int.json: unreadable JSON value")
    add("omop_person_id_in_arabic_digits", ["validate", omop_cfg("arabic", person="person_id,person_source_value\n\u0661,001\n2,002\n3,003\n")],
        2, "row 2, column 'person_id': person_id must be an integer")
    add("omop_value_that_is_infinite", ["validate", omop_cfg("inf", measurement="measurement_id,person_id,measurement_concept_id,value_as_number\n1,1,10,inf\n")],
        2, "column 'value_as_number': value_as_number must be a finite number")
    odd = t / "odd_field"
    write_dataset(odd, snaps={**SNAPS, "001": {**SNAPS["001"], "vitals": ["BP 150/90"]}})
    add("convert_a_field_fhir_cannot_hold", ["convert", odd / "config.yaml", "--to", "fhir", "--out", t / "odd_fhir"], 2,
        "'vitals' have no fhir counterpart")
    # --- the shift section (issue 16): a second dataset the learning tracks are evaluated on
    base_cfg = yaml.safe_load((t / "base" / "config.yaml").read_text())
    base_ds = {k: str((t / "base" / v).resolve()) if k in ("path", "snapshots") else v for k, v in base_cfg["dataset"].items()}
    def shift_cfg(name, shift):
        cfg = t / f"shift_{name}.yaml"
        cfg.write_text(yaml.safe_dump({**base_cfg, "dataset": base_ds, "representation": {"enabled": True}, "shift": shift}, sort_keys=False))
        return cfg
    add("shift_dataset_is_missing", ["validate", shift_cfg("missing", {"dataset": {**base_ds, "path": str(t / "nowhere")}})], 2, "nowhere")
    add("shift_names_a_track_that_fits_nothing", ["validate", shift_cfg("reasoning", {"dataset": base_ds, "tracks": ["reasoning"]})], 2,
        "shift.tracks: the reasoning track fits nothing")
    add("shift_unknown_key", ["validate", shift_cfg("key", {"dataset": base_ds, "nam": "x"})], 2, "shift.nam: unknown key")
    add("shift_dataset_unknown_key", ["validate", shift_cfg("dskey", {"dataset": {**base_ds, "pth": "x"}})], 2, "shift.dataset.pth: unknown key")
    add("synth_shift_spec_unknown_key", ["synth", "--out", t / "synth_shift", "--shift", "vocab=1"], 2, "shift: expected key=value")
    add("omop_database_url_from_the_environment", ["validate", omop_cfg("pwenv", extra={"tables": None, "url_env": "CB_HOSTILE_CDM"})], 2,
        "cannot open the OMOP database", forbid=(TOKEN,), env={"CB_HOSTILE_CDM": f"nosuchdb://admin:{TOKEN}@db.example/cdm"})
    # --- hardening 3 (issue 26): each area's cases live in a module of its own
    import importlib
    for area in ("hostile_requests", "hostile_data", "hostile_runs", "hostile_settings", "hostile_fourth"):
        try: module = importlib.import_module(area)
        except ModuleNotFoundError as e:
            if e.name != area: raise
            continue
        out.extend(module.cases(t / area))
    return out


def _empty_zip() -> bytes:
    import io
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w"): pass
    return buf.getvalue()


def _bool_book(folder: Path) -> Path:
    import openpyxl
    cfg = write_dataset(folder)
    wb = openpyxl.Workbook(); wb.remove(wb.active)
    for name, rows in (("context_free", FREE), ("correct_context", CORR)):
        ws = wb.create_sheet(name); ws.append(HEADER)
        for r in rows: ws.append(r[:3] + [bool(v) for v in r[3:]])
    wb.save(folder / "book.xlsx")
    text = yaml.safe_load(cfg.read_text())
    text["dataset"].update(path="book.xlsx", tables={"train": None})
    cfg.write_text(yaml.safe_dump(text, sort_keys=False))
    return cfg
