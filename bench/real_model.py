"""Prefix reuse measured on a real model: SmolLM2-135M-Instruct (`carebench fetch smollm2-135m`) in logprob mode on the
bundled example, its prompts planned as the reasoning track plans them.

For the first PATIENTS evaluation patients (all three conditions, one donor each), the same requests are scored two ways
by the transformers backend on this machine:
  - with prefix reuse (the backend's default: a prefix tree per batch, siblings in one row, a store across batches),
  - without it (every question's whole prompt read on its own; on the first --plain requests only, it is slow),
and the tokens each computed are compared with the ideal: the distinct prefixes of all the run's token sequences (a
trie's size), which no scheme can go below. It also times one forward of 800 tokens in float32 and bfloat16, and reports
the scores' largest difference between the two ways (they must agree to 1e-4).

    python bench/real_model.py [--patients 3] [--batch 8] [--plain 4] [--json bench/real_model.json]
"""
import argparse
import json
import os
import platform
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def requests_for(ds, patients: int):
    "Requests of the first patients in all three conditions (the donor: the next patient), patient-major."
    from carebench.models.backends import Request
    from carebench.models.prompts import build_prompt
    pts = {p.id: p for p in ds.patients}
    ids = list(dict.fromkeys(ds.pair_patient))[:patients]
    out = []
    for k, pid in enumerate(ids):
        donor = pts[ids[(k + 1) % len(ids)]] if len(ids) > 1 else pts[list(pts)[1]]
        items = [it for p, it in zip(ds.pair_patient, ds.pair_item) if p == pid]
        for cond, shown in (("correct_context", pts[pid]), ("shuffled_context", donor), ("context_free", None)):
            out += [Request(f"{cond}:{pid}:{it}", build_prompt(it, shown, ds.label_space, mode="logprob"), {}) for it in items]
    return out


def sequences(tok, reqs) -> list:
    from carebench.models.hf_backend import _render
    return [tok(_render(tok, r.prompt.with_question(q)), add_special_tokens=False)["input_ids"]
            for r in reqs for q in r.prompt.questions]


def ideal_tokens(seqs) -> int:
    "Distinct prefixes of all sequences: the tokens a perfect reuse computes (a trie's node count)."
    trie, n = {}, 0
    for s in seqs:
        node = trie
        for t in s:
            if t not in node: node[t] = {}; n += 1
            node = node[t]
    return n


def score(backend, reqs, batch: int):
    backend.store.items.clear(); backend.store.bytes = 0
    t0, replies = time.perf_counter(), []
    for i in range(0, len(reqs), batch): replies += backend.generate(reqs[i:i + batch], "logprob")
    seconds = time.perf_counter() - t0
    computed = sum(r.prompt_tokens - r.cached_tokens for r in replies)
    return replies, seconds, computed


def forward_seconds(path, dtype: str, tokens: int = 800) -> float:
    import torch
    from transformers import AutoModelForCausalLM
    m = AutoModelForCausalLM.from_pretrained(path, dtype=getattr(torch, dtype), local_files_only=True).eval()
    ids = torch.randint(100, 40000, (1, tokens))
    with torch.no_grad():
        m(ids); t0 = time.perf_counter(); m(ids)
    return time.perf_counter() - t0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--patients", type=int, default=3)
    ap.add_argument("--batch", type=int, default=8, help="requests per call of the backend (the reasoning track's batch)")
    ap.add_argument("--plain", type=int, default=4,
                    help="requests also scored without reuse (every token read: slow), to compare scores and speed")
    ap.add_argument("--json", help="also write the figures to this file")
    a = ap.parse_args()
    load = os.getloadavg()
    from carebench.adapters.load import load_dataset
    from carebench.core.config import load_config, parse_section
    from carebench.models.backends import BackendContext, ModelConfig, make_backend
    from carebench.models.catalog import catalog_path
    from carebench.tracks.reasoning.settings import ReasoningConfig
    path = catalog_path("smollm2-135m")
    ds = load_dataset(load_config(ROOT / "data" / "example" / "config.yaml"))
    reqs = requests_for(ds, a.patients)
    entry = lambda **o: parse_section(ModelConfig, {"id": "smollm2-135m", "backend": "transformers", "device": "cpu", **o},
                                      key="m")
    reuse = make_backend(entry(), ReasoningConfig(), BackendContext(ds.label_space))
    plain = make_backend(entry(prefix_reuse=False), ReasoningConfig(), BackendContext(ds.label_space))
    seqs = sequences(reuse.tok, reqs)
    got, t_reuse, c_reuse = score(reuse, reqs, a.batch)
    base, t_plain, c_plain = score(plain, reqs[:a.plain], a.batch)
    diff = max(abs(x.scores[k] - y.scores[k]) for x, y in zip(got, base) for k in x.scores)
    out = dict(model="smollm2-135m", patients=a.patients, requests=len(reqs), questions=len(seqs), batch=a.batch,
               prompt_tokens=sum(map(len, seqs)), ideal_tokens=ideal_tokens(seqs),
               computed_with_reuse=c_reuse, computed_without_reuse=sum(map(len, seqs)),
               seconds_with_reuse=round(t_reuse, 1), items_per_s_with_reuse=round(len(reqs) / t_reuse, 2),
               plain_requests=a.plain, plain_computed=c_plain, plain_seconds=round(t_plain, 1),
               items_per_s_without_reuse=round(a.plain / t_plain, 2),
               largest_score_difference=diff,
               forward_800_tokens_s={d: round(forward_seconds(path, d), 2) for d in ("float32", "bfloat16")},
               machine=dict(cpus=os.cpu_count(), platform=platform.platform(), load_before=load, load_after=os.getloadavg()))
    print(json.dumps(out, indent=2))
    if a.json: Path(a.json).write_text(json.dumps(out, indent=2) + "\n")


if __name__ == "__main__":
    main()
