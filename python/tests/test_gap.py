"""`elk_opt.gap()` is `elk-opt gap --json`, `solve(exact=True)` is `elk-opt solve --exact
--json`, `compare(bound=..., layer_exact=...)` is `compare --bound --layer-exact`: the same
results for the same inputs. The instances are small enough for HiGHS to prove the optimum
well within the limit, so the results do not depend on the machine's speed."""

import pandas as pd
import pytest

import elk_opt
from conftest import cli, cli_error

# 16 operators of one Llama2-7B layer: the MILP proves the optimum in about a second. The
# limits are generous (LIMIT s) so that a loaded machine never races them: a proven solve
# returns at once, and a test that waits the whole limit has found a regression.
LIMIT = 60
SMALL = dict(num_layers=1, ops="0..16")
SMALL_FLAGS = ["--model", "llama2-7b", "--num-layers", 1, "--ops", "0..16", "--no-timings"]


def test_gap_results_and_config_equal_the_cli_json():
    r = elk_opt.gap("llama2-7b", time_limit=LIMIT, no_timings=True, **SMALL)
    out = cli("gap", *SMALL_FLAGS, "--time-limit", LIMIT, "--json")
    assert r.to_dict() == out["results"]
    assert r.config == out["config"]
    # The exact part proved the optimum: the gaps are exact, the MILP's row is last.
    assert r.reference == "optimum"
    assert r.df["method"].iloc[-1] == "exact-milp"


def test_gap_dataframe_rows_and_units():
    r = elk_opt.gap("llama2-7b", time_limit=LIMIT, no_timings=True, **SMALL)
    df = r.df
    assert isinstance(df, pd.DataFrame)
    rows = r.to_dict()["rows"]
    assert list(df["method"]) == [row["method"] for row in rows]
    for col in ["instance", "reference", "reference_ms", "bound_source", "bound_ms", "method",
                "makespan_cycles", "makespan_ms", "gap_pct", "reference_is_optimum", "compile_s", "status"]:
        assert col in df.columns, col
    best = df.set_index("method").loc["exact-milp"]
    assert best["gap_pct"] == 0.0 and best["makespan_ms"] == pytest.approx(r.reference_ms)
    # Every heuristic is at least as slow as the proven optimum.
    assert (df["gap_pct"] >= 0).all()
    assert r.bound_ms <= r.reference_ms


def test_gap_of_a_saved_instance_equals_the_cli_json(tmp_path):
    inst = elk_opt.instance("llama2-7b", **SMALL)
    inst.save(tmp_path / "i.json")
    r = elk_opt.gap(elk_opt.Instance.load(tmp_path / "i.json"), time_limit=LIMIT, no_timings=True)
    out = cli("gap", "--instance", tmp_path / "i.json", "--time-limit", LIMIT, "--no-timings", "--json")
    assert r.to_dict() == out["results"]


def test_gap_progress_sees_the_heuristics_then_the_exact_solve():
    seen = []
    elk_opt.gap("llama2-7b", time_limit=LIMIT, no_timings=True, progress=lambda *a: seen.append(a), **SMALL)
    n = seen[0][1]
    assert seen[0] == (1, n, "basic")
    assert [k for k, _, _ in seen if k < n] == list(range(1, n))
    assert any(name.startswith(f"exact milp (limit {LIMIT}") for k, _, name in seen if k == n)
    assert seen[-1] == (n + 1, n, "")


def test_gap_is_deterministic():
    a = elk_opt.gap("llama2-7b", time_limit=LIMIT, no_timings=True, **SMALL).to_json()
    b = elk_opt.gap("llama2-7b", time_limit=LIMIT, no_timings=True, **SMALL).to_json()
    assert a == b


def test_solve_exact_row_equals_the_cli_json(tmp_path):
    s = elk_opt.solve("llama2-7b", exact=True, time_limit=LIMIT, no_timings=True, **SMALL)
    out = cli("solve", "--exact", *SMALL_FLAGS, "--time-limit", LIMIT, "--json",
              "-o", tmp_path / "s.json", "--emit-instance", tmp_path / "i.json")
    assert s.row == out["results"]
    config = dict(out["config"])
    assert config.pop("output") == str(tmp_path / "s.json")
    assert s.config == config
    assert s.row["status"] == "optimal"
    # The schedule is the exact one: the simulator gives the optimum, as the CLI's file does.
    assert s.makespan_cycles == s.row["makespan_cycles"]
    cli_schedule = elk_opt.Schedule.load(tmp_path / "s.json", tmp_path / "i.json")
    assert cli_schedule.makespan_cycles == s.makespan_cycles


