#!/usr/bin/env bash
# GPU check of the vllm backend, for a lent GPU machine (no network there): install vLLM from carried wheels if it is
# not in the image, build the tiny local model, run the bundled example with vLLM in both scoring modes (and
# SmolLM2-135M-Instruct in logprob mode from the folder `carebench fetch smollm2-135m` converts, where it is there or
# can be fetched: the same folder the transformers backend reads, so no download from a hub), and the
# openai backend's logprob mode against `vllm serve` on loopback. Prints a short report, with the prefix-cache hit rate
# (prompt tokens the engine served from its prefix cache / all prompt tokens, per model and condition, from compute.csv);
# exit code 0 when all ran.
#   bash bench/device_vllm.sh [WHEELS_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
WHEELS=${1:-wheels}
python3 -c "import vllm" 2>/dev/null || pip install --no-index --find-links "$WHEELS" vllm
pip install --no-deps -e . >/dev/null
OUT=${OUT:-/tmp/carebench_vllm}; mkdir -p "$OUT"
python3 -c "from carebench.models.tiny_model import build_tiny_causal_lm; build_tiny_causal_lm('$OUT/tiny')"
ready() { python3 -c "from carebench.models.catalog import model_folder; print(model_folder('smollm2-135m') or '')"; }
SMOL=$(ready); [ -n "$SMOL" ] || { carebench fetch smollm2-135m >/dev/null 2>&1 || true; SMOL=$(ready); }
SMOL_ENTRY=""; [ -n "$SMOL" ] && SMOL_ENTRY="    - {id: smollm2-135m, backend: vllm, gpu_memory_utilization: 0.3, scoring_mode: logprob}"
cat > "$OUT/config.yaml" <<YAML
dataset: {adapter: paired_context, path: $PWD/data/example/dataset.xlsx, snapshots: $PWD/data/example/snapshots.json}
seed: 7
reasoning:
  models:
    - {id: tiny-vllm-json, backend: vllm, path: $OUT/tiny, gpu_memory_utilization: 0.3, generation: {max_new_tokens: 64}}
    - {id: tiny-vllm-logprob, backend: vllm, path: $OUT/tiny, gpu_memory_utilization: 0.3, scoring_mode: logprob}
$SMOL_ENTRY
YAML
time carebench run "$OUT/config.yaml" --out "$OUT/run" --cache "$OUT/cache.sqlite" --quiet
python3 - "$OUT/run" <<'PY'
import sys, pandas as pd
run = sys.argv[1]
print(pd.read_csv(f"{run}/call_summary.csv").to_string(index=False))
s = pd.read_csv(f"{run}/scores.csv"); print("scores per model:", s.groupby("model").size().to_dict())
c = pd.read_csv(f"{run}/compute.csv"); c["prefix_cache_hit_rate"] = (c["cached_tokens"] / c["prompt_tokens"]).round(3)
print(c[["model", "condition", "prompt_tokens", "cached_tokens", "computed_tokens", "prefix_cache_hit_rate"]].to_string(index=False))
PY
# logprob mode over HTTP: vllm serve on loopback, the openai backend
vllm serve "$OUT/tiny" --host 127.0.0.1 --port 8011 --gpu-memory-utilization 0.3 --enable-prefix-caching \
  --enable-prompt-tokens-details > "$OUT/serve.log" 2>&1 &
SERVER=$!; trap 'kill $SERVER' EXIT
for i in $(seq 1 180); do curl -sf 127.0.0.1:8011/health >/dev/null && break; sleep 1; done
cat > "$OUT/config_http.yaml" <<YAML
dataset: {adapter: paired_context, path: $PWD/data/example/dataset.xlsx, snapshots: $PWD/data/example/snapshots.json}
seed: 7
reasoning:
  models:
    - {id: $OUT/tiny, backend: openai, base_url: "http://127.0.0.1:8011/v1", scoring_mode: logprob, max_concurrency: 16}
YAML
time carebench run "$OUT/config_http.yaml" --out "$OUT/run_http" --cache "$OUT/cache.sqlite" --quiet
python3 - "$OUT/run_http" <<'PY'
import sys, pandas as pd
run = sys.argv[1]
print(pd.read_csv(f"{run}/call_summary.csv").to_string(index=False))
c = pd.read_csv(f"{run}/compute.csv"); c["prefix_cache_hit_rate"] = (c["cached_tokens"] / c["prompt_tokens"]).round(3)
print(c[["model", "condition", "prompt_tokens", "cached_tokens", "computed_tokens", "prefix_cache_hit_rate"]].to_string(index=False))
PY
