"""Every Python result is the CLI's ``--json`` for the same request, key for key: ``simulate``,
``compare``, ``gap``, ``moe``, ``solve`` (a method and ``--exact``) and ``sweep``. Both front
ends build the same request types (``elk_app::request``) and print the same result types, so
a key added to one and not the other fails here. Timings are left out (``--no-timings``) so
that the two runs can be compared byte for byte."""

import json

import pytest

import elk_opt
from conftest import cli

MODEL = ["--model", "llama2-7b", "--num-layers", 1, "--ops", "0..8"]
SMALL = dict(num_layers=1, ops="0..8")
LIMIT = 60


def same(python, cli_json):
    """Equal key for key (every float the same to the bit), with a readable difference."""
    assert set(python) == set(cli_json), f"keys only in Python: {set(python) - set(cli_json)}, " \
        f"only in the CLI: {set(cli_json) - set(python)}"
    for k in cli_json:
        assert python[k] == cli_json[k], k


def test_simulate(tmp_path):
    s = elk_opt.solve("llama2-7b", method="elk-dyn", **SMALL)
    s.save(tmp_path / "s.json", instance_path=tmp_path / "i.json")
    out = cli("simulate", "--instance", tmp_path / "i.json", "--schedule", tmp_path / "s.json", "--json")
    same(s.simulate(), out["results"])
    # breakdown, stages_bound and the per-stage rows are there, as in the CLI.
    assert set(out["results"]["breakdown"]) == {
        "execute_only_cycles", "preload_only_cycles", "overlapped_cycles", "noc_bound_cycles"}


def test_compare():
    r = elk_opt.compare("llama2-7b", no_timings=True, **SMALL)
    out = cli("compare", *MODEL, "--json", "--no-timings")
    same(r.to_dict(), out["results"])
    same(r.config, out["config"])
    # Key for key in the same order: both serialize the one results type.
    assert list(r.to_dict()) == list(out["results"])


def test_compare_on_another_chip_with_a_dtype():
    r = elk_opt.compare(elk_opt.Model("llama2-7b", dtype="fp32"), elk_opt.Chip("ipu-mk2", hbm_tbps=8),
                        batch=8, kv=512, no_timings=True, **SMALL)
    out = cli("compare", *MODEL, "--dtype", "fp32", "--chip", "ipu-mk2", "--hbm-tbps", 8,
              "--batch", 8, "--kv", 512, "--json", "--no-timings")
    same(r.to_dict(), out["results"])
    same(r.config, out["config"])


def test_compare_with_block_float_weights():
    # Block floats (bfp8: 17/16 byte per element) for the weights, on a roofline chip.
    dtype = "w=bfp8,kv=bf16,a=bf16"
    r = elk_opt.compare(elk_opt.Model("llama2-7b", dtype=dtype), elk_opt.Chip("tt-blackhole-like"),
                        batch=8, kv=512, no_timings=True, **SMALL)
    out = cli("compare", *MODEL, "--dtype", dtype, "--chip", "tt-blackhole-like",
              "--batch", 8, "--kv", 512, "--json", "--no-timings")
    same(r.to_dict(), out["results"])
    same(r.config, out["config"])
    assert out["config"]["dtype"] == dtype


def test_compare_with_dram_reader_cores():
    # Two of the n150's eight columns stream weights from DRAM: 48 compute cores at 264 GB/s.
    dtype = "w=bfp8,ffn=bfp4,kv=bfp8,a=bf16"
    chip = elk_opt.Chip("wormhole-n150", dram_readers=16)
    assert chip.spec["cores"] == 48 and chip.name == "wormhole-n150 (16 DRAM readers)"
    r = elk_opt.compare(elk_opt.Model("llama3.2-1b", dtype=dtype), chip,
                        kv=128, num_layers=1, no_timings=True)
    out = cli("compare", "--model", "llama3.2-1b", "--num-layers", 1, "--dtype", dtype,
              "--chip", "wormhole-n150", "--dram-readers", 16, "--kv", 128, "--json",
              "--no-timings")
    same(r.to_dict(), out["results"])
    same(r.config, out["config"])
    assert out["config"]["dram_readers"] == 16