SMT = elk_opt.backends()["smt"]


@pytest.mark.skipif(not SMT["available"], reason="this build has no z3 (the wheel's)")
def test_solve_exact_with_smt_equals_the_cli_json():
    s = elk_opt.solve("llama2-7b", exact=True, backend="smt", time_limit=LIMIT, no_timings=True,
                      num_layers=1, ops="0..6")
    out = cli("solve", "--exact", "--backend", "smt", "--model", "llama2-7b", "--num-layers", 1,
              "--ops", "0..6", "--time-limit", LIMIT, "--no-timings", "--json")
    assert s.row == out["results"]
    assert s.row["backend"] == "smt"


@pytest.mark.skipif(SMT["available"], reason="this build has z3")
def test_a_build_without_z3_refuses_smt_saying_why():
    # The wheel leaves z3 out: smt is refused before anything runs, with backends()'s reason;
    # milp is there. The CLI still has both.
    assert elk_opt.backends()["milp"]["available"]
    assert SMT["missing"].startswith("not in this build")
    for run in (lambda: elk_opt.gap("llama2-7b", backend="smt", **SMALL),
                lambda: elk_opt.solve("llama2-7b", exact=True, backend="smt", **SMALL)):
        with pytest.raises(ValueError) as e:
            run()
        assert str(e.value) == f"--backend smt: {SMT['missing']}"
    assert cli("solve", "--exact", "--backend", "smt", "--model", "llama2-7b", "--num-layers", 1,
               "--ops", "0..2", "--time-limit", LIMIT, "--json")["results"]["backend"] == "smt"


def test_exact_flag_errors_are_value_errors_with_the_cli_message():
    message, code = cli_error("gap", "--model", "llama2-7b", "--num-layers", 1, "--time-limit", 0)
    assert code == 2
    with pytest.raises(ValueError) as e:
        elk_opt.gap("llama2-7b", num_layers=1, time_limit=0)
    assert str(e.value) == message
    with pytest.raises(ValueError) as e:
        elk_opt.solve("llama2-7b", num_layers=1, exact=True, time_limit=-1)
    assert "--time-limit -1: must be a positive number of seconds" == str(e.value)
    with pytest.raises(ValueError, match="backend 'gurobi': one of milp, smt"):
        elk_opt.gap("llama2-7b", num_layers=1, backend="gurobi")
    with pytest.raises(ValueError, match="only with exact=True"):
        elk_opt.solve("llama2-7b", num_layers=1, time_limit=5)


def test_compare_bound_segment_equals_the_cli_json():
    # Two layers: the segment relaxation applies (one distinct layer, a boundary price).
    r = elk_opt.compare("llama2-7b", num_layers=2, bound="segment", no_timings=True)
    out = cli("compare", "--model", "llama2-7b", "--num-layers", 2, "--bound", "segment",
              "--json", "--no-timings")
    assert r.to_dict() == out["results"]
    assert r.config == out["config"]
    assert r.to_dict()["bound_source"] == "segment relaxation"
    assert r.bound_ms > r.to_dict()["roofline_bound_ms"]


def test_compare_layer_exact_equals_the_cli_json():
    # BERT-base's layer 0 at batch 8 is proven optimal in about a second on an idle machine;
    # a 5 s limit raced a fresh-clone CI run on a loaded one (the CLI's side stopped first).
    r = elk_opt.compare("bert-base", batch=8, kv=512, num_layers=1, layer_exact=LIMIT,
                        no_timings=True)
    out = cli("compare", "--model", "bert-base", "--batch", 8, "--kv", 512, "--num-layers", 1,
              "--layer-exact", LIMIT, "--json", "--no-timings")
    assert r.to_dict() == out["results"]
    assert r.config == out["config"]
    assert r.layer["gap"]["reference"] == "optimum"
    assert list(r.layer_df["method"])[-1] == r.layer["gap"]["rows"][-1]["method"]


