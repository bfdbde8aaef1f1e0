"""Shared fixtures: the oxsort CLI (the byte-for-byte oracle of the file functions)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def cli() -> str:
    """The oxsort binary: $OXSORT_CLI, or built here with cargo."""
    exe = os.environ.get("OXSORT_CLI")
    if exe:
        return exe
    subprocess.run(["cargo", "build", "--quiet", "--bin", "oxsort"], cwd=ROOT, check=True)
    return str(ROOT / "target" / "debug" / "oxsort")


def run_cli(cli: str, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    """Runs the CLI; returns the completed process (text output)."""
    return subprocess.run([cli, *args], capture_output=True, text=True, check=check)


def leftovers(d: Path) -> list[str]:
    """Every file under ``d``."""
    return sorted(str(p.relative_to(d)) for p in d.rglob("*"))
