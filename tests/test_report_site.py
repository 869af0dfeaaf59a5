"""The quickstart with its report site: artifacts against the index, a headless Chromium look at the endpoints page,
and the offline navigation against the Quarto project."""
import json
import re
import shutil
import subprocess
import sys
import time

import pandas as pd
import pytest
import yaml

from conftest import BROWSER, EXAMPLE, EXAMPLE_SITE_TEMPLATES, FLAGS, NO_BROWSER, ROOT, WIDTHS, look_both, run_cli



@pytest.fixture(scope="module")
def quickstart(tmp_path_factory):
    folder = tmp_path_factory.mktemp("quickstart")
    t = time.time()
    r = run_cli("run", EXAMPLE / "config.yaml", "--out", folder / "run",
                env={"CAREBENCH_CACHE": str(folder / "cache.sqlite"), "CAREBENCH_EMBEDDINGS": str(folder / "emb.sqlite")})
    assert r.returncode == 0, r.stderr
    return folder / "run", r.stdout, time.time() - t


def test_quickstart_ends_with_the_site_and_every_artifact_is_there(quickstart):
    run, stdout, seconds = quickstart
    index = json.loads((run / "artifact_index.json").read_text())
    assert stdout.strip().splitlines()[-1] == f"report: {run / 'report' / 'site' / 'index.html'}"
    for role, rel in index.items():
        assert (run / rel).is_file() and (run / rel).stat().st_size > 0, role
    for role in ("run_manifest", "resolved_config", "artifact_index", "adapter_manifest", "scores", "errors", "call_summary",
                 "donor_map", "prompt_templates", "score_validation", "endpoints", "summary", "report.index", "report.quarto_project",
                 "representation_secondary", "representation_choices", "representation_inner_brier"):
        assert role in index, role
    manifest = json.loads((run / "run_manifest.json").read_text())
    for field in ("run_id", "protocol_version", "packages", "git", "command", "seeds", "inputs", "dry_run", "models", "calls", "report",
                  "tracks", "representation"):
        assert field in manifest, field
    assert manifest["report"]["failed_pages"] == [] and manifest["tracks"] == ["reasoning", "representation"]
    assert "all-MiniLM-L6-v2+ridge_fusion" in stdout                          # The representation track ran offline in the quickstart
    from carebench.report.pages import load_run
    from carebench.report.site import page_plan, template_path, templates_dir
    planned = {template_path(templates_dir(), p.template).stem for p in page_plan(load_run(run))}
    assert planned == EXAMPLE_SITE_TEMPLATES                   # every one executed by papermill, none failed
    print(f"quickstart took {seconds:.1f} s")


def test_quickstart_is_offline_with_the_mock_and_shuffled_charts_from_other_patients(quickstart):
    run, _, _ = quickstart
    manifest = json.loads((run / "run_manifest.json").read_text())
    assert manifest["dry_run"] is True and manifest["models"][0]["backend"] == "dry_run"
    scores = pd.read_csv(run / "scores.csv", dtype={"patient_id": str, "context_patient_id": str}, keep_default_na=False)
    shuffled = scores[scores["condition"] == "shuffled_context"]
    assert (shuffled["context_patient_id"] != shuffled["patient_id"]).all() and (shuffled["context_patient_id"] != "").all()
    assert set(scores.columns) == {"model", "condition", "patient_id", "item", "category", "score", "context_patient_id", "scoring_mode"}


def test_offline_site_and_quarto_project_list_the_same_pages(quickstart):
    run, _, _ = quickstart
    project = yaml.safe_load((run / "report/_quarto.yml").read_text())
    def hrefs(entries):
        for e in entries:
            yield from (hrefs(e["contents"]) if "section" in e else [e["href"]])
    quarto_pages = [h.removeprefix("pages/").removesuffix(".ipynb") for h in hrefs(project["website"]["sidebar"]["contents"])]
    assert quarto_pages == [p.removeprefix("pages/").removesuffix(".ipynb") for p in project["project"]["render"]]
    nav = re.findall(r'<a class="[^"]*" href="([^"]+)\.html">', (run / "report/site/index.html").read_text())
    assert nav == quarto_pages
    assert sorted(p.stem for p in (run / "report/site").glob("*.html")) == sorted(quarto_pages)
    # the top-level project renders exactly the report templates
    top = yaml.safe_load((ROOT / "_quarto.yml").read_text())
    rendered = sorted(p.relative_to(ROOT).as_posix() for pattern in top["project"]["render"] for p in ROOT.glob(pattern))
    from carebench.report.site import page_templates
    assert rendered == sorted(p.resolve().relative_to(ROOT).as_posix() for p in page_templates())