def test_compare_layer_work_limit_equals_the_cli_json():
    r = elk_opt.compare("bert-base", batch=8, kv=512, num_layers=1, layer_exact=LIMIT, work_limit=50,
                        no_timings=True)
    out = cli("compare", "--model", "bert-base", "--batch", 8, "--kv", 512, "--num-layers", 1,
              "--layer-exact", LIMIT, "--work-limit", 50, "--json", "--no-timings")
    assert r.to_dict() == out["results"]
    assert r.config == out["config"] and r.config["work_limit"] == 50
    assert r.layer["gap"]["exact"]["work_limit"] == 50
    with pytest.raises(ValueError, match="work-limit"):
        elk_opt.compare("bert-base", num_layers=1, work_limit=5)


def test_layer_exact_needs_the_model_graph(tmp_path):
    inst = elk_opt.instance("llama2-7b", num_layers=1, ops="0..8")
    with pytest.raises(ValueError, match="--layer-exact cuts a layer from the model's graph"):
        inst.compare(layer_exact=1)
    with pytest.raises(ValueError, match="bound 'lp': one of roofline, stage, segment"):
        inst.compare(bound="lp")


def test_compare_routing_equals_the_cli_json():
    r = elk_opt.compare("olmoe-1b-7b", num_layers=1, routing="zipf:1.2", steps=3, no_timings=True)
    out = cli("compare", "--model", "olmoe-1b-7b", "--num-layers", 1, "--routing", "zipf:1.2", "--steps", 3,
              "--json", "--no-timings")
    assert r.to_dict() == out["results"]
    assert r.config == out["config"]
    # One key each: the rows under "steps", the count under "sampled_steps".
    # One key each (conftest's `cli` fails on a repeated key, as this section once had).
    assert len(r.moe["steps"]) == 3 and r.moe["sampled_steps"] == 3
    assert r.moe["routing"] == "zipf:1.2" and r.moe["experts"] > 0


def test_compare_routing_refuses_what_the_cli_refuses():
    message, code = cli_error("compare", "--model", "olmoe-1b-7b", "--num-layers", 1, "--ops", "0..4",
                              "--routing", "uniform")
    assert code == 2
    with pytest.raises(ValueError) as e:
        elk_opt.compare("olmoe-1b-7b", num_layers=1, ops="0..4", routing="uniform")
    assert str(e.value) == message
    inst = elk_opt.instance("olmoe-1b-7b", num_layers=1, ops="0..4")
    with pytest.raises(ValueError, match="not with --instance, --import or --onnx"):
        elk_opt.compare(inst, routing="uniform")


def test_gap_schedule_is_the_last_row_and_what_gap_o_writes(tmp_path):
    r = elk_opt.gap("llama2-7b", time_limit=LIMIT, no_timings=True, **SMALL)
    last = r.to_dict()["rows"][-1]
    assert r.schedule is not None and r.schedule.row == last
    assert r.schedule.makespan_cycles == pytest.approx(last["makespan_cycles"], rel=1e-9)
    cli("gap", *SMALL_FLAGS, "--time-limit", LIMIT, "-o", tmp_path / "s.json", "--json")
    assert r.schedule.to_json() == (tmp_path / "s.json").read_text()


def test_a_work_limit_cuts_the_search_as_the_cli_does():
    # 24 operators of a Llama2-13B layer in free order without a warm start or the LP
    # relaxation (whose options, queued, prove it at once): the MILP needs far more than 10
    # branch-and-bound nodes, so `work_limit=10` stops it, at the same place as
    # `gap --work-limit 10` (tests/cli/work_limit.rs uses the same instance).
    build = dict(num_layers=1, ops="0..24", load_order="free")
    r = elk_opt.gap("llama2-13b", warm_start=False, lp_bound=False, work_limit=10, time_limit=300,
                    no_timings=True, **build)
    out = cli("gap", "--model", "llama2-13b", "--num-layers", 1, "--ops", "0..24", "--load-order", "free",
              "--no-warm-start", "--no-lp-bound", "--work-limit", 10, "--time-limit", 300, "--no-timings",
              "--json")
    assert r.to_dict() == out["results"]
    assert r.config == out["config"]
    exact = r.to_dict()["exact"]
    assert exact["stop"] == "work_limit" and exact["work_used"] == 10, exact
    with pytest.raises(ValueError, match="work-limit"):
        elk_opt.gap("llama2-7b", work_limit=0, **SMALL)
