"""Three tracks in one run, as a user runs them: one model family frozen (Track 1), fine-tuned (the adaptation track, LoRA) and a prompted
mock (Track 3) on a small synthetic dataset; every track's outputs merged, paired contrasts between the models, and a report
with each track's page."""
import json

import pandas as pd
import pytest
import yaml

from carebench.adapters.synth import SynthParams, write_synthetic
from conftest import BROWSER, WIDTHS, look_both, run_cli


@pytest.fixture(scope="module")
def three_tracks(tmp_path_factory):
    folder = tmp_path_factory.mktemp("three")
    config = write_synthetic(folder / "data", SynthParams(seed=5, patients=6, items=4, train_items=2, shift_rate=0.8))["config"]
    doc = yaml.safe_load(config.read_text())
    doc["representation"] = {"enabled": True, "lambdas": [1.0, 10.0], "ranks": [4]}
    doc["adaptation"] = {"enabled": True, "epochs": 1, "outer_folds": 3, "learning_curve": [0.5], "threads": 1,
                         "model": {"max_length": 96, "batch_size": 16}}
    doc["analysis"] = {**doc.get("analysis", {}), "n_bootstrap": 200, "n_permutations": 500}
    doc["reasoning"]["perturbations"] = ["drop:*", "irrelevant_text"]                  # The reasoning track's suite beside the other tracks
    doc["reasoning"]["formats"], doc["reasoning"]["replicates"] = 3, 2                 # with prompt formats and the retest null
    doc["reasoning"]["emulation"] = {"raters": [{"id": "general_practitioner", "persona": "You are a general practitioner."},
                                                {"id": "psychiatrist", "persona": "You are a psychiatrist."}]}
    config.write_text(yaml.safe_dump(doc))                 # one thread: the other test worker has the second core
    env = {"CAREBENCH_EMBEDDINGS": str(folder / "emb.sqlite"), "CAREBENCH_CACHE": str(folder / "cache.sqlite")}
    r = run_cli("run", config, "--out", folder / "run", "--quiet", "--no-validity", "--no-report", env=env)   # reported below
    assert r.returncode == 0, r.stderr[-3000:]
    return folder / "run", r


def test_every_track_is_merged_and_analysed(three_tracks):
    run, r = three_tracks
    manifest = json.loads((run / "run_manifest.json").read_text())
    assert manifest["tracks"] == ["reasoning", "representation", "adaptation"]
    assert {m["track"] for m in manifest["models"]} == {"reasoning", "representation", "adaptation"}
    doc = json.loads((run / "endpoints.json").read_text())
    t2 = "all-MiniLM-L6-v2+lora_cross_encoder"
    assert set(doc["models"]) == {"dry_run_example", "all-MiniLM-L6-v2+ridge_fusion", t2}
    assert {"brier_improvement", "mantel_haenszel", "context_specificity"} <= set(doc["models"][t2])   # The representation track's set
    scores = pd.read_csv(run / "scores.csv")
    assert set(scores.loc[scores["model"] == t2, "condition"]) == {"context_free", "correct_context", "shuffled_context"}
    fits = json.loads((run / "adaptation_fits.json").read_text())["fits"]
    assert all(len(f["adapter_sha256"]) == 64 and (run / "jobs/adaptation/adapters" / f["adapter"] / "adapter_model.safetensors").exists()
               for f in fits)
    curve = pd.read_csv(run / "adaptation_learning_curve.csv")
    assert list(curve["share"]) == [0.5, 1.0]
    assert "LoRA fine-tuning: 3 outer folds" in r.stdout


def test_models_are_contrasted_pairwise(three_tracks):
    run, _ = three_tracks
    c = pd.read_csv(run / "model_contrasts.csv")
    models = json.loads((run / "endpoints.json").read_text())["models"]
    assert len(c) == 2 * len(models) * (len(models) - 1) // 2          # every pair, specificity and alignment
    assert set(c["endpoint"]) == {"context_specificity", "directional_alignment"}
    assert (c["ci_low"] <= c["estimate"]).all() and (c["estimate"] <= c["ci_high"]).all()


def test_report_has_each_tracks_page(three_tracks):
    run, _ = three_tracks
    env = {"CAREBENCH_CACHE": str(run.parent / "cache.sqlite")}                     # the emulated reference's page too
    e = run_cli("emulate", run.parent / "data" / "config.yaml", "--run", run, "--quiet", "--no-report", env=env)
    assert e.returncode == 0, e.stderr[-3000:]
    r = run_cli("report", run, "--quiet")
    assert r.returncode == 0, r.stderr[-3000:]
    site = run / "report" / "site"
    assert (site / "representation.html").exists() and (site / "adaptation.html").exists()
    page = (site / "adaptation.html").read_text()
    assert "learning curve" in page.lower() and "Traceback" not in page
    assert "Paired differences" in (site / "comparison.html").read_text()
    if BROWSER:                                       # the pages of the fitted tracks in a browser: nothing clipped
        shots = run / "report" / "screenshots"
        shots.mkdir(exist_ok=True)
        pages = [p.stem for p in site.glob("*.html") if p.stem in ("adaptation", "representation", "perturbations", "emulation",
                                                                   "comparison", "model-dry_run_example")]
        assert len(pages) == 6
        found = {p: look_both(site / f"{p}.html", shots, p) for p in pages}
        assert found == {p: {w: [] for w in WIDTHS} for p in pages}
    page = (site / "perturbations.html").read_text()
    assert "when one snapshot field is left out" in page and "drop:" in page and "Traceback" not in page   # the figure and its caption
    assert "estimated again under every prompt format" in page and "SD beyond noise" in page and "test–retest null" in page
    assert "formats (min–max)" in (site / "model-dry_run_example.html").read_text()        # the spread beside each estimate