@pytest.mark.skipif(BROWSER is None, reason=NO_BROWSER)
def test_every_page_type_in_a_browser_nothing_clipped(quickstart):
    """A screenshot of every page type in the run folder (report/screenshots/<page>-<width>.png) at a desktop's and a
    phone's width: no table or figure reaches past the page, the page never scrolls sideways, no text is smaller than 10
    px (a figure's, as shown, at the desktop width) and no two text boxes overlap, on the page or in a figure."""
    run, _, _ = quickstart
    site, shots = run / "report/site", run / "report/screenshots"
    shots.mkdir(exist_ok=True)
    pages = ["index", "input", "model-dry_run_example", "model-dry_run_example-correct_context", "model-all-MiniLM-L6-v2_ridge_fusion",
             "model-all-MiniLM-L6-v2_ridge_fusion-shuffled_context", "representation", "comparison", "provenance", "tripod"]
    found = {p: look_both(site / f"{p}.html", shots, p) for p in pages}
    assert not {(p, w): c for p, by in found.items() for w, c in by.items() if c}, found
    print(f"screenshots: {shots}")


@pytest.mark.skipif(BROWSER is None, reason=NO_BROWSER)
def test_browser_shows_the_endpoints_table_and_a_figure(quickstart):
    run, _, _ = quickstart
    page = run / "report/site/model-dry_run_example.html"
    shot = run / "report/screenshot-endpoints.png"
    profile = run.parent / "chromium-profile"
    base = [BROWSER, *FLAGS, f"--user-data-dir={profile}", "--window-size=1300,2400", "--enable-logging=stderr", "--v=0"]
    r = subprocess.run(base + [f"--screenshot={shot}", page.as_uri()], capture_output=True, text=True, timeout=120)
    assert shot.is_file() and shot.stat().st_size > 10_000, r.stderr[-500:]
    dom = subprocess.run(base + ["--dump-dom", page.as_uri()], capture_output=True, text=True, timeout=120)
    assert "<table" in dom.stdout and "Directional alignment" in dom.stdout
    assert re.search(r'<img[^>]+src="data:image/png;base64,', dom.stdout)
    console_errors = [l for l in (r.stderr + dom.stderr).splitlines() if "CONSOLE" in l and ("ERROR" in l or "Uncaught" in l)]
    assert not console_errors, console_errors
    print(f"screenshot: {shot}")


def test_report_of_an_analyze_folder_with_pairs_left_out_builds_every_page(quickstart, tmp_path):
    """A folder of `carebench analyze` (scores from anywhere) gets the same site as one of `carebench run`, also when failed calls
    left pairs without scores (`on_missing_scores: exclude_pair`): every page of every model builds."""
    run, _, _ = quickstart
    cfg = yaml.safe_load((EXAMPLE / "config.yaml").read_text())
    for k in ("path", "snapshots"): cfg["dataset"][k] = str(EXAMPLE / cfg["dataset"][k])
    cfg.setdefault("analysis", {})["on_missing_scores"] = "exclude_pair"
    cfg.pop("run", None)
    (tmp_path / "c.yaml").write_text(yaml.safe_dump(cfg))
    scores = pd.read_csv(run / "scores.csv", dtype=str, keep_default_na=False)
    first = scores["patient_id"].iloc[0]
    gone = (scores["condition"] == "shuffled_context") & (scores["patient_id"] == first)
    scores[~gone].to_csv(tmp_path / "holes.csv", index=False)
    r = run_cli("analyze", "--config", tmp_path / "c.yaml", "--scores", tmp_path / "holes.csv", "--out", tmp_path / "a", "--quiet")
    assert r.returncode == 0 and "left out" in r.stdout, r.stderr
    r = run_cli("report", tmp_path / "a", "--quiet")
    assert r.returncode == 0, r.stderr
    manifest = json.loads((tmp_path / "a/run_manifest.json").read_text())
    assert manifest["status"] == "completed" and manifest["report"]["failed_pages"] == []
    pages = sorted(p.stem for p in (tmp_path / "a/report/site").glob("*.html"))
    assert "index" in pages and sum(p.startswith("model-") for p in pages) == 4 * len(manifest["analysed_models"])


