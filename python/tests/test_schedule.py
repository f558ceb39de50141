"""solve → save → load → simulate, against the CLI's solve and simulate."""

import json

import pytest

import elk_opt
from conftest import cli

SMALL = dict(num_layers=1, ops="0..8")


def test_solve_row_equals_the_cli_json():
    s = elk_opt.solve("llama2-7b", method="elk-full", no_timings=True, **SMALL)
    out = cli("solve", "--model", "llama2-7b", "--num-layers", 1, "--ops", "0..8", "--method", "elk-full",
              "--json", "--no-timings")
    assert s.row == out["results"]


def test_round_trip_keeps_the_makespan(tmp_path):
    s = elk_opt.solve("llama2-7b", method="elk-full", **SMALL)
    sim = s.simulate()
    assert sim["valid"] and sim["violations"] == []
    assert sim["makespan_cycles"] == s.row["makespan_cycles"]
    s.save(tmp_path / "s.json", instance_path=tmp_path / "i.json")
    back = elk_opt.Schedule.load(tmp_path / "s.json", tmp_path / "i.json")
    assert back.method == "elk-full"
    assert back.simulate()["makespan_cycles"] == sim["makespan_cycles"]
    assert back.to_json() == (tmp_path / "s.json").read_text()
    # The CLI reads what Python wrote and finds the same makespan.
    out = cli("simulate", "--instance", tmp_path / "i.json", "--schedule", tmp_path / "s.json", "--json")
    assert out["results"]["valid"]
    assert out["results"]["makespan_cycles"] == sim["makespan_cycles"]
    for k in ["makespan_ms", "hbm_util_pct", "noc_util_pct", "tflops", "stages_bound", "stages"]:
        assert out["results"][k] == sim[k], k


def test_python_reads_what_the_cli_wrote(tmp_path):
    cli("solve", "--model", "llama2-7b", "--num-layers", 1, "--ops", "0..8", "--method", "static",
        "-o", tmp_path / "s.json", "--emit-instance", tmp_path / "i.json", "--json")
    s = elk_opt.Schedule.load(tmp_path / "s.json", tmp_path / "i.json")
    out = cli("simulate", "--instance", tmp_path / "i.json", "--schedule", tmp_path / "s.json", "--json")
    assert s.simulate()["makespan_cycles"] == out["results"]["makespan_cycles"]


def test_a_schedule_of_another_instance_is_refused(tmp_path):
    s = elk_opt.solve("llama2-7b", method="elk-full", **SMALL)
    s.save(tmp_path / "s.json")
    other = elk_opt.instance("llama2-7b", num_layers=1, ops="0..6")
    with pytest.raises(ValueError, match="schedule was built for instance"):
        elk_opt.Schedule.load(tmp_path / "s.json", other).simulate()


def test_detailed_replay_and_trace(tmp_path):
    s = elk_opt.solve("llama2-7b", method="elk-full", **SMALL)
    d = s.simulate_detailed()
    out_cli = None
    s.save(tmp_path / "s.json", instance_path=tmp_path / "i.json")
    out_cli = cli("simulate", "--instance", tmp_path / "i.json", "--schedule", tmp_path / "s.json",
                  "--detailed", "--json")
    assert d["makespan_cycles"] == out_cli["results"]["makespan_cycles"]
    s.trace(tmp_path / "t.json")
    trace = json.loads((tmp_path / "t.json").read_text())
    assert trace
