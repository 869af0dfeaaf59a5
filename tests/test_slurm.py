"""`carebench run --executor slurm` on a real one-node Slurm cluster started on 127.0.0.1 (slurmctld + slurmd + munge,
Debian's slurm-wlm 22.05). Skips with a message when the packages are missing or the test is not root."""
import json
import os
import shutil
import socket
import subprocess
import time


import pytest
import yaml

from conftest import EXAMPLE, run_cli

NEEDED = ("slurmctld", "slurmd", "munged", "sbatch", "sinfo")


def _find(name):
    return shutil.which(name) or next((p for p in (f"/usr/sbin/{name}", f"/usr/bin/{name}") if os.path.exists(p)), None)


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0)); return s.getsockname()[1]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    missing = [n for n in NEEDED if not _find(n)]
    if missing: pytest.skip(f"Slurm packages not installed ({', '.join(missing)}): `sudo apt-get install slurm-wlm munge` (Debian; "
                             "`.ci/run` does it as root) enables this test")
    if os.geteuid() != 0: pytest.skip("the one-node Slurm cluster of this test runs its daemons as root")
    d = tmp_path_factory.mktemp("slurm")
    for sub in ("munge/run", "state", "spool", "log"): (d / sub).mkdir(parents=True)
    os.chmod(d / "munge/run", 0o711)
    (d / "munge/munge.key").write_bytes(os.urandom(1024)); os.chmod(d / "munge/munge.key", 0o400)
    sock = d / "munge/run/munge.socket"
    subprocess.run([_find("munged"), "--force", f"--socket={sock}", f"--key-file={d / 'munge/munge.key'}", f"--log-file={d / 'log/munged.log'}",
                    f"--pid-file={d / 'munge/munged.pid'}", f"--seed-file={d / 'munge/munged.seed'}"], check=True)
    node = subprocess.run([_find("slurmd"), "-C"], capture_output=True, text=True, check=True).stdout.splitlines()[0]
    host = node.split()[0].split("=")[1]
    conf = d / "slurm.conf"
    conf.write_text("\n".join([
        "ClusterName=carebench", f"SlurmctldHost={host}(127.0.0.1)", "AuthType=auth/munge", f"AuthInfo=socket={sock}",
        "CredType=cred/munge", "SlurmUser=root", "SlurmdUser=root", f"SlurmctldPort={_free_port()}", f"SlurmdPort={_free_port()}",
        f"StateSaveLocation={d / 'state'}", f"SlurmdSpoolDir={d / 'spool'}", f"SlurmctldPidFile={d / 'slurmctld.pid'}",
        f"SlurmdPidFile={d / 'slurmd.pid'}", f"SlurmctldLogFile={d / 'log/slurmctld.log'}", f"SlurmdLogFile={d / 'log/slurmd.log'}",
        "ProctrackType=proctrack/linuxproc", "TaskPlugin=task/none", "ReturnToService=2", "SchedulerType=sched/builtin",
        "SelectType=select/cons_tres", "SelectTypeParameters=CR_Core_Memory", "SchedulerParameters=batch_sched_delay=0,sched_min_interval=0",
        "JobAcctGatherType=jobacct_gather/none", "AccountingStorageType=accounting_storage/none", "MpiDefault=none",
        f"{node} NodeAddr=127.0.0.1 State=UNKNOWN", f"PartitionName=debug Nodes={host} Default=YES MaxTime=INFINITE State=UP", ""]))
    env = {**os.environ, "SLURM_CONF": str(conf)}
    daemons = [subprocess.Popen([_find(x), "-D", "-f", str(conf)], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
               for x in ("slurmctld", "slurmd")]
    try:
        for _ in range(120):
            out = subprocess.run([_find("sinfo"), "-h", "-o", "%T"], env=env, capture_output=True, text=True).stdout
            if "idle" in out: break
            time.sleep(0.5)
        else: pytest.fail(f"the Slurm node did not come up: {(d / 'log/slurmctld.log').read_text()[-800:]}")
        yield env
    finally:
        for p in daemons: p.terminate()
        for p in daemons: p.wait(timeout=30)
        subprocess.run([_find("munged"), "--stop", f"--socket={sock}"], capture_output=True)


def test_run_with_the_slurm_executor_merges_every_job(cluster, tmp_path):
    "Each model's calls and representation-track run as Slurm jobs; the run merges them and analyses them (the report is the same as without Slurm)."
    cfg = yaml.safe_load((EXAMPLE / "config.yaml").read_text())
    cfg["dataset"].update(path=str(EXAMPLE / "dataset.xlsx"), snapshots=str(EXAMPLE / "snapshots.json"))
    cfg["reasoning"]["models"].append({"id": "second-mock", "backend": "dry_run", "alignment": 0.1})
    cfg["representation"].update(lambdas=[1.0, 100.0], ranks=[4], outer_folds=4)      # a lighter representation-track job
    cfg["executor"] = {"kind": "slurm", "slurm": {"timeout_min": 10, "cpus_per_task": 1, "mem_gb": 2}}
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(cfg))
    t = time.time()
    r = run_cli("run", tmp_path / "config.yaml", "--out", tmp_path / "run", "--cache", tmp_path / "cache.sqlite", "--quiet",
                "--no-report", env={**cluster, "CAREBENCH_EMBEDDINGS": str(tmp_path / "emb.sqlite")})
    assert r.returncode == 0, r.stderr[-2000:]
    manifest = json.loads((tmp_path / "run/run_manifest.json").read_text())
    assert manifest["executor"] == "slurm" and [c["model"] for c in manifest["calls"]] == ["dry_run_example", "second-mock"]
    assert len(list((tmp_path / "run/jobs/slurm").glob("*_result.pkl"))) == 3        # three real Slurm jobs: two models + the representation track
    assert manifest["status"] == "completed" and (tmp_path / "run/endpoints.json").is_file()
    print(f"slurm run took {time.time() - t:.1f} s")
