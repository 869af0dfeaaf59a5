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
