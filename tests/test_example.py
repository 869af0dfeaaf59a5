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


def _files(folder):
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_format_examples_are_the_converted_example(tmp_path):
    """data/example_fhir and data/example_omop are exactly what `carebench convert` makes of the bundled example, and each
    validates as the same 12 patients x 120 pairs."""
    for to in ("fhir", "omop"):
        shipped = EXAMPLE.parent / f"example_{to}"
        r = run_cli("convert", EXAMPLE / "config.yaml", "--to", to, "--out", tmp_path / to)
        assert r.returncode == 0, r.stderr
        assert _files(tmp_path / to) == _files(shipped), to
        r = run_cli("validate", shipped / "config.yaml", "--json")
        assert r.returncode == 0, r.stderr
        out = json.loads(r.stdout)
        assert (out["adapter"], out["n_patients"], out["n_pairs"]) == (to, 12, 120)
