"""Every output of a run folder, normalized for what legitimately differs between two runs of the same config (the run
id, times and durations, the absolute paths of the run folder and of the repository checkout, the versions and git
state of the machine), then hashed: two runs whose digests are equal wrote the same results.
`python tests/golden/run_outputs.py RUN_DIR [--write FILE]`."""
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


if __name__ == "__main__":
    run = Path(sys.argv[1])
    d = digests(run)
    if "--write" in sys.argv: Path(sys.argv[sys.argv.index("--write") + 1]).write_text(json.dumps(d, indent=1) + "\n")
    if "--dump" in sys.argv:
        out = Path(sys.argv[sys.argv.index("--dump") + 1]); out.mkdir(parents=True, exist_ok=True)
        index = json.loads((run / "artifact_index.json").read_text())
        for role in d: (out / role).write_text(normalized(run / index[role], run))
    print(json.dumps(d, indent=1))
