"""`carebench analyze` as a user runs it: planted scores on the bundled example, and malformed score files."""
import json

import pandas as pd
import pytest

from carebench.adapters.load import load_dataset
from carebench.evaluation.scores import planted_scores
from conftest import EXAMPLE, run_cli

CONFIG = EXAMPLE / "config.yaml"


@pytest.fixture(scope="module")
def scores(tmp_path_factory):
    folder = tmp_path_factory.mktemp("scores")
    ds = load_dataset(CONFIG)
    df = pd.concat([planted_scores(ds, "aligned-model", alignment=0.3, seed=1), planted_scores(ds, "null-model", alignment=0.0, seed=2)])
    df.to_csv(folder / "scores.csv", index=False)
    return folder / "scores.csv"


def test_analyze_recovers_the_planted_direction(scores, tmp_path):
    r = run_cli("analyze", "--config", CONFIG, "--scores", scores, "--out", tmp_path / "out", "--quiet")
    assert r.returncode == 0, r.stderr
    doc = json.loads((tmp_path / "out/endpoints.json").read_text())
    assert doc["protocol_version"] == "2" and set(doc["models"]) == {"aligned-model", "null-model"}
    aligned, null = (doc["models"][m]["directional_alignment"]["overall"] for m in ("aligned-model", "null-model"))
    assert aligned["sign_agreement_rate"] > aligned["chance_rate"] and aligned["p_value"] < 0.01
    assert aligned["estimate"] == pytest.approx(aligned["sign_agreement_rate"] - aligned["sign_agreement_rate_shuffled"])
    # no planted effect: nothing beyond a donor's chart (51 cells on 12 patients: noisy); the one-sided bound is the test
    # inverted, so it is above 0 exactly when the test rejects at α = 0.05
    assert aligned["lower_bound"] > 0 and null["p_value"] > 0.01
    for o in (aligned, null): assert (o["lower_bound"] > 0) == (o["p_value"] <= 0.05)
    family = doc["models"]["aligned-model"]["family"]
    assert family["primary"] == "context_specificity" and family["decisions"]["context_specificity"] == "confirmed"
    validity = doc["models"]["aligned-model"]["validity"]
    assert validity["design"]["n_patients"] == 12 and set(validity["endpoints"]) >= {"context_specificity", "directional_alignment"}
    spec = doc["models"]["aligned-model"]["context_specificity"]["overall"]
    assert spec["mean_difference"] > 0 and spec["p_value"] < 0.05
    index = json.loads((tmp_path / "out/artifact_index.json").read_text())
    for role in ("endpoints", "summary", "score_validation", "paired_cell_deltas.aligned-model", "endpoint.directional_alignment.null-model"):
        assert (tmp_path / "out" / index[role]).stat().st_size > 0, role
    manifest = json.loads((tmp_path / "out/run_manifest.json").read_text())
    assert {"scores", "dataset", "snapshots", "config"} <= {i["role"] for i in manifest["inputs"]}
    assert "aligned-model" in r.stdout and "results:" in r.stdout


def test_analyze_reads_parquet(scores, tmp_path):
    pd.read_csv(scores, dtype=str, keep_default_na=False).to_parquet(tmp_path / "scores.parquet")
    r = run_cli("analyze", "--config", CONFIG, "--scores", tmp_path / "scores.parquet", "--out", tmp_path / "out", "--quiet")
    assert r.returncode == 0, r.stderr


def _break(df, how):
    df = df.copy()
    if how == "missing condition": return df[df["condition"] != "shuffled_context"], "missing_condition"
    if how == "score 1.3": df.loc[df.index[10], "score"] = "1.3"; return df, "score_out_of_range"
    if how == "duplicate rows": return pd.concat([df, df.iloc[[4]]]), "duplicate"
    if how == "unknown category": df.loc[df.index[7], "category"] = "sensitive"; return df, "unknown_category"
    if how == "donor = own patient":
        i = df.index[df["condition"] == "shuffled_context"][0]
        df.loc[i, "context_patient_id"] = df.loc[i, "patient_id"]; return df, "donor_is_own_patient"


@pytest.mark.parametrize("how", ["missing condition", "score 1.3", "duplicate rows", "unknown category", "donor = own patient"])
def test_malformed_scores_exit_2_with_a_validation_table(scores, tmp_path, how):
    df, check = _break(pd.read_csv(scores, dtype=str, keep_default_na=False), how)
    df.to_csv(tmp_path / "bad.csv", index=False)
    r = run_cli("analyze", "--config", CONFIG, "--scores", tmp_path / "bad.csv", "--out", tmp_path / "out", "--quiet")
    assert r.returncode == 2 and r.stderr.startswith("error: ") and r.stderr.count("\n") == 1, r.stderr
    assert check in r.stderr and "Traceback" not in r.stderr
    table = pd.read_csv(tmp_path / "out/score_validation.csv")
    assert check in set(table["check"])
    assert not (tmp_path / "out/endpoints.json").exists()
