"""Benchmark of the answer parser on adversarial answers (issue: hardening). Not a test: it prints figures.

Each answer is 64 KiB built to make a naive parser quadratic (unbalanced braces, unclosed thinking tags, runs of quotes or
backticks, whitespace after a fence, deep nesting) or to hide a valid answer behind such a prefix. Reports the median time of
`parse_scores` per answer over --runs runs and the failure kind (or "ok").

    python bench/parsing.py [--runs 5]
"""
import argparse
import time

import numpy as np

from carebench.core.vocab import SHARES
from carebench.models.parsing import ParseError, parse_scores

SIZE = 64 * 1024
GOOD = "{" + ", ".join(f'"{k}": 0.5' for k in SHARES.keys) + "}"


def fill(piece: str, tail: str = "") -> str:
    "`piece` repeated to 64 KiB, then `tail`."
    return (piece * (SIZE // len(piece) + 1))[:SIZE - len(tail)] + tail


CASES = {
    "unbalanced {": fill("{"), "unclosed <think>": fill("<think>"), 'nested {"a": ': fill('{"a": '), 'quotes "': fill('"'),
    "backticks": fill("`"), "fence then spaces": "```json" + " " * (SIZE - 7), "brackets [": fill("["),
    'escapes {"a":"\\': fill('{"a":"\\'), "digits": fill("9"), "{ then a valid answer": fill("{", GOOD),
    "<think> then a valid answer": fill("<think>", GOOD), "closed traces then a valid answer": fill("<think>x</think>", GOOD),
    "5,000-digit score": '{"diagnoses": ' + "9" * 5000 + "}",
}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    print(f"{'answer (64 KiB)':<36} {'median ms':>10}  outcome")
    worst = 0.0
    for name, text in CASES.items():
        times, outcome = [], "ok"
        for _ in range(args.runs):
            t = time.perf_counter()
            try: parse_scores(text, SHARES)
            except ParseError as e: outcome = e.kind
            times.append(time.perf_counter() - t)
        worst = max(worst, float(np.median(times)))
        print(f"{name:<36} {1000 * np.median(times):>10.2f}  {outcome}")
    print(f"slowest median: {1000 * worst:.2f} ms")


if __name__ == "__main__":
    main()
