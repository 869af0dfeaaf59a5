"""Shared helpers for the tests that cannot live in a notebook (CLI subprocesses, packaging, templates)."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "data" / "example"


def run_cli(*args, env=None, cwd=None):
    """Run the installed `carebench` console script as a user would; return the CompletedProcess."""
    exe = Path(sys.executable).with_name("carebench")
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "carebench.cli"]
    return subprocess.run(cmd + [str(a) for a in args], capture_output=True, text=True,
                          env={**os.environ, **(env or {})}, cwd=cwd or ROOT, timeout=300)


@pytest.fixture(scope="session")
def root():
    return ROOT
