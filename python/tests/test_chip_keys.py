"""`Chip(name, **keys)` sets any key of a chip TOML file, as the file would: the same chip
and the same results as the CLI given that file with those lines changed, and a bad key or
value refused in one line naming it (elk_model's ChipSpec::with_keys, not a Python copy)."""

import re

import pytest

import elk_opt
from conftest import cli

SHAPE = dict(num_layers=1, no_timings=True)
SHAPE_FLAGS = ["--model", "llama2-7b", "--num-layers", 1, "--no-timings", "--json"]


def chip_file(tmp_path, name, **lines):
    """`chips show NAME` (its TOML) with the lines `key = value` replaced."""
    text = cli("chips", "show", name, ok=False).stdout
    for key, value in lines.items():
        text, n = re.subn(rf"(?m)^{key} = .*$", f"{key} = {value}", text)
        assert n == 1, key
    path = tmp_path / f"{name}-edited.toml"
    path.write_text(text)
    return path


def makespans(rows):
    return {r["method"]: r["makespan_cycles"] for r in rows}


def test_half_the_sram_per_core_is_the_edited_file_and_changes_the_schedule(tmp_path):
    base = elk_opt.Chip("ipu-pod4")
    half = base.spec["sram_bytes_per_core"] // 2
    chip = elk_opt.Chip("ipu-pod4", sram_bytes_per_core=half)
    assert chip.spec["sram_bytes_per_core"] == half
    assert chip.name == f"ipu-pod4 (sram_bytes_per_core={half})"

    smaller = elk_opt.compare("llama2-7b", chip, **SHAPE).to_dict()["methods"]
    as_file = cli("compare", "--chip", chip_file(tmp_path, "ipu-pod4", sram_bytes_per_core=half),
                  *SHAPE_FLAGS)["results"]["methods"]
    assert makespans(smaller) == makespans(as_file)
    # Half the SRAM is a different instance: some method's makespan moves.
    full = elk_opt.compare("llama2-7b", base, **SHAPE).to_dict()["methods"]
    assert makespans(smaller) != makespans(full)


def test_clock_link_and_cost_model_keys_are_the_edited_file(tmp_path):
    keys = dict(clock_hz=1_000_000_000, link_bytes_per_s=4e9, sync_latency_cycles=300.0)
    chip = elk_opt.Chip("sn40l-like", **keys)
    assert chip.spec["clock_hz"] == 1e9
    assert chip.spec["noc"]["link_bytes_per_s"] == 4e9
    assert chip.spec["cost_model"]["sync_latency_cycles"] == 300.0
    # sn40l-like's 520 KiB per core holds Llama2-7B's KV cache at batch 8 and KV 512.
    ours = elk_opt.compare("llama2-7b", chip, batch=8, kv=512, **SHAPE).to_dict()["methods"]
    path = chip_file(tmp_path, "sn40l-like", clock_hz="1.0e9", link_bytes_per_s="4.0e9",
                     sync_latency_cycles="300.0")
    theirs = cli("compare", "--chip", path, "--batch", 8, "--kv", 512, *SHAPE_FLAGS)
    assert makespans(ours) == makespans(theirs["results"]["methods"])


def test_a_key_by_its_path_its_table_and_its_last_part_is_one_key():
    names = ("hbm.controllers", "hbm_controllers", "controllers")
    specs = [elk_opt.Chip("ipu-pod4", **{name: 8}).spec for name in names]
    assert [s.pop("name") for s in specs] == [f"ipu-pod4 ({n}=8)" for n in names]
    assert all(s["hbm"]["controllers"] == 8 for s in specs)
    assert specs[0] == specs[1] == specs[2]


@pytest.mark.parametrize("keys, message", [
    (dict(sram_per_core=1), "ipu-pod4 with sram_per_core=1: unknown key 'sram_per_core' "
                            "(every key: docs/chips.md or `elk-opt chips template`)"),
    (dict(cores=1.5), "key 'cores': expected count (integer), got 1.5"),
    (dict(topology="ring"), "key 'noc.topology': 'ring': one of all-to-all, mesh, torus"),
    (dict(clock_hz="fast"), "key 'clock_hz': expected Hz, got \"fast\""),
    (dict(sram_bytes_per_core=0), "key 'sram_bytes_per_core': must be a positive number, got 0"),
    (dict(kind="roofline"), "missing keys: cost_model.peak_flops_per_s_per_core"),
])
def test_a_bad_key_or_value_is_refused_in_one_line_naming_it(keys, message):
    with pytest.raises(ValueError) as e:
        elk_opt.Chip("ipu-pod4", **keys)
    assert message in str(e.value)
    assert "\n" not in str(e.value)
