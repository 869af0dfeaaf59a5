"""Install smoke tests: the built wheel holds every subpackage, and nbdev keeps papermill's `parameters` tag."""
import json
import os
import shutil
import subprocess
import sys
import zipfile

import nbformat

from conftest import ROOT


def test_wheel_contains_every_subpackage_and_the_console_script(tmp_path):
    r = subprocess.run([sys.executable, "-m", "pip", "wheel", str(ROOT), "--no-deps", "--no-build-isolation", "-q", "-w", str(tmp_path)],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    (wheel,) = tmp_path.glob("carebench-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    sources = sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "carebench").rglob("*.py"))
    assert sources and all(s in names for s in sources), set(sources) - set(names)
    entry = next(n for n in names if n.endswith("entry_points.txt"))
    assert "carebench = carebench.cli:main" in zipfile.ZipFile(wheel).read(entry).decode()
    # the shared report templates, the site settings and the bundled example ship inside the package
    shipped = [f"carebench/_shipped/{p.relative_to(ROOT).as_posix()}" for p in
               [*(ROOT / "reports").glob("*.ipynb"), ROOT / "_quarto.yml", *(ROOT / "data" / "example").iterdir()] if p.is_file()]
    assert all(s in names for s in shipped), set(shipped) - set(names)
    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)              # installed without a checkout beside it: the shipped copies are found
    code = ("from carebench.report.site import templates_dir, source_root; "
            "print(templates_dir()); print((source_root() / 'data' / 'example' / 'config.yaml').is_file())")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path,
                       env={**os.environ, "PYTHONPATH": str(site)})
    assert r.returncode == 0 and r.stdout.split() == [str(site / "carebench" / "_shipped" / "reports"), "True"], r.stdout + r.stderr


def test_import_is_light():
    code = "import sys, carebench.cli; print(sorted(m for m in ('torch', 'transformers', 'vllm') if m in sys.modules))"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout.strip() == "[]", r.stdout + r.stderr


def test_nbdev_clean_keeps_the_parameters_tag(tmp_path):
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("x = 1", metadata={"tags": ["parameters"], "collapsed": True, "scrolled": True})
    nb.cells = [cell, nbformat.v4.new_code_cell("y = x")]
    work = tmp_path / "proj"
    work.mkdir()
    shutil.copy(ROOT / "settings.ini", work / "settings.ini")
    nbformat.write(nb, work / "t.ipynb")
    r = subprocess.run(["nbdev_clean", "--fname", "t.ipynb"], cwd=work, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    meta = json.loads((work / "t.ipynb").read_text())["cells"][0]["metadata"]
    assert meta == {"tags": ["parameters"]}
