"""Every time the README states is the one the bench script that measures it last wrote."""
import json
import re

from conftest import ROOT


def test_the_readme_states_the_test_commands_last_measured_time():
    bench = json.loads((ROOT / "bench" / "test_command.json").read_text())
    readme = " ".join((ROOT / "README.md").read_text().split())
    m = re.search(r"Its last measured run took ([\d.]+) minutes on (\d+) cores \(([\d.]+) CPU-minutes, (\d+) tests passed\)",
                  readme)
    assert m, "the README's test section no longer states the test command's last measured time"
    passed = re.match(r"(\d+) passed", bench["last_line"])
    assert (m.group(1), int(m.group(2)), m.group(3), int(m.group(4))) == (
        f"{bench['wall_s'] / 60:.1f}", bench["cores"], f"{bench['cpu_s'] / 60:.1f}", int(passed.group(1))), \
        "README and bench/test_command.json differ: run `python bench/test_command.py --json bench/test_command.json` " \
        "and state its figures"


def test_the_docs_state_the_counts_the_code_has():
    "Counts that change with the code (scenarios, nulls, fine-tuning fits) are the registry's and the plan's."
    import yaml
    from carebench.stats.simulate import SCENARIOS
    text = lambda p: " ".join((ROOT / p).read_text().split())
    n, nulls = len(SCENARIOS), sum(s.is_null for s in SCENARIOS.values())
    assert re.findall(r"# (\d+) scenarios x P", text("docs/analyze.md")) == [str(n)]
    assert re.findall(r"The default grid \((\d+) scenarios, (\d+) of them nulls", text("nbs/16_simulate.ipynb")) == [(str(n), str(nulls))]
    from carebench.tracks.adaptation.settings import AdaptationConfig
    s, default = yaml.safe_load((ROOT / "data" / "example" / "config.yaml").read_text()).get("adaptation") or {}, AdaptationConfig()
    folds = s.get("outer_folds", default.outer_folds)                     # the example's: 3 (leave-one-out is for GPUs)
    shares = [x for x in s.get("learning_curve", default.learning_curve) if x < 1]
    assert re.findall(r"--track adaptation` fine-tunes (\d+) models", text("docs/tracks.md")) == [str(folds * (1 + len(shares)))]
