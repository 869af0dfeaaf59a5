"""Report templates: one `parameters` cell, no function definitions, and they execute with papermill."""
import ast
import json

import pytest

from conftest import EXAMPLE, ROOT

TEMPLATES = sorted((ROOT / "reports").glob("*.ipynb"))


def _code_cells(path):
    return [c for c in json.loads(path.read_text())["cells"] if c["cell_type"] == "code"]


def test_there_are_templates():
    assert TEMPLATES


@pytest.mark.parametrize("path", TEMPLATES, ids=lambda p: p.name)
def test_template_has_one_parameters_cell_and_defines_nothing(path):
    cells = _code_cells(path)
    assert sum("parameters" in c["metadata"].get("tags", []) for c in cells) == 1
    for c in cells:
        tree = ast.parse("".join(c["source"]))
        defs = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda))]
        assert not defs, f"{path.name}: templates call the package, they define nothing"


@pytest.mark.parametrize("path", TEMPLATES, ids=lambda p: p.name)
def test_template_executes_with_papermill(path, tmp_path):
    papermill = pytest.importorskip("papermill")
    out = tmp_path / path.name
    papermill.execute_notebook(str(path), str(out), parameters={"config": str(EXAMPLE / "config.yaml"), "out_dir": str(tmp_path)},
                               kernel_name="python3", progress_bar=False, cwd=str(path.parent))
    executed = json.loads(out.read_text())
    assert any(c["metadata"].get("tags") == ["injected-parameters"] for c in executed["cells"])
    assert not [o for c in executed["cells"] for o in c.get("outputs", []) if o.get("output_type") == "error"]
