"""The bundled example: it validates, and it is exactly what `carebench synth` makes from its recorded parameters."""
import json

import openpyxl

from conftest import EXAMPLE, run_cli


def test_example_validates():
    r = run_cli("validate", EXAMPLE / "config.yaml", "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert (out["n_patients"], out["n_pairs"], out["observers_per_pair"]) == (12, 120, 2)
    assert sum(out["delta_ref_up"].values()) > 0 and sum(out["delta_ref_down"].values()) > 0


def _cells(path):
    wb = openpyxl.load_workbook(path, read_only=True)
    return {ws.title: [list(r) for r in ws.iter_rows(values_only=True)] for ws in wb.worksheets}


def test_example_regenerates_from_its_parameters(tmp_path):
    params = json.loads((EXAMPLE / "truth.json").read_text())["params"]
    args = [a for k, v in params.items() for a in (f"--{k.replace('_', '-')}", v)]
    assert run_cli("synth", "--out", tmp_path, *args).returncode == 0
    for name in ("snapshots.json", "truth.json", "config.yaml"):
        assert (tmp_path / name).read_bytes() == (EXAMPLE / name).read_bytes(), name
    assert _cells(tmp_path / "dataset.xlsx") == _cells(EXAMPLE / "dataset.xlsx")
