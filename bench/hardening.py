"""Benchmark of the hardening against hostile servers and inputs (issue 26). Not a test: it prints figures.

1. Calls against hostile loopback servers (tests/hostile_requests.py), one call each through the openai backend: an endless
   chunked body (`max_answer_bytes` 1 MiB), a body that drips a byte every 0.5 s and headers that drip (`timeout_s` 3): the
   wall time of each call against its deadline, and the peak memory of this process.
2. A dead loopback endpoint (`carebench run` with `max_retries: 5, timeout_s: 60`): seconds from start to the error.
3. `redact_text` on adversarial texts of 16 KB, 64 KB and 1 MB (it must stay linear).
4. A canary token without a known prefix echoed by the server (error bodies and answers): files of the run folders and
   caches that hold it.

    python bench/hardening.py
"""
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

import hostile_requests as H                                           # noqa: E402
from carebench.core.config import parse_section, redact_text           # noqa: E402
from carebench.core.vocab import SHARES                                 # noqa: E402
from carebench.models.backends import BackendContext, Request, make_backend   # noqa: E402
from carebench.models.prompts import build_prompt                       # noqa: E402
from carebench.models.backends import ModelConfig
from carebench.tracks.reasoning.settings import ReasoningConfig      # noqa: E402
import carebench.models.openai_backend                                  # noqa: E402,F401


def one_call(kind: str, **opts) -> tuple:
    port = H.serve()
    b = make_backend(parse_section(ModelConfig, {"id": "m", "backend": "openai", "base_url": f"http://127.0.0.1:{port}/{kind}/v1",
                                                 "max_retries": 0, **opts}, key="m"), ReasoningConfig(), BackendContext(SHARES))
    t0 = time.monotonic()
    (r,) = b.generate([Request("k", build_prompt("Insomnia", None, SHARES), {})], "json")
    return time.monotonic() - t0, r.error


def cli(*args, env=None) -> tuple:
    t0 = time.monotonic()
    r = subprocess.run([sys.executable, "-m", "carebench.cli", *map(str, args)], capture_output=True, text=True, cwd=ROOT,
                       env={**os.environ, **(env or {})})
    return time.monotonic() - t0, r


def main():
    print("1. one call against a hostile server")
    for kind, opts in (("endless", {"max_answer_bytes": 1 << 20}), ("drip", {"timeout_s": 3}), ("slow_headers", {"timeout_s": 3})):
        took, err = one_call(kind, **opts)
        print(f"   {kind:<13} {took:6.2f} s (deadline {opts.get('timeout_s', 60)} s)  {err}")
    print(f"   peak memory of this process: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")

    tmp = Path(tempfile.mkdtemp(prefix="cb-hardening-"))
    dead = H.dead_port()
    took, r = cli("run", H.model_cfg(tmp / "cfg", f"http://127.0.0.1:{dead}/v1", max_retries=5, timeout_s=60), "--out", tmp / "dead_run",
                  "--cache", tmp / "dead.sqlite", "-q")
    print(f"2. dead endpoint: exit {r.returncode} after {took:.2f} s: {r.stderr.strip()}")

    print("3. redact_text (seconds)")
    for n in (16_000, 64_000, 1_000_000):
        row = []
        for text in ("a" * n, "a-" * (n // 2), "sk-" * (n // 3), "&" + "key" * (n // 3), "x://" * (n // 4)):
            t0 = time.perf_counter(); redact_text(text); row.append(time.perf_counter() - t0)
        print(f"   {n:>9,} characters: " + "  ".join(f"{s:.4f}" for s in row))

    for kind in ("echo_error", "echo_5xx", "echo_answer"):
        cli("run", H.model_cfg(tmp / "cfg", f"http://127.0.0.1:{H.serve()}/{kind}/v1", api_key_env="CB_CANARY_TOKEN"), "--no-validity",
            "--out", tmp / f"{kind}_run", "--cache", tmp / f"{kind}.sqlite", "-q", env={"CB_CANARY_TOKEN": H.CANARY})
    found = [f for f in tmp.rglob("*") if f.is_file() and H.CANARY.encode() in f.read_bytes()]
    print(f"4. canary echoed by 3 servers: {len(found)} file(s) hold it among {sum(1 for f in tmp.rglob('*') if f.is_file())}")


if __name__ == "__main__":
    main()
