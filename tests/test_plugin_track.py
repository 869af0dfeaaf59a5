"""A track of another package (tests/plugin: its own pyproject.toml, registered by the `carebench.tracks` entry point)
is installed, configured, run and reported like a built-in one, its report page shipped in its own package."""
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
    r = run_cli("run", cfg, "--out", tmp_path / "run", "--quiet",
                env={**env, "CAREBENCH_CACHE": str(tmp_path / "c.sqlite")})
    assert r.returncode == 0, r.stderr[-2000:]
    run = tmp_path / "run"
    manifest = json.loads((run / "run_manifest.json").read_text())
    assert manifest["tracks"] == ["toy"] and manifest["toy"]["model"] == "toy"
    assert "toy" in json.loads((run / "endpoints.json").read_text())["models"]
    page = run / "report" / "site" / "toy.html"
    assert page.is_file() and "toy track page" in page.read_text()
    assert 'href="toy.html"' in (run / "report" / "site" / "index.html").read_text()
