"""Every kind of model file the CLI reads, read by `Model.from_file` the same way."""

from pathlib import Path

import elk_opt
from conftest import FIXTURES, ROOT, cli

HF = ROOT / "model" / "tests" / "fixtures" / "hf" / "Mistral-7B-v0.1" / "config.json"
ONNX = ROOT / "tests" / "data" / "onnx" / "tiny-llama-gqa-decode.onnx"
REFERENCE = FIXTURES / "models" / "bert-base.json"


def check(model, flags):
    r = elk_opt.compare(model, no_timings=True, ops="0..6")
    out = cli("compare", *flags, "--ops", "0..6", "--json", "--no-timings")
    assert r.to_dict() == out["results"]
    assert r.config == out["config"]
    return r


def test_a_hugging_face_config_is_read_as_model():
    m = elk_opt.Model.from_file(HF, num_layers=1)
    assert m.kind == "model"
    check(m, ["--model", HF, "--num-layers", 1])


def test_an_onnx_file_is_read_as_onnx():
    m = elk_opt.Model.from_file(ONNX)
    assert m.kind == "onnx"
    check(m, ["--onnx", ONNX])


def test_a_reference_graph_is_read_as_import():
    m = elk_opt.Model.from_file(REFERENCE)
    assert m.kind == "import"
    check(m, ["--import", REFERENCE])


def test_a_model_file_is_read_as_model(tmp_path):
    text = cli("models", "from-hf", HF, ok=False).stdout
    f = tmp_path / "mistral.toml"
    f.write_text(text)
    m = elk_opt.Model(str(f), num_layers=1)
    check(m, ["--model", f, "--num-layers", 1])
