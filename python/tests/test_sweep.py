"""`elk_opt.sweep()` is `elk-opt sweep GRID -o FILE`: the same lines, resumable."""

import pytest

import elk_opt
from conftest import cli, cli_error

GRID = """figure = "vs-hbm"
models = ["llama2-7b"]
batches = [32]
kvs = [2048]
hbm_tbps = [4.0, 8.0, 12.0, 16.0]
"""


def test_a_four_cell_sweep_writes_the_cli_lines(tmp_path):
    grid = tmp_path / "g4.toml"
    grid.write_text(GRID)
    r = elk_opt.sweep(str(grid), tmp_path / "py.jsonl")
    out = cli("sweep", grid, "-o", tmp_path / "cli.jsonl", "--json")
    assert (tmp_path / "py.jsonl").read_text() == (tmp_path / "cli.jsonl").read_text()
    assert out["results"]["report"] is None
    assert r.summary == dict(out["results"], output=str(tmp_path / "py.jsonl"))
    df = r.df
    assert sorted(df["hbm_tbps"].unique()) == [4.0, 8.0, 12.0, 16.0]
    assert len(df) == 4 * df["method"].nunique()
    # Resumed: nothing runs again.
    again = elk_opt.sweep(GRID, tmp_path / "py.jsonl")
    assert again.summary["skipped_cells"] == 4 and again.summary["ran_cells"] == 0
    assert again.cells == r.cells


def test_an_unknown_grid_is_a_value_error_with_the_cli_message(tmp_path):
    message, code = cli_error("sweep", "no-such-grid", "-o", tmp_path / "x.jsonl")
    assert code == 2
    with pytest.raises(ValueError) as e:
        elk_opt.sweep("no-such-grid", tmp_path / "x.jsonl")
    assert str(e.value) == message