def test_a_model_whose_every_call_failed_is_the_first_thing_the_site_says(tmp_path):
    doc = yaml.safe_load((EXAMPLE / "config.yaml").read_text())
    doc["dataset"].update(path=str(EXAMPLE / "dataset.xlsx"), snapshots=str(EXAMPLE / "snapshots.json"))
    doc["representation"] = {"enabled": False}
    doc["reasoning"].update(repair_attempts=0, models=[{"id": "broken-model", "backend": "dry_run", "malformed_rate": 1.0}])
    (tmp_path / "c.yaml").write_text(yaml.safe_dump(doc))
    r = run_cli("run", tmp_path / "c.yaml", "--out", tmp_path / "run", "--quiet", "--no-validity",
                env={"CAREBENCH_CACHE": str(tmp_path / "cache.sqlite")})
    assert r.returncode == 1 and "every call of broken-model failed" in r.stderr
    site = tmp_path / "run" / "report" / "site"
    assert sorted(p.stem for p in site.glob("*.html")) == ["comparison", "failures", "index", "input", "provenance", "tripod"]
    for page in ("index", "comparison", "provenance"):
        text = (site / f"{page}.html").read_text()
        assert "Every call failed" in text and "broken-model" in text and "Traceback" not in text, page
    failures = (site / "failures.html").read_text()
    assert "no complete JSON object in the answer" in failures and "360" in failures
    nav = re.findall(r'href="([^"]+)\.html"', (site / "index.html").read_text())
    assert nav.index("failures") == 1                         # right after the overview
    if BROWSER:                                               # and seen in a browser: nothing clipped
        for page in ("index", "failures"):
            assert look_both(site / f"{page}.html", tmp_path, f"all-failed-{page}") == {w: [] for w in WIDTHS}, page


@pytest.mark.skipif(BROWSER is None, reason=NO_BROWSER)
def test_validity_page_in_a_browser(tmp_path):
    "The page of `carebench simulate` (a quick study, made once and reused): screenshot, nothing clipped."
    from carebench.report.validity import build_validity_page, quick_study
    study = shutil.copytree(quick_study(), tmp_path / "study")
    page = build_validity_page(study)
    nav = re.search(r"<nav>(.*?)</nav>", page.read_text(), re.S).group(1)
    assert "False-positive rates</a>" in nav and "¶" not in nav      # the headings' permalink marks stay out of the sidebar
    assert look_both(page, tmp_path, "validity") == {w: [] for w in WIDTHS}
    print(f"screenshot: {tmp_path / 'validity.png'}")


def test_analyze_of_the_runs_scores_reports_what_the_run_reported(quickstart, tmp_path):
    """`carebench analyze` of the quickstart's own scores.csv: every model reports the run's endpoints with the run's
    figures (the representation track's Brier improvement and Mantel-Haenszel odds ratio too, which the config does not
    list) and the same family decisions."""
    run, _, _ = quickstart
    # with its design-matched simulation, as the run had it (cached: the same design), which is where the family's power
    # comes from
    r = run_cli("analyze", "--config", EXAMPLE / "config.yaml", "--scores", run / "scores.csv", "--out", tmp_path / "a",
                "--quiet")
    assert r.returncode == 0, r.stderr
    again = json.loads((tmp_path / "a" / "endpoints.json").read_text())["models"]
    ran = json.loads((run / "endpoints.json").read_text())["models"]
    assert sorted(again) == sorted(ran)
    for model, res in ran.items():
        names = [k for k in res if k not in ("data", "family", "validity")]
        assert [k for k in again[model] if k not in ("data", "family", "validity")] == names, model
        assert {k: again[model][k] for k in names + ["family"]} == {k: res[k] for k in names + ["family"]}, model
    assert "brier_improvement" in ran["all-MiniLM-L6-v2+ridge_fusion"]


