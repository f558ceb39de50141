"""The wheel of `make wheel`, as someone without Rust installs it: pip puts it (and pandas)
into a fresh virtualenv, and `compare` and `gap` run there with no cargo or rustc on PATH
and, where this runs as root, with libz3 and the Rust toolchain hidden from the process (a
private mount namespace binds /dev/null over every libz3 and an empty directory over
~/.cargo and ~/.rustup). Nothing is built here: the wheel is the one `make test` built."""

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from conftest import BIN, ROOT

# What runs in the fresh virtualenv: a real result of compare, and of gap, whose exact
# solve runs in a worker process (the interpreter itself, not the CLI).
SCRIPT = textwrap.dedent(
    """
    import json, elk_opt
    r = elk_opt.compare("llama2-7b", num_layers=1)
    g = elk_opt.gap("llama2-7b", num_layers=1, ops="0..6", time_limit=10)
    try:
        elk_opt.gap("llama2-7b", num_layers=1, ops="0..6", backend="smt")
        smt = "ran"
    except ValueError as e:
        smt = str(e)
    maps = open("/proc/self/maps").read()
    print(json.dumps({
        "file": elk_opt._native.__file__,
        "methods": list(r.df["method"]),
        "makespans_ms": list(r.df["makespan_ms"]),
        "exact": g.exact["status"],
        "reference": g.reference,
        "backends": elk_opt.backends(),
        "smt": smt,
        "z3_mapped": "libz3" in maps,
    }))
    """
)


def the_wheel():
    wheels = sorted((ROOT / "target" / "wheels").glob("elk_opt-*.whl"))
    if len(wheels) != 1:
        pytest.fail(f"expected one wheel in target/wheels, found {wheels}: run `make wheel`")
    return wheels[0]


def path_without_rust():
    """PATH less every directory that holds cargo or rustc."""
    dirs = os.environ.get("PATH", "").split(os.pathsep)
    keep = [d for d in dirs if not any((Path(d) / t).exists() for t in ("cargo", "rustc"))]
    return os.pathsep.join(keep)


def can_hide():
    """Whether a private mount namespace can be made (root, and unshare allowed)."""
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        return False
    return subprocess.run(["unshare", "-m", "true"], capture_output=True).returncode == 0


# Run as `sh -c HIDE sh PROGRAM ARGS...` inside `unshare -m`: libz3 becomes an empty file
# and the Rust toolchain's directories empty, for this process and its children only.
HIDE = """
for f in $(ldconfig -p | sed -n 's/.*libz3[^ ]* .*=> //p'); do mount --bind /dev/null "$f" || exit 90; done
for d in "$HOME/.cargo" "$HOME/.rustup" "$CARGO_HOME" "$RUSTUP_HOME"; do
  [ -n "$d" ] && [ -d "$d" ] && { mount -t tmpfs none "$d" || exit 91; }
done
exec "$@"
"""


def test_the_wheel_installs_and_runs_without_rust_or_libz3(tmp_path):
    wheel = the_wheel()
    assert "manylinux" in wheel.name, wheel.name
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    py = venv / "bin" / "python"
    env = dict(os.environ, PATH=path_without_rust(), XDG_CACHE_HOME=str(tmp_path / "cache"))
    for var in ("CARGO_HOME", "RUSTUP_HOME", "CARGO_TARGET_DIR", "PYTHONPATH", "VIRTUAL_ENV"):
        env.pop(var, None)
    # The wheel and its dependency pandas, as a user installs them (pandas from the index or
    # pip's cache).
    subprocess.run([str(py), "-m", "pip", "install", "-q", str(wheel)], check=True, env=env)

    hide = can_hide()
    prefix = ["unshare", "-m", "sh", "-c", HIDE, "sh"] if hide else []
    if hide:
        # The hiding works: the CLI, which links libz3, cannot start, and cargo is gone.
        cli = subprocess.run([*prefix, str(BIN), "--version"], capture_output=True, text=True)
        assert cli.returncode != 0 and "libz3" in cli.stderr, (cli.returncode, cli.stderr)
        cargo = subprocess.run([*prefix, "sh", "-c", "command -v cargo || ls ~/.cargo/bin"],
                               capture_output=True, text=True, env=env)
        assert cargo.stdout.strip() == "", cargo.stdout
    p = subprocess.run([*prefix, str(py), "-c", SCRIPT], capture_output=True, text=True,
                       env=env, cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout.strip().splitlines()[-1])

    # The extension is the installed wheel's, not the source tree's.
    assert Path(out["file"]).is_relative_to(venv), out["file"]
    assert not out["z3_mapped"]
    assert {"basic", "static", "elk-dyn", "elk-full", "ideal"} <= set(out["methods"])
    assert all(m > 0 for m in out["makespans_ms"]), out["makespans_ms"]
    # The exact solve ran in the worker and proved its optimum on 6 operators.
    assert (out["exact"], out["reference"]) == ("optimal", "optimum")
    assert out["backends"]["milp"] == {"solver": "HiGHS", "available": True, "missing": None}
    assert out["backends"]["smt"]["available"] is False
    assert out["smt"].startswith("--backend smt: not in this build"), out["smt"]
    assert out["backends"]["smt"]["missing"] in out["smt"]
