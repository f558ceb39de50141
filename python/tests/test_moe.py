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
