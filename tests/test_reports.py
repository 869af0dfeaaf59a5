"""Report templates: one `parameters` cell that survives nbdev's cleaning, no function definitions, and they execute
with papermill on a run of the bundled example."""
import ast
import json
import shutil
import subprocess

import pytest

from conftest import BROWSER, EXAMPLE_SITE_TEMPLATES as SITE, ROOT, WIDTHS, look_both

# the shared templates, then the pages each track ships in its room
TEMPLATES = sorted((ROOT / "reports").glob("*.ipynb")) + sorted((ROOT / "carebench" / "tracks").glob("*/*.ipynb"))


def _code_cells(path):
    return [c for c in json.loads(path.read_text())["cells"] if c["cell_type"] == "code"]


def test_there_are_templates():
    assert SITE < {p.stem for p in TEMPLATES}
    assert {p.stem for p in TEMPLATES} == {"overview", "input", "failures", "model", "condition", "representation", "adaptation",
                                           "perturbations", "emulation", "shift", "comparison", "provenance", "tripod", "validity"}
    from carebench.report.site import page_templates      # the report finds the tracks' pages through the registry
    assert {p.resolve() for p in page_templates()} == {p.resolve() for p in TEMPLATES}


@pytest.mark.parametrize("path", TEMPLATES, ids=lambda p: p.name)
def test_template_has_one_parameters_cell_and_defines_nothing(path):
    cells = _code_cells(path)
    assert sum("parameters" in c["metadata"].get("tags", []) for c in cells) == 1
    for c in cells:
        tree = ast.parse("".join(c["source"]))
        defs = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda))]
        assert not defs, f"{path.name}: templates call the package, they define nothing"


def test_templates_keep_their_parameters_tag_through_nbdev_clean(tmp_path):
    work = tmp_path / "proj"
    (work / "reports").mkdir(parents=True)
    shutil.copy(ROOT / "settings.ini", work / "settings.ini")
    for p in TEMPLATES: shutil.copy(p, work / "reports" / p.name)
    r = subprocess.run(["nbdev_clean", "--fname", "reports"], cwd=work, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    for p in TEMPLATES:
        cells = _code_cells(work / "reports" / p.name)
        assert sum("parameters" in c["metadata"].get("tags", []) for c in cells) == 1, p.name


@pytest.fixture(scope="module")
def example_run(tmp_path_factory):
    from carebench.report.pages import example_run as make
    return make(tmp_path_factory.mktemp("example") / "run")


# the templates of the example's site run when tests/test_report_site.py builds it; here the others, on a run of the example
@pytest.mark.parametrize("path", [p for p in TEMPLATES if p.stem not in SITE], ids=lambda p: p.name)
def test_template_executes_with_papermill(path, example_run, tmp_path):
    papermill = pytest.importorskip("papermill")
    out = tmp_path / path.name
    parameters = {"sim_dir": None} if path.stem == "validity" else {"run_dir": str(example_run)}   # validity: a quick study
    papermill.execute_notebook(str(path), str(out), parameters=parameters, kernel_name="python3",
                               progress_bar=False, cwd=str(path.parent), extra_arguments=["--IPKernelApp.log_level=CRITICAL"])
    executed = json.loads(out.read_text())
    assert any(c["metadata"].get("tags") == ["injected-parameters"] for c in executed["cells"])
    assert not [o for c in executed["cells"] for o in c.get("outputs", []) if o.get("output_type") == "error"]


def test_shift_template_shows_a_shifted_pair(tmp_path):
    """A run of a shifted pair (`carebench synth --shift`): the shift page is planned and its template executes with every
    table and figure filled."""
    papermill = pytest.importorskip("papermill")
    from carebench.adapters.synth import SynthParams, write_shift_pair
    from carebench.report.pages import load_run
    from carebench.report.site import page_plan
    from carebench.tracks.runner import run_tracks
    pair = write_shift_pair(tmp_path / "pair", SynthParams(seed=3, patients=8))
    run = run_tracks(pair["config"], tracks=["representation"], out=tmp_path / "run", validity=False).run.path
    assert "shift" in [p.name for p in page_plan(load_run(run))]
    path = next(p for p in TEMPLATES if p.stem == "shift")
    out = tmp_path / "shift.ipynb"
    papermill.execute_notebook(str(path), str(out), parameters={"run_dir": str(run)}, kernel_name="python3", progress_bar=False,
                               cwd=str(path.parent), extra_arguments=["--IPKernelApp.log_level=CRITICAL"])
    executed = json.loads(out.read_text())
    outputs = [o for c in executed["cells"] for o in c.get("outputs", [])]
    assert not [o for o in outputs if o.get("output_type") == "error"]
    shown = " ".join(str(o.get("data", {}).get("text/html", "")) for o in outputs)
    assert "Jaccard overlap" in shown and "Context specificity" in shown and "No shifted dataset" not in shown
    assert shown.count("data:image/png;base64") == 2                           # both figures, as embedded PNGs
    if BROWSER:                                                                # as the site shows it, at both widths
        from carebench.report.site import build_offline_site
        view = load_run(run)
        build_offline_site(view, [p for p in page_plan(view) if p.name == "shift"], {"shift": (out, None)})
        assert look_both(run / "report/site/shift.html", tmp_path, "shift") == {w: [] for w in WIDTHS}
