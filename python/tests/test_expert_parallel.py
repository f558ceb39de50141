"""`expert_parallel=True` in `compare()`, `gap()` and `solve()` is the CLI's
`--expert-parallel`: the union of the instances with and without parallel sets
(docs/core-groups.md, CG-5), the same results and config for the same inputs, each schedule
bound to the instance it is of."""

import pytest

import elk_opt
from conftest import cli

# One OPT-1.3B layer at batch 32 on ipu-mk2: weights dominate, and some methods are faster
# without sets, others with them, so both sides of the union show.
MK2 = dict(chip="ipu-mk2", batch=32, num_layers=1)
MK2_FLAGS = ["--model", "opt-1.3b", "--chip", "ipu-mk2", "--batch", 32, "--num-layers", 1, "--no-timings"]
# 16 operators of one Llama2-7B layer (its Q/K/V set among them): the MILP proves both
# instances' optima well within LIMIT s, so the exact parts do not depend on the machine.
LIMIT = 60
SMALL = dict(num_layers=1, ops="0..16")
SMALL_FLAGS = ["--model", "llama2-7b", "--num-layers", 1, "--ops", "0..16", "--no-timings"]


def test_compare_union_progress_is_one_run_over_both_instances():
    # The rows with parallel sets (elk-full-groups among them), then those without (one
    # fewer): k counts on across both, and the end comes once, at the last row's total.
    seen = []
    elk_opt.compare("opt-1.3b", expert_parallel=True, no_timings=True,
                    progress=lambda k, n, name: seen.append((k, n, name)), **MK2)
    assert [k for k, _, _ in seen] == list(range(1, len(seen) + 1))
    *steps, end = seen
    assert end == (len(steps) + 1, len(steps), "")
    assert all(k <= n for k, n, _ in steps)
    sides = [name.split(": ", 1)[0] for _, _, name in steps]
    with_sets = sides.count("with parallel sets")
    assert sides == ["with parallel sets"] * with_sets + ["without parallel sets"] * (len(steps) - with_sets)
    names = [name.split(": ", 1)[1] for _, _, name in steps]
    assert "elk-full-groups" in names[:with_sets] and "elk-full-groups" not in names[with_sets:]


def test_compare_union_equals_the_cli_json():
    r = elk_opt.compare("opt-1.3b", expert_parallel=True, no_timings=True, **MK2)
    out = cli("compare", *MK2_FLAGS, "--expert-parallel", "--json")
    assert r.to_dict() == out["results"]
    assert r.config == out["config"]
    marks = {m["method"]: m["parallel_sets"] for m in r.methods if m["makespan_ms"] is not None}
    assert True in marks.values() and False in marks.values(), marks
    # Never slower than either instance alone.
    plain = elk_opt.compare("opt-1.3b", no_timings=True, **MK2)
    alone = elk_opt.instance("opt-1.3b", expert_parallel=True, **MK2).compare(no_timings=True)
    for row in r.methods:
        for other in (plain, alone):
            # Elk-Full searching the sets' group sizes is Elk-Full without sets (no row there).
            name = "elk-full" if (row["method"], other) == ("elk-full-groups", plain) else row["method"]
            t = other.row(name)["makespan_ms"]
            if t is not None:
                assert row["makespan_ms"] <= t, row["method"]
    assert r.bound_ms <= min(plain.bound_ms, alone.bound_ms)


def test_gap_union_equals_the_cli_json_and_its_schedule_is_of_its_instance(tmp_path):
    r = elk_opt.gap("llama2-7b", expert_parallel=True, time_limit=LIMIT, no_timings=True, **SMALL)
    sched, emitted = tmp_path / "s.json", tmp_path / "i.json"
    out = cli(
        "gap", *SMALL_FLAGS, "--expert-parallel", "--time-limit", LIMIT, "-o", sched,
        "--emit-instance", emitted, "--json",
    )
    assert r.to_dict() == out["results"]
    # The CLI's config names the schedule file written (-o), which gap() does not write.
    assert dict(r.config, output=str(sched)) == out["config"]
    assert r.config["time_limit_total_s"] == 2 * LIMIT
    union = r.to_dict()["union"]
    assert r.bound_ms == pytest.approx(r.instance._native.ms(union["lower_bound_cycles"]))
    # The schedule is bound to the instance it is of: the one the CLI emits.
    assert r.schedule is not None
    assert r.schedule.instance.name == r.to_dict()["exact"]["instance"]
    assert ("expert-parallel" in r.schedule.instance.name) == union["parallel_sets"]
    assert r.schedule.simulate()["valid"]
    assert r.schedule.to_json() == sched.read_text()
    assert r.schedule.instance._native.to_json() == emitted.read_text()


def test_solve_union_equals_the_cli_json(tmp_path):
    s = elk_opt.solve("opt-1.3b", method="elk-full+retime", expert_parallel=True, no_timings=True, **MK2)
    out = cli("solve", *MK2_FLAGS, "--method", "elk-full+retime", "--expert-parallel", "--json")
    assert s.row == out["results"]
    # Without sets it is faster here: the schedule is of that instance.
    assert s.row["parallel_sets"] is False
    assert "expert-parallel" not in s.instance.name
    assert s.simulate()["makespan_cycles"] == pytest.approx(s.row["makespan_cycles"], rel=1e-9)
    e = elk_opt.solve("llama2-7b", exact=True, expert_parallel=True, time_limit=LIMIT, no_timings=True, **SMALL)
    out = cli("solve", "--exact", *SMALL_FLAGS, "--expert-parallel", "--time-limit", LIMIT, "--json")
    assert e.row == out["results"]
    assert e.config == out["config"]
    assert e.row["union"]["lower_bound_cycles"] <= e.row["makespan_cycles"] <= e.row["union"]["other"]["makespan_cycles"]
    assert e.simulate()["valid"]


def test_routing_with_the_flag_runs_the_policies_both_ways_as_the_cli_does():
    r = elk_opt.compare(
        "mixtral-8x7b", routing="uniform", steps=2, num_layers=1, expert_parallel=True, no_timings=True
    )
    out = cli(
        "compare", "--model", "mixtral-8x7b", "--num-layers", 1, "--routing", "uniform", "--steps", 2,
        "--expert-parallel", "--no-timings", "--json",
    )
    assert r.moe == out["results"]["moe"]
    with_sets = r.moe["expert_parallel"]
    assert [p["policy"] for p in with_sets["summary"]] == [p["policy"] for p in r.moe["summary"]]
