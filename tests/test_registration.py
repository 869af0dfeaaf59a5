"""A new endpoint is one registration: a toy endpoint registered from outside the package appears in the analysis
(`endpoints.json`, `summary.md`), the model page's table, the fixed sequence, `carebench simulate`'s batches and the
shift differences, with no other edit."""
import dataclasses
import json

from conftest import EXAMPLE


def test_a_toy_endpoint_appears_everywhere(tmp_path):
    from carebench.core.config import load_config
    from carebench.report.pages import endpoint_table, load_run
    from carebench.stats.endpoints import (CONTRASTS, FAMILY, MEAN_CONTRASTS, Cells, register_mean_endpoint,
                                           unregister_endpoint)
    from carebench.stats.shift import shift_differences
    from carebench.stats.simulate import run_batch, simulate_input
    from carebench.tracks.runner import run_tracks

    name = "toy_mean_delta"
    register_mean_endpoint(name, lambda inp, eps: Cells(inp.delta_model, None), "mean Δ_model over every cell",
                           "each patient's summed Δ_model is symmetric about 0", label="toy mean delta",
                           formula="mean Δ_model", family=5, paired=True)
    try:
        config = load_config(EXAMPLE / "config.yaml")
        config = dataclasses.replace(config, analysis=dataclasses.replace(
            config.analysis, endpoints=(*config.analysis.endpoints, name), n_bootstrap=200, n_permutations=500))
        res = run_tracks(config, tracks=["reasoning"], out=tmp_path / "run", cache_path=tmp_path / "cache.sqlite",
                         validity=False)
        run = res.run.path
        endpoints = json.loads((run / "endpoints.json").read_text())["models"]["dry_run_example"]
        assert name in endpoints and endpoints["family"]["order"][-1] == name
        assert "toy mean delta" in (run / "summary.md").read_text()
        assert "toy mean delta" in endpoint_table(load_run(run), "dry_run_example").to_string().lower()
        assert FAMILY[-1] == name and name in CONTRASTS and name in MEAN_CONTRASTS
        rows = run_batch("baseline", 8, 0, 2, config.analysis)                 # the family, as the simulation runs it
        assert {r[3] for r in rows} >= {name, *FAMILY}
        a, b = simulate_input(12, seed=1), simulate_input(12, seed=2)
        assert name in shift_differences(a, b, [name], config.analysis, 0, "toy")
    finally:
        unregister_endpoint(name)
    assert name not in FAMILY
