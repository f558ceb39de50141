"""Shared by the pytest suite: the built CLI to check against, and one plan cache per run
under target/ for both the Python calls and the CLI (as the CLI suite shares one)."""

import json
import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# The repository's test fixtures: the reference artifact's graphs and runs (its README.md).
FIXTURES = ROOT / "tests" / "fixtures"
os.environ.setdefault("XDG_CACHE_HOME", str(ROOT / "target" / "tmp" / "py-plan-cache"))

BIN = Path(os.environ.get("ELK_OPT_BIN", ROOT / "target" / "release" / "elk-opt"))


def unique_keys(pairs):
    """A JSON object's pairs as a dict, failing on a key given twice (which parsers would
    silently resolve to the last value)."""
    keys = [k for k, _ in pairs]
    duplicated = sorted({k for k in keys if keys.count(k) > 1})
    assert not duplicated, f"the CLI's JSON repeats the key(s) {duplicated}"
    return dict(pairs)


def cli(*args, ok=True):
    """Runs the built elk-opt with `args`: its parsed `--json` (ok) or the completed process."""
    if not BIN.exists():
        pytest.fail(f"{BIN} not built: run `make python` (it builds the CLI as well)")
    p = subprocess.run([str(BIN), *map(str, args)], capture_output=True, text=True, check=False)
    if not ok:
        return p
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout, object_pairs_hook=unique_keys)


def cli_error(*args):
    """The CLI's one-line error message (without `error: `) and its exit code."""
    p = cli(*args, ok=False)
    assert p.returncode != 0
    line = p.stderr.strip().splitlines()[-1]
    assert line.startswith("error: "), p.stderr
    return line[len("error: "):], p.returncode
