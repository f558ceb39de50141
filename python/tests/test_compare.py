"""`elk_opt.compare()` is `elk-opt compare --json`: the same results for the same inputs."""

import pandas as pd
import pytest

import elk_opt
from conftest import cli

SMALL = dict(num_layers=1, ops="0..8")


def test_compare_results_equal_the_cli_json():
    r = elk_opt.compare("llama2-7b", no_timings=True, **SMALL)
    out = cli("compare", "--model", "llama2-7b", "--num-layers", 1, "--ops", "0..8", "--json", "--no-timings")
    assert r.to_dict() == out["results"]
    assert r.config == out["config"]


def test_compare_on_another_chip_and_bandwidth_equals_the_cli_json():
    r = elk_opt.compare("bert-base", elk_opt.Chip("ipu-mk2", hbm_tbps=8), batch=8, kv=512, num_layers=1, no_timings=True)
    out = cli(
        "compare", "--model", "bert-base", "--chip", "ipu-mk2", "--hbm-tbps", 8, "--batch", 8, "--kv", 512,
        "--num-layers", 1, "--json", "--no-timings",
    )
    assert r.to_dict() == out["results"]
    assert r.to_dict()["chip"] == "ipu-mk2 @ 8 TB/s HBM"


def test_the_dataframe_has_the_json_keys_as_columns():
    r = elk_opt.compare("llama2-7b", no_timings=True, **SMALL)
    df = r.df
    assert isinstance(df, pd.DataFrame)
    for col in ["instance", "chip", "hbm_tbps", "bound_ms", "method", "makespan_ms", "makespan_cycles",
                "gap_le_pct", "speedup_vs_basic_x", "ideal_pct", "hbm_util_pct", "noc_util_pct", "tflops"]:
        assert col in df.columns, col
    assert list(df["method"]) == [m["method"] for m in r.to_dict()["methods"]]
    basic = df.set_index("method").loc["basic"]
    assert basic["speedup_vs_basic_x"] == 1.0
    assert pd.isna(df.set_index("method").loc["ideal", "gap_le_pct"])


def test_compare_is_deterministic():
    a = elk_opt.compare("llama2-7b", no_timings=True, **SMALL).to_dict()
    b = elk_opt.compare("llama2-7b", no_timings=True, **SMALL).to_dict()
    assert a == b


def test_a_four_point_hbm_loop():
    frames = []
    for tbps in [4, 8, 12, 16]:
        r = elk_opt.compare("llama2-7b", hbm_tbps=tbps, no_timings=True, **SMALL)
        frames.append(r.df)
    df = pd.concat(frames, ignore_index=True)
    assert sorted(df["hbm_tbps"].unique()) == [4.0, 8.0, 12.0, 16.0]
    full = df[df["method"] == "elk-full"].set_index("hbm_tbps")["makespan_ms"]
    # More HBM bandwidth never makes the loads slower.
    assert full.is_monotonic_decreasing
    assert full.loc[4.0] > full.loc[16.0]


def test_progress_callback_sees_every_method():
    seen = []
    elk_opt.compare("llama2-7b", no_timings=True, progress=lambda k, n, name: seen.append((k, n, name)), **SMALL)
    n = seen[0][1]
    assert [k for k, _, _ in seen] == list(range(1, n + 2))
    assert seen[0][2] == "basic" and seen[-1][2] == ""


def test_progress_true_without_tqdm_still_runs():
    r = elk_opt.compare("llama2-7b", no_timings=True, progress=True, **SMALL)
    assert r.row("elk-full")["makespan_ms"] > 0


def test_models_and_chips_equal_the_cli_lists():
    models = elk_opt.models()
    cli_models = cli("models", "list", "--json")["results"]
    assert list(models["name"]) == [m["name"] for m in cli_models]
    assert list(models["total_params"]) == [m["total_params"] for m in cli_models]
    chips = elk_opt.chips()
    cli_chips = cli("chips", "list", "--json")["results"]
    assert list(chips["name"]) == [c["name"] for c in cli_chips]
    assert list(chips["hbm.bandwidth_bytes_per_s"]) == [c["hbm"]["bandwidth_bytes_per_s"] for c in cli_chips]
    assert elk_opt.Chip("ipu-pod4").spec == cli("chips", "show", "ipu-pod4", "--json")["results"]


def test_the_gil_is_released_while_methods_run():
    # With the GIL held for the whole compare the loop below could not run until it ends.
    import threading

    inst = elk_opt.instance("llama2-7b", num_layers=2)
    done = []
    t = threading.Thread(target=lambda: done.append(inst.compare()))
    t.start()
    spins = 0
    while t.is_alive():
        spins += 1
    t.join()
    assert done and spins > 1000
