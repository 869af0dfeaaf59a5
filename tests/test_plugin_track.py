"""A track of another package (tests/plugin: its own pyproject.toml, registered by the `carebench.tracks` entry point)
is installed, configured and run like a built-in one, and its report page comes from its own package."""
import json
import os
import shutil
import subprocess
import sys

from conftest import EXAMPLE, ROOT, run_cli


def test_a_track_of_another_package_runs_with_its_own_page(tmp_path):
    src, site = tmp_path / "src", tmp_path / "site"
    shutil.copytree(ROOT / "tests" / "plugin", src)              # built outside the checkout
    r = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation", "--no-index",
                        "--target", str(site), str(src)], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    assert list(site.glob("carebench_toytrack-*.dist-info/entry_points.txt"))
    cfg = tmp_path / "toy.yaml"
    cfg.write_text(f"dataset: {{adapter: paired_context, path: {EXAMPLE / 'dataset.xlsx'}, "
                   f"snapshots: {EXAMPLE / 'snapshots.json'}, observers_per_pair: 2}}\n"
                   "seed: 7\ntoy: {enabled: true, nudge: 0.2}\n")
    env = {"PYTHONPATH": os.pathsep.join(filter(None, [str(site), os.environ.get("PYTHONPATH")]))}
    listed = run_cli("list", "tracks", "--json", env=env)
    assert listed.returncode == 0 and "toy" in [t["name"] for t in json.loads(listed.stdout)], listed.stderr
    r = run_cli("run", cfg, "--out", tmp_path / "run", "--quiet", "--no-report",
                env={**env, "CAREBENCH_CACHE": str(tmp_path / "c.sqlite")})
    assert r.returncode == 0, r.stderr[-2000:]
    run = tmp_path / "run"
    manifest = json.loads((run / "run_manifest.json").read_text())
    assert manifest["tracks"] == ["toy"] and manifest["toy"]["model"] == "toy"
    assert "toy" in json.loads((run / "endpoints.json").read_text())["models"]
    # its page: in the report's plan, executed from the notebook its package ships (the shared pages are tested elsewhere)
    code = ("import sys; from carebench.report.pages import load_run; from carebench.report.site import page_plan, "
            "execute_pages, template_path, templates_dir; v = load_run(sys.argv[1]); plan = [p for p in page_plan(v) "
            "if p.name == 'toy']; done = execute_pages(v, plan); print(template_path(templates_dir(), plan[0].template), "
            "done['toy'][1])")
    r = subprocess.run([sys.executable, "-c", code, str(run)], capture_output=True, text=True, timeout=600,
                       env={**os.environ, **env})
    assert r.returncode == 0, r.stderr[-2000:]
    template, error = r.stdout.rstrip().rsplit(" ", 1) if r.stdout.rstrip().endswith(" None") else (None, r.stdout)
    assert error == "None", r.stdout[-2000:]
    assert template.startswith(str(site)) and template.endswith("toy_page.ipynb"), template
    assert "toy track page" in (run / "report" / "pages" / "toy.ipynb").read_text()
