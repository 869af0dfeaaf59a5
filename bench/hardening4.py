"""The figures the fourth hardening round is judged by. Not a test: it prints figures (and writes them with --json).

1. Two gzip bombs read by `carebench validate` in a fresh process: an `.ndjson.gz` of a few MB whose first line inflates
   to --gib GiB, and a `.json.gz` Bundle of --gib GiB: exit status, the message's last line, wall seconds, peak memory.
2. `dataset.workers: 1000` against the adapter's own choice on a --mb MB FHIR bulk export: processes started, wall
   seconds, peak memory of the whole process tree (`bench/fhir_scale.py`'s measurement).
3. A canary token passed to a papermill-executed notebook as `-p api_key`: the files of the run folder that hold it.
4. `CAREBENCH_EXAMPLE_RUN` naming a folder of the user's: whether the example cache refuses it and the user's file stays.

    python bench/hardening4.py [--gib 4] [--mb 50] [--json bench/hardening4.json]
"""
import argparse
import gzip
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

import fhir_scale  # noqa: E402

CANARY = "cb-canary-7f3a9d0e2b41c6"


def bomb(path: Path, head: bytes, fill: bytes, size: int, tail: bytes) -> Path:
    "A gzip file of `head`, `fill` repeated to `size` bytes and `tail`, written a MiB at a time (never held whole)."
    block = fill * ((1 << 20) // len(fill))
    with gzip.open(path, "wb", compresslevel=1) as f:
        f.write(head)
        for _ in range(size // len(block)): f.write(block)
        f.write(tail)
    return path


def bombs(root: Path, gib: float) -> dict:
    "Both gzip bombs, each validated in a fresh process."
    size, out = int(gib * 2**30), {}
    labels = root / "labels.csv"
    fhir_scale.write_labels(labels, ["x000000"])
    for name, fname, head, tail in (
            ("ndjson_first_line", "bulk.ndjson.gz", b'{"resourceType":"Patient","id":"x000000","note":"', b'"}\n'),
            ("bundle", "big.json.gz", b'{"resourceType":"Bundle","type":"collection","entry":[{"resource":'
                                      b'{"resourceType":"Patient","id":"x000000","text":{"div":"', b'"}}}]}')):
        folder = root / name
        folder.mkdir()
        t0 = time.perf_counter()
        f = bomb(folder / fname, head, b"a", size, tail)
        cfg = root / f"{name}.yaml"
        cfg.write_text(f"dataset:\n  adapter: fhir\n  bundles: {folder}\n  labels: {labels}\n")
        out[name] = dict(compressed_mb=round(f.stat().st_size / 1e6, 1), inflates_to_gib=gib,
                         write_s=round(time.perf_counter() - t0, 1), validate=fhir_scale.run_validate(cfg))
        f.unlink()
    return out


def workers(root: Path, mb: float) -> dict:
    "The adapter's own choice of workers against `workers: 1000`, on one export."
    counts = fhir_scale.write_dataset(root, mb)
    out = dict(export_mb=round(counts["bytes"] / 1e6, 1), patients=counts["patients"], cores=len(os.sched_getaffinity(0)))
    base = (root / "config.yaml").read_text()
    for label, extra in (("chosen", ""), ("workers_1000", "  workers: 1000\n")):
        (root / "config.yaml").write_text(base + extra)
        out[label] = fhir_scale.run_validate(root / "config.yaml")
    return out


def canary(root: Path) -> dict:
    "papermill -p api_key CANARY: the files of the run folder that hold the token (must be none)."
    import nbformat
    nb = nbformat.v4.new_notebook(metadata={"kernelspec": {"name": "python3", "language": "python",
                                                           "display_name": "Python 3"}})
    nb.cells = [nbformat.v4.new_code_cell("api_key = None\nout = None", metadata={"tags": ["parameters"]}),
                nbformat.v4.new_code_cell("from carebench.core.config import load_config\n"
                                          "from carebench.core.runs import create_run\n"
                                          f"create_run(None, load_config({str(ROOT / 'data/example/config.yaml')!r}), "
                                          "path=out)")]
    nbformat.write(nb, root / "make_run.ipynb")
    run = root / "run"
    r = subprocess.run([sys.executable, "-m", "papermill", str(root / "make_run.ipynb"), str(root / "out.ipynb"), "-p",
                        "api_key", CANARY, "-p", "out", str(run), "-k", "python3", "--no-progress-bar"],
                       capture_output=True, text=True, cwd=root, timeout=300)
    files = [p for p in run.rglob("*") if p.is_file()]
    held = [str(p.relative_to(run)) for p in files if CANARY in p.read_text(errors="replace")]
    return dict(returncode=r.returncode, files_in_run_folder=len(files), files_holding_the_canary=held)


def user_folder(root: Path) -> dict:
    "CAREBENCH_EXAMPLE_RUN naming a folder of the user's: refused, and the user's file still there."
    mine = root / "thesis"
    mine.mkdir()
    (mine / "thesis.docx").write_text("years of work")
    code = ("import sys\nfrom carebench.report.example import example_run\n"
            "try: example_run()\nexcept Exception as e: print(type(e).__name__, str(e)[:200]); sys.exit(2)")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600,
                       env={**os.environ, "CAREBENCH_EXAMPLE_RUN": str(mine)})
    return dict(returncode=r.returncode, message=r.stdout.strip()[-200:],
                user_files_after=sorted(p.name for p in mine.iterdir()))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gib", type=float, default=4, help="what each gzip bomb inflates to, in GiB (default 4)")
    ap.add_argument("--mb", type=float, default=50, help="the FHIR export for the workers check, in MB (default 50)")
    ap.add_argument("--json", type=Path)
    a = ap.parse_args()
    result = dict(machine=dict(cpus=os.cpu_count(), platform=platform.platform(), load_before=os.getloadavg()))
    for name, step in (("gzip_bombs", lambda r: bombs(r, a.gib)), ("workers", lambda r: workers(r, a.mb)),
                       ("canary", canary), ("user_folder", user_folder)):
        root = Path(tempfile.mkdtemp(prefix=f"h4_{name}_"))
        try: result[name] = step(root)
        finally: shutil.rmtree(root, ignore_errors=True)
        print(name, json.dumps(result[name]), flush=True)
    result["machine"]["load_after"] = os.getloadavg()
    if a.json: a.json.write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
