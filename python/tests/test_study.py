"""`elk_opt.study()` is `elk-opt study NAME -o DIR`: the same files, the same finding."""

import json

import pytest

import elk_opt
from conftest import cli, cli_error


def test_study_ideal_writes_the_cli_files(tmp_path):
    # `ideal`, the cheapest study (about 10 s on 2 cores).
    r = elk_opt.study("ideal", tmp_path / "py")
    out = cli("study", "ideal", "-o", tmp_path / "cli", "--json")
    assert r.files == out["results"]["files"]
    assert r.summary["output"] == str(tmp_path / "py")
    with open(tmp_path / "cli" / "finding.json", encoding="utf-8") as f:
        assert r.finding == json.load(f)
    assert set(r.finding) >= {"question", "finding", "number"}
    assert list(r.df.columns[:2]) == ["study", "question"]
    # Every file but the README's header (command line, date) is byte-identical.
    for name in r.files:
        py = (tmp_path / "py" / name).read_bytes()
        cl = (tmp_path / "cli" / name).read_bytes()
        if name == "README.md":
            py, cl = py.split(b"\n", 6)[-1], cl.split(b"\n", 6)[-1]
        assert py == cl, name
    assert r.readme.startswith("# ")


def test_unknown_study_is_a_value_error_with_the_cli_message(tmp_path):
    message, code = cli_error("study", "no-such-study", "-o", tmp_path / "x")
    assert code == 2
    with pytest.raises(ValueError) as e:
        elk_opt.study("no-such-study", tmp_path / "x")
    assert str(e.value) == message
    assert "ideal" in message and "order-pruning" in message
    assert not (tmp_path / "x").exists()
