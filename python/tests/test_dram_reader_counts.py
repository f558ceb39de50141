"""`compare(chip=Chip(..., dram_readers="auto"))` tries every count of DRAM-reader cores in
one call: its progress is one run over every count's method rows, each named for its count,
and its warnings are every count's, each once, in the order the CLI prints them."""

import json
import warnings

import elk_opt
from conftest import ROOT, cli

DTYPE = "w=bfp4,ffn=bfp4,kv=bfp8,a=bf16"
HF = ROOT / "model" / "tests" / "fixtures" / "hf" / "Meta-Llama-3-8B" / "config.json"


def auto():
    return elk_opt.Chip("wormhole-n150", dram_readers="auto")


def test_progress_is_one_run_over_every_count_each_step_naming_its_count():
    seen = []
    r = elk_opt.compare(elk_opt.Model("llama3.2-1b", dtype=DTYPE), auto(), kv=128, num_layers=1,
                        no_timings=True, progress=lambda k, n, name: seen.append((k, n, name)))
    counts = [c["readers"] for c in r.to_dict()["dram_reader_counts"]]
    assert counts == [0, 8, 16]
    n = seen[0][1]
    rows = n // len(counts)
    assert rows > 1 and n == rows * len(counts)
    # Steps 1..n of one total, then the end once (not once per count).
    assert [(k, total) for k, total, _ in seen] == [(k, n) for k in range(1, n + 2)]
    assert seen[-1][2] == ""
    for k, _, name in seen[:-1]:
        readers = counts[(k - 1) // rows]
        prefix = f"readers {readers} of 0/8/16: "
        assert name.startswith(prefix), (k, name)
    # Each count names the same methods in the same order.
    names = [name.split(": ", 1)[1] for _, _, name in seen[:-1]]
    assert names == names[:rows] * len(counts)
    assert set(names) <= {m["method"] for m in r.methods}


def test_every_counts_warnings_come_once_in_the_clis_order(tmp_path, monkeypatch):
    # A model whose own warning comes on every count (a config.json key elk-opt does not
    # know), and a plan cache that cannot be written (its directory is a file).
    config = tmp_path / "config.json"
    config.write_text(HF.read_text().replace("{", '{"foo_bar": 1,', 1))
    blocked = tmp_path / "cache"
    blocked.mkdir()
    (blocked / "elk-opt").write_text("")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocked))

    # (`Model` checks the file, and says its warnings, when it is made.)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = elk_opt.Model(str(config), num_layers=1, dtype=DTYPE)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        r = elk_opt.compare(model, auto(), kv=128, no_timings=True)
    got = [str(w.message) for w in caught if issubclass(w.category, UserWarning)]

    p = cli("compare", "--model", config, "--num-layers", 1, "--dtype", DTYPE, "--chip",
            "wormhole-n150", "--dram-readers", "auto", "--kv", 128, "--json", "--no-timings", ok=False)
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["results"] == r.to_dict()
    printed = [line[len("warning: "):].replace("--no-cache", "cache=False")
               for line in p.stderr.splitlines() if line.startswith("warning: ")]
    once = list(dict.fromkeys(printed))
    # The CLI says the model's warning on each count; Python once.
    unknown = [w for w in printed if "foo_bar" in w]
    assert len(unknown) == 3 and len(set(unknown)) == 1
    assert any(w.startswith("plan cache not updated: ") for w in once)
    assert got == once
