"""`elk_opt.moe()` is `elk-opt moe --json`."""

import pytest

import elk_opt
from conftest import cli, cli_error


def test_moe_results_equal_the_cli_json():
    r = elk_opt.moe("olmoe-1b-7b", steps=3, num_layers=2, routing="zipf:1.2")
    out = cli("moe", "--model", "olmoe-1b-7b", "--steps", 3, "--num-layers", 2, "--routing", "zipf:1.2", "--json")
    assert r.to_dict() == out["results"]
    assert r.config == out["config"]
    assert list(r.df["policy"]) == ["load-all", "on-demand", "predicted-8", "oracle"]
    assert len(r.steps_df) == 3 * 4


def test_a_dense_model_is_refused_with_the_cli_message():
    message, code = cli_error("moe", "--model", "llama2-7b", "--steps", 3)
    assert code == 2
    with pytest.raises(ValueError) as e:
        elk_opt.moe("llama2-7b", steps=3)
    assert str(e.value) == message


def test_moe_with_expert_parallel_equals_the_cli_json_and_reports_both():
    r = elk_opt.moe("olmoe-1b-7b", steps=2, num_layers=2, expert_parallel=True)
    out = cli("moe", "--model", "olmoe-1b-7b", "--steps", 2, "--num-layers", 2, "--expert-parallel", "--json")
    assert r.to_dict() == out["results"]
    assert r.config == out["config"] and r.config["expert_parallel"] is True
    with_sets = r.to_dict()["expert_parallel"]
    assert [p["policy"] for p in with_sets["summary"]] == list(r.df["policy"])


def test_resident_policies_equal_the_cli_json_and_have_their_own_frame():
    policies = "on-demand,resident-8,resident-auto"
    r = elk_opt.moe("olmoe-1b-7b", steps=2, num_layers=2, batch=4, policies=policies.split(","))
    out = cli("moe", "--model", "olmoe-1b-7b", "--steps", 2, "--num-layers", 2, "--batch", 4,
              "--policies", policies, "--json")
    assert r.to_dict() == out["results"]
    df = r.resident_df
    assert list(df["policy"]) == ["resident-8", "resident-auto"]
    assert list(df["experts"])[0] == 8
    assert df["chosen_mean_ms"].notna().tolist() == [False, True]
    assert elk_opt.moe("olmoe-1b-7b", steps=1, num_layers=1).resident_df.empty


def test_moe_bound_stage_equals_the_cli_json_and_a_bad_bound_names_the_choices():
    r = elk_opt.moe("olmoe-1b-7b", steps=2, num_layers=2, routing="zipf:1.2", bound="stage")
    out = cli("moe", "--model", "olmoe-1b-7b", "--steps", 2, "--num-layers", 2, "--routing", "zipf:1.2",
              "--bound", "stage", "--json")
    assert r.to_dict() == out["results"]
    assert r.config == out["config"] and r.config["bound"] == "stage"
    assert {s["bound_source"] for s in r.to_dict()["steps"]} == {"stage relaxation"}
    assert elk_opt.moe("olmoe-1b-7b", steps=1, num_layers=1).config["bound"] == "roofline"
    with pytest.raises(ValueError) as e:
        elk_opt.moe("olmoe-1b-7b", steps=1, num_layers=1, bound="lp")
    assert "one of roofline, stage, segment" in str(e.value)