def test_compare_every_dram_reader_count():
    # --dram-readers auto: the n150 with none, one and two columns of readers, merged in the
    # extension as in the CLI (each method's fastest count, the lowest bound).
    dtype = "w=bfp8,ffn=bfp4,kv=bfp8,a=bf16"
    r = elk_opt.compare(elk_opt.Model("llama3.2-1b", dtype=dtype), elk_opt.Chip("wormhole-n150", dram_readers="auto"),
                        kv=128, num_layers=1, no_timings=True)
    out = cli("compare", "--model", "llama3.2-1b", "--num-layers", 1, "--dtype", dtype,
              "--chip", "wormhole-n150", "--dram-readers", "auto", "--kv", 128, "--json",
              "--no-timings")
    same(r.to_dict(), out["results"])
    same(r.config, out["config"])
    assert [c["readers"] for c in out["results"]["dram_reader_counts"]] == [0, 8, 16]
    kept = min(out["results"]["dram_reader_counts"], key=lambda c: c["best_ms"])
    assert r.instance.config["dram_readers"] == kept["readers"]
    with pytest.raises(ValueError, match="--dram-readers auto with --layer-exact"):
        elk_opt.compare("llama3.2-1b", elk_opt.Chip("wormhole-n150", dram_readers="auto"), layer_exact=1,
                        num_layers=1)
    with pytest.raises(ValueError, match="only `compare` tries every count"):
        elk_opt.solve("llama3.2-1b", elk_opt.Chip("wormhole-n150", dram_readers="auto"), method="basic",
                      num_layers=1)


def test_gap():
    r = elk_opt.gap("llama2-7b", time_limit=LIMIT, no_timings=True, **SMALL)
    out = cli("gap", *MODEL, "--time-limit", LIMIT, "--json", "--no-timings")
    same(r.to_dict(), out["results"])
    same(r.config, out["config"])


def test_solve_a_method():
    s = elk_opt.solve("llama2-7b", method="elk-dyn", no_timings=True, **SMALL)
    out = cli("solve", *MODEL, "--method", "elk-dyn", "--json", "--no-timings")
    same(s.row, out["results"])
    same(s.config, out["config"])


def test_solve_exact():
    s = elk_opt.solve("llama2-7b", exact=True, time_limit=LIMIT, no_timings=True, **SMALL)
    out = cli("solve", "--exact", *MODEL, "--time-limit", LIMIT, "--json", "--no-timings")
    same(s.row, out["results"])
    same(s.config, out["config"])


def test_moe():
    r = elk_opt.moe("olmoe-1b-7b", steps=2, num_layers=1, routing="zipf:1.2", batch=8)
    out = cli("moe", "--model", "olmoe-1b-7b", "--steps", 2, "--num-layers", 1, "--routing", "zipf:1.2",
              "--batch", 8, "--json")
    same(r.to_dict(), out["results"])
    same(r.config, out["config"])


def test_sweep(tmp_path):
    grid = tmp_path / "g.toml"
    grid.write_text('figure = "vs-hbm"\nmodels = ["llama2-7b"]\nbatches = [8]\nkvs = [512]\n'
                    'hbm_tbps = [8.0]\n')
    r = elk_opt.sweep(str(grid), tmp_path / "py.jsonl")
    out = cli("sweep", grid, "-o", tmp_path / "cli.jsonl", "--json")
    assert (tmp_path / "py.jsonl").read_text() == (tmp_path / "cli.jsonl").read_text()
    same(r.summary, dict(out["results"], output=str(tmp_path / "py.jsonl")))
    same(r.config, dict(out["config"], output=str(tmp_path / "py.jsonl")))
