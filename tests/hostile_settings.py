"""Hostile settings (hardening 3, items 9 and 17): the representation track and adaptation-track settings that cannot fit, bounded before any work; model
folders that are not there (never a hub lookup); a misspelt key of a model entry. Every case name starts with `h26_settings_`."""
import json
from pathlib import Path

from hostile_corpus import Case, _cfg, _fifo

P = "h26_settings_"


def _model_folder(folder: Path, config=None, raw: bytes | None = None) -> Path:
    "A folder that looks like a local model to a check that reads only config.json (nothing here is ever loaded)."
    folder.mkdir(parents=True, exist_ok=True)
    if raw is not None: (folder / "config.json").write_bytes(raw)
    elif config is not None: (folder / "config.json").write_text(json.dumps(config))
    return folder


def cases(t: Path) -> list:
    t = Path(t)
    t.mkdir(parents=True, exist_ok=True)
    out = []
    add = lambda name, *a, **k: out.append(Case(P + name, *a, **k))
    v = lambda text: ["validate", _cfg(t, text)]
    a2 = lambda body: v("adaptation: {enabled: true, " + body + "}\n")
    a1 = lambda body: v("representation: {enabled: true, " + body + "}\n")
    model = lambda body: v("reasoning: {models: [{id: m, " + body + "}]}\n")

    # --- the adaptation track: every numeric option bounded, the adapter's memory estimated from the model's sizes
    for name, body, expected in [
        ("lora_r_million", "lora: {r: 1000000}", "adaptation.lora.r: "),
        ("lora_r_above_hidden", "lora: {r: 500}", "hidden size 384"),
        ("lora_alpha_huge", "lora: {alpha: 1000000000000}", "adaptation.lora.alpha: "),
        ("epochs_billion", "epochs: 1000000000", "adaptation.epochs: epochs must be at least 1 and at most 1,000"),
        ("patience_billion", "patience: 1000000000", "adaptation.patience: "),
        ("learning_rate_1e30", "learning_rate: 1.0e+30", "adaptation.learning_rate: learning_rate must be in (0, 1]"),
        ("learning_rate_inf", "learning_rate: .inf", "adaptation.learning_rate: "),
        ("weight_decay_huge", "weight_decay: 1.0e+9", "adaptation.weight_decay: "),
        ("threads_million", "threads: 1000000", "adaptation.threads: "),
        ("learning_curve_fifty_shares", "learning_curve: [" + ", ".join(f"0.{i:02d}" for i in range(1, 51)) + "]",
         "adaptation.learning_curve: "),
        ("max_length_billion", "model: {max_length: 1000000000}", "adaptation.model.max_length: "),
        ("max_length_above_positions", "model: {max_length: 4096}", "512 positions"),
        ("batch_size_memory", "model: {batch_size: 4096}", "adaptation.max_memory_gb"),
        ("batch_size_billion", "model: {batch_size: 1000000000}", "adaptation.model.batch_size: "),
        ("track2_hub_id", "model: {path: bert-base-uncased}", "adaptation.model.path: "),
    ]:
        add(name, a2(body), 2, expected)
    add("lora_r_million_run", ["run", _cfg(t, "adaptation: {enabled: true, lora: {r: 1000000}}\n"), "--out", t / "run_r", "-q"], 2,
        "adaptation.lora.r: ")
    garbage = _model_folder(t / "garbage_model", raw=b"{not json")
    add("track2_config_json_garbage", a2(f"model: {{path: {garbage}}}"), 2, "config.json")
    fifo_model = t / "fifo_model"
    fifo_model.mkdir(parents=True, exist_ok=True)
    _fifo(fifo_model / "config.json")
    add("track2_config_json_fifo", a2(f"model: {{path: {fifo_model}}}"), 2, "not a regular file")
    wide = _model_folder(t / "wide_model", {"model_type": "bert", "hidden_size": 65536, "num_hidden_layers": 512,
                                            "num_attention_heads": 512, "intermediate_size": 262144, "vocab_size": 30522,
                                            "max_position_embeddings": 512})
    add("track2_model_too_large", a2(f"model: {{path: {wide}}}"), 2, "adaptation.max_memory_gb")

    # --- the representation track: the encoder's and the heads' numeric options bounded, the encoder read from a local folder only
    for name, body, expected in [
        ("track1_max_length_billion", "encoder: {max_length: 1000000000}", "representation.encoder.max_length: "),
        ("track1_max_length_above_positions", "encoder: {max_length: 100000}", "512 positions"),
        ("track1_batch_billion", "encoder: {batch_size: 1000000000}", "representation.encoder.batch_size: "),
        ("track1_lambda_inf", "lambdas: [1.0, .inf]", "representation.lambdas: "),
        ("track1_pca_dim_billion", "pca_dim: 1000000000", "representation.pca_dim: "),
        ("track1_inner_folds_billion", "inner_folds: 1000000000", "representation.inner_folds: "),
        ("track1_rank_billion", "ranks: [4, 1000000000]", "representation.ranks: "),
        ("track1_encoder_missing_folder", "encoder: {path: /models/nope}",
         "representation.encoder.path: '/models/nope' does not exist"),
        ("track1_encoder_hub_id", "encoder: {path: sentence-transformers/all-MiniLM-L6-v2}", "representation.encoder.path: "),
    ]:
        add(name, a1(body), 2, expected)

    # --- reasoning-track model entries: a local folder or a typed error, never a hub lookup; a misspelt key lists the model's keys
    add("transformers_missing_folder", model("backend: transformers, path: /models/nope"), 2,
        "reasoning.models[0].path: '/models/nope' does not exist")
    add("transformers_missing_folder_run", ["run", _cfg(t, "reasoning: {models: [{id: m, backend: transformers, path: /models/nope}]}\n"),
                                            "--out", t / "run_nope", "-q"], 2, "reasoning.models[0].path: '/models/nope' does not exist")
    add("transformers_hub_id", ["validate", _cfg(t, "reasoning: {models: [{id: gpt2, backend: transformers}]}\n")], 2,
        "reasoning.models[0].path: ")
    empty = _model_folder(t / "empty_model")
    add("transformers_folder_without_config", model(f"backend: transformers, path: {empty}"), 2, "holds no model config")
    add("vllm_missing_folder", model("backend: vllm, path: /models/nope"), 2, "reasoning.models[0].path: ")
    add("misspelt_model_key", model("scoring_mod: logprob"), 2, "did you mean 'scoring_mode'")
    tiny = _model_folder(t / "tiny_model", {"model_type": "llama", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
                                            "intermediate_size": 128, "vocab_size": 600, "max_position_embeddings": 8192})
    add("misspelt_model_key_transformers", model(f"backend: transformers, path: {tiny}, scoring_mod: json"), 2,
        "a model entry takes its keys (id, backend, revision, scoring_mode, generation) and the options of its backend transformers (path, dtype")
    return out
