"""Writes endpoints_protocol2.json: the endpoint results of protocol 2 on small designs, as computed before the scale work of
issue 14. `tests/test_golden.py` checks that today's engine gives the same numbers to 1e-12. Re-run only when the protocol
changes on purpose (and say so in the notebook and the README):

    python tests/golden/make_golden.py
"""
import dataclasses
import json
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from cases import CASES, analyze_example  # noqa: E402


def main():
    out = {"cases": {name: fn() for name, fn in CASES.items()}}
    with tempfile.TemporaryDirectory() as tmp:
        out["analyze_example"] = analyze_example(Path(tmp))
    (HERE / "endpoints_protocol2.json").write_text(json.dumps(out, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
