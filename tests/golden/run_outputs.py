"""Every output of a run folder, normalized for what legitimately differs between two runs of the same config (the run
id, times and durations, the absolute paths of the run folder and of the repository checkout, the versions and git
state of the machine), then hashed: two runs whose digests are equal wrote the same results.
`python tests/golden/run_outputs.py RUN_DIR [--write FILE]` (the record adds the encoder's scores: see
`SCORED_BY_ENCODER`)."""
import csv
import hashlib
import io
import json
import re
import sys
from pathlib import Path

# Fields of a JSON artifact that describe the machine, the moment or the place of a run, not its results.
VOLATILE = {"run_id", "created_utc", "finished_utc", "started_utc", "completed_utc", "seconds", "wall_seconds",
            "wall_s", "elapsed", "elapsed_s", "duration_s", "git", "packages", "python", "platform", "command",
            "carebench_version", "device", "hostname", "cpu", "threads", "report", "artifact_files", "cache",
            "cache_path", "embedding_cache",
            "peak_mib", "rss_mib", "fit_seconds", "encode_seconds", "items_per_s", "calls_per_s", "tokens_per_s"}
TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:\d\d)?|\d{8}T\d{6}Z-[0-9a-f]{6}")
FLOAT = re.compile(r"-?\d+\.\d{7,}(?:e[+-]?\d+)?")
# Where the repository is checked out (inputs such as data/example are recorded by absolute path).
ROOT = Path(__file__).resolve().parents[2]


def _plain(value):
    "A JSON value without its volatile fields; floats to 9 significant digits (the last bits of a BLAS differ by CPU)."
    if isinstance(value, dict): return {k: _plain(v) for k, v in value.items() if k not in VOLATILE}
    if isinstance(value, list): return [_plain(v) for v in value]
    if isinstance(value, float): return float(f"{value:.9g}")
    return value


def normalized(path: Path, run: Path) -> str:
    "The text of one artifact with the run's id, folder, times and float noise taken out."
    text = path.read_text(encoding="utf-8", errors="replace")
    if path.suffix == ".json":
        try: text = json.dumps(_plain(json.loads(text)), sort_keys=True)
        except ValueError: pass
    elif path.suffix == ".csv":
        rows = list(csv.reader(io.StringIO(text)))
        keep = [j for j, name in enumerate(rows[0] if rows else []) if name not in VOLATILE]
        out = io.StringIO()
        csv.writer(out, lineterminator="\n").writerows([[r[j] for j in keep if j < len(r)] for r in rows])
        text = out.getvalue()
    for path, name in [(str(run), "<RUN>"), (str(run.resolve()), "<RUN>"), (str(ROOT), "<ROOT>")]:
        text = text.replace(path, name)
    text = TIME.sub("<TIME>", text)
    return FLOAT.sub(lambda m: f"{float(m.group()):.9g}", text)


def digests(run) -> dict:
    "role → sha256 of the normalized artifact, for every artifact of the run except the report's own pages."
    run = Path(run)
    index = json.loads((run / "artifact_index.json").read_text())
    return {role: hashlib.sha256(normalized(run / rel, run).encode()).hexdigest()
            for role, rel in sorted(index.items())
            if not role.startswith("report.") and role not in ("run_manifest", "resolved_config", "artifact_index")}


# The learning tracks' scores come from an encoder's floating point, whose last digits differ with the CPU's vector
# kernels (AVX2 against AVX-512 changes scores by up to 3e-6 and, through the rounding to 6 decimals and the bootstrap's
# ties, the artifacts computed from them). These roles hold them; the record keeps those scores to 4 decimals beside
# the digests, and on another CPU they are compared within that rounding.
SCORED_BY_ENCODER = "representation"


def encoder_dependent(role: str, model_slugs: tuple) -> bool:
    "Whether an artifact holds numbers computed from the encoder's scores."
    return (role.startswith("representation_") or any(role.endswith(s) for s in model_slugs)
            or role in ("aggregation_sensitivity", "endpoints", "model_contrasts", "scores", "summary"))


def encoder_scores(run) -> dict:
    "The encoder-scored models' rows of scores.csv: their keys' digest and the scores to 4 decimals, in file order."
    run = Path(run)
    with open(run / "scores.csv", newline="", encoding="utf-8") as f:
        rows = [r for r in csv.DictReader(f) if r.get("scoring_mode") == SCORED_BY_ENCODER]
    keys = "\n".join("|".join(r[k] for k in ("model", "condition", "patient_id", "item", "category",
                                                "context_patient_id")) for r in rows)
    return {"models": sorted({r["model"] for r in rows}), "keys_sha256": hashlib.sha256(keys.encode()).hexdigest(),
            "scores": [round(float(r["score"]), 4) for r in rows]}


if __name__ == "__main__":
    run = Path(sys.argv[1])
    d = digests(run)
    if "--write" in sys.argv:
        d = {**d, "_encoder_scores": encoder_scores(run)}
        Path(sys.argv[sys.argv.index("--write") + 1]).write_text(json.dumps(d, indent=1) + "\n")
    if "--dump" in sys.argv:
        out = Path(sys.argv[sys.argv.index("--dump") + 1]); out.mkdir(parents=True, exist_ok=True)
        index = json.loads((run / "artifact_index.json").read_text())
        for role in d: (out / role).write_text(normalized(run / index[role], run))
    print(json.dumps(d, indent=1))