def test_quickstart_writes_the_recorded_results(quickstart):
    """Every artifact of the quickstart (the reasoning track's mock and the representation track), apart from the run
    id, times, paths and machine facts, is the one recorded in tests/golden/example_run_outputs.json: a change of the package's structure changes none of
    them. A deliberate change of results rewrites the record (`python tests/golden/run_outputs.py RUN --write FILE`)."""
    sys.path.insert(0, str(ROOT / "tests" / "golden"))
    from run_outputs import digests, encoder_dependent, encoder_scores
    run, _, _ = quickstart
    recorded = json.loads((ROOT / "tests" / "golden" / "example_run_outputs.json").read_text())
    scored = recorded.pop("_encoder_scores")
    now = digests(run)
    assert sorted(now) == sorted(recorded), f"artifacts differ: {sorted(set(now) ^ set(recorded))}"
    if now["scores"] == recorded["scores"]:         # the recording's CPU kernels: every artifact, to the last digit
        assert [r for r in recorded if now[r] != recorded[r]] == []
        return
    # another CPU's vector kernels: the encoder's scores within their recorded rounding, everything else exactly
    again = encoder_scores(run)
    assert (again["models"], again["keys_sha256"]) == (scored["models"], scored["keys_sha256"])
    gap = max(abs(a - b) for a, b in zip(again["scores"], scored["scores"]))
    assert gap <= 2e-4, f"the encoder's scores moved by {gap} (more than another CPU's rounding)"
    from carebench.evaluation.analyze import model_slugs          # the run's own folder names of its models
    slugs = tuple(model_slugs(json.loads((run / "run_manifest.json").read_text())["analysed_models"])[m]
                  for m in scored["models"])
    assert [r for r in recorded if not encoder_dependent(r, slugs) and now[r] != recorded[r]] == []
    print(f"encoder scores within {gap:.1e} of the record; artifacts computed from them not compared digit by digit")


@pytest.mark.skipif(BROWSER is None, reason=NO_BROWSER)
def test_the_browser_check_sees_each_planted_defect(tmp_path):
    """The check that passes on every real page fails on each defect a person saw, planted in a page of its own: an
    overlapping tick pair, a label on a marker, a break inside a name after its underscore, figure text under 8 px on a
    phone, a navigation that pushes a phone's page down; the same page without the defect passes."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from conftest import look
    from carebench.evaluation.view import Figure
    from carebench.report.site import _CSS, page_html
    nav = [{"href": "index.html", "text": "Overview"}] + [{"href": f"p{k}.html", "text": f"Page {k}"} for k in range(12)]

    def page(name, body, built=True):
        text = (page_html(name, "CAREBench run", nav, "index.html", body) if built else
                f'<html><head><meta name="viewport" content="width=device-width, initial-scale=1"><style>{_CSS}</style>'
                f'</head><body><nav><h1>CAREBench run</h1>' + "".join(f'<a href="#">{e["text"]}</a>' for e in nav) +
                f"</nav><main>{body}</main></body></html>")
        (tmp_path / f"{name}.html").write_text(text)
        return tmp_path / f"{name}.html"

    def figure(draw, size=(5, 3)):
        fig, ax = plt.subplots(figsize=size)
        draw(ax); fig.tight_layout()
        return Figure(fig, "a planted figure")._repr_html_()

    crowded = figure(lambda ax: (ax.set_xticks(range(8)), ax.set_xticklabels([f"-0.00{k}0" for k in range(8)], fontsize=12)))
    spread = figure(lambda ax: (ax.set_xticks(range(3)), ax.set_xticklabels(["0.0", "0.5", "1.0"])))
    on_marker = figure(lambda ax: (ax.plot([0.5], [0.5], "o", ms=10), ax.text(0.5, 0.5, "Infectious diseases", ha="center",
                                                                            va="center")))
    beside = figure(lambda ax: (ax.plot([0.5], [0.5], "o", ms=10), ax.text(0.56, 0.6, "Infectious diseases")))
    name = '<table><tr><td style="max-width:50px">ridge_<wbr>fusion</td></tr></table>'     # a break after the underscore
    whole = '<table><tr><td>ridge_<wbr>fusion</td></tr></table>'
    shrunk = spread.replace('style="max-width:100%"', 'style="width:120px;max-width:120px"')
    cases = {"crowded": (crowded, spread, 1300, "figure labels overlap"),
             "marker": (on_marker, beside, 1300, "a marker"),
             "underscore": (name, whole, 1300, "a word broken across lines: ridge_fusion"),
             "tiny": (shrunk, spread, 390, "figure text of")}
    for key, (bad, good, width, words) in cases.items():          # measured only: no screenshot needed
        found = look(page(f"{key}-bad", bad), None, width)
        assert any(words in f for f in found), (key, found)
    found = look(page("nav-bad", spread, built=False), None, 390)
    assert any("the navigation pushes the page" in f for f in found), found
    good = page("good", "".join(good for bad, good, width, words in cases.values()))   # every one mended, on one page
    assert {w: look(good, None, w) for w in WIDTHS} == {w: [] for w in WIDTHS}
