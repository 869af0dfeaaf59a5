"""Reading speed and memory of the FHIR adapter on a bulk export (issue 28, item 5). Not a test: it prints figures.

It writes a FHIR Bulk Data export (one NDJSON file per resource type, as `$export` writes them) of about `--mb`
megabytes by replicating the Synthea-shaped patients of tests/fixtures/real_shapes/synthea under new ids (every
reference rewritten), plus a labels table for 200 of its patients, then runs `carebench validate` on it in a fresh process and reports wall
seconds, CPU seconds and peak RSS (as /usr/bin/time would).

    python bench/fhir_scale.py --mb 50                 # a 50 MB export
    python bench/fhir_scale.py --mb 1300 --keep /tmp/x # the issue's 1.3 GB; keep the export for another look
"""
import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SYNTHEA = ROOT / "tests" / "fixtures" / "real_shapes" / "synthea"
LABELLED = 200                      # patients with labels (a study labels a few hundred; the export holds them all)


def templates() -> list:
    "The fixture's patients, each as a list of resources (Organizations of the hospital files left out)."
    out = []
    for f in sorted((SYNTHEA / "fhir").glob("Doe*.json")):
        out.append([e["resource"] for e in json.loads(f.read_text())["entry"]])
    return out


def write_export(folder: Path, megabytes: float) -> dict:
    "An NDJSON export of about `megabytes`; returns counts."
    folder.mkdir(parents=True, exist_ok=True)
    pats = templates()
    handles, written, n, labels = {}, 0, 0, []
    try:
        while written < megabytes * 1e6:
            for template in pats:
                pid = f"x{n:06d}"
                old = template[0]["id"].split("-")[0]                 # the fixture's ids are `<patient>-<type>-<n>`
                text = json.dumps(template).replace(f"urn:uuid:{old}-patient-1", f"Patient/{pid}")
                text = text.replace(f'"{old}-', f'"{pid}-').replace(f'"urn:uuid:{old}-', f'"urn:uuid:{pid}-')
                for r in json.loads(text):
                    if r["resourceType"] == "Patient": r["id"] = pid; r["identifier"][0]["value"] = pid
                    line = json.dumps(r, separators=(",", ":")) + "\n"
                    t = r["resourceType"]
                    if t not in handles: handles[t] = open(folder / f"{t}.ndjson", "w")
                    handles[t].write(line); written += len(line)
                labels.append(pid); n += 1
    finally:
        for h in handles.values(): h.close()
    return dict(patients=n, bytes=written, files=len(handles)), labels


def write_labels(path: Path, pids: list) -> None:
    "A long labels table: one item for each of `pids`, two observers, both conditions, every category (a pattern)."
    from carebench.core.vocab import SHARES
    with open(path, "w") as f:
        f.write("patient_id,observer,item,condition,category,label\n")
        for k, pid in enumerate(pids):
            for obs in ("MD01", "MD02"):
                for cond in ("context_free", "correct_context"):
                    for c, cat in enumerate(SHARES):
                        f.write(f"{pid},{obs},Erectile dysfunction,{cond},{cat.key},{(k + c + len(obs)) % 2}\n")


def write_dataset(root: Path, megabytes: float, workers: int | None = None) -> tuple:
    counts, pids = write_export(root / "fhir", megabytes)
    write_labels(root / "labels.csv", pids[:LABELLED])
    (root / "config.yaml").write_text("dataset:\n  adapter: fhir\n  bundles: fhir\n  labels: labels.csv\n"
                                      "  patient_id: identifier\n  on_invalid: skip\n"
                                      + (f"  workers: {workers}\n" if workers else ""))
    return counts


def tree_rss(pid: int) -> int:
    "Resident memory of a process and all its descendants (its worker processes), in bytes, from /proc."
    children, rss = {}, {}
    for d in Path("/proc").iterdir():
        if not d.name.isdigit(): continue
        try:
            stat = (d / "stat").read_text().rsplit(")", 1)[1].split()
            children.setdefault(int(stat[1]), []).append(int(d.name))
            rss[int(d.name)] = int(stat[21]) * os.sysconf("SC_PAGE_SIZE")
        except (OSError, IndexError, ValueError): continue
    todo, total = [pid], 0
    while todo:
        p = todo.pop(); total += rss.get(p, 0); todo += children.get(p, [])
    return total


def run_validate(config: Path) -> dict:
    """`carebench validate` in a fresh process: wall and CPU seconds, the peak of the largest process and of the whole
    process tree (the parent and its workers together, sampled every 0.2 s), in MiB, and the exit status."""
    exe = Path(sys.executable).with_name("carebench")
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "carebench.cli"]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd + ["validate", str(config)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    peak_tree = 0
    while p.poll() is None:
        peak_tree = max(peak_tree, tree_rss(p.pid)); time.sleep(0.2)
    stdout, stderr = p.communicate()
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return dict(wall_s=round(wall, 1), cpu_s=round(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime, 1),
                peak_mib=round(after.ru_maxrss / 1024), peak_tree_mib=round(peak_tree / 2**20), returncode=p.returncode,
                last_line=(stdout.strip().splitlines() or stderr.strip().splitlines() or [""])[-1])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=float, default=50, help="size of the export in megabytes (default 50)")
    ap.add_argument("--workers", type=int, help="dataset.workers (default: the adapter chooses)")
    ap.add_argument("--keep", type=Path, help="write the export here and keep it (default: a temporary folder)")
    ap.add_argument("--json", type=Path, help="also write the figures to this file")
    a = ap.parse_args(argv)
    root = a.keep or Path(tempfile.mkdtemp(prefix="fhir_scale_"))
    try:
        t0 = time.perf_counter()
        counts = write_dataset(root, a.mb, a.workers)
        made = time.perf_counter() - t0
        out = dict(workers=a.workers or "chosen by the adapter", export_mb=round(counts["bytes"] / 1e6, 1),
                   patients=counts["patients"], files=counts["files"],
                   write_s=round(made, 1), validate=run_validate(root / "config.yaml"), cores=os.cpu_count())
        out["mb_per_s"] = round(out["export_mb"] / out["validate"]["wall_s"], 2)
        print(json.dumps(out, indent=1))
        if a.json: a.json.write_text(json.dumps(out, indent=1) + "\n")
    finally:
        if a.keep is None: shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
