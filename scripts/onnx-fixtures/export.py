#!/usr/bin/env python3
"""Exports the ONNX fixtures of tests/data/onnx/ (docs/onnx.md).

Tiny random-weight Llama-, GPT-2- and ViT-style models built from transformers' config
classes with a fixed seed (no hub download), exported with torch.onnx.export (the
TorchScript exporter, opset 17). Symbolic dimensions are named `batch`, `sequence` and
`past_sequence`; elk-opt binds them from --batch/--kv. Each model's zoo twin is the TOML
file of the same name in tests/data/onnx/.

    python3 -m venv /tmp/onnxvenv && /tmp/onnxvenv/bin/pip install -r requirements.txt
    /tmp/onnxvenv/bin/python export.py ../../tests/data/onnx
"""
import os
import sys

import onnx
import torch
import transformers
from transformers import (GPT2Config, GPT2LMHeadModel, LlamaConfig, LlamaForCausalLM,
                          ViTConfig, ViTForImageClassification)
from transformers.cache_utils import DynamicCache

SEED = 18
OPSET = 17
LAYERS = 2
HIDDEN = 64
HEADS = 4
KV_HEADS = 2
VOCAB = 256


class Decode(torch.nn.Module):
    """One decode step with the KV cache as flat graph inputs past_key_values.{i}.key/value."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, input_ids, *past):
        pairs = [(past[2 * i], past[2 * i + 1]) for i in range(len(past) // 2)]
        if isinstance(self.model, LlamaForCausalLM):
            pairs = DynamicCache.from_legacy_cache(tuple(pairs))
        out = self.model(input_ids=input_ids, past_key_values=pairs, use_cache=True)
        present = out.past_key_values
        if hasattr(present, "to_legacy_cache"):
            present = present.to_legacy_cache()
        flat = [t for kv in present for t in kv]
        return (out.logits, *flat)


class Prefill(torch.nn.Module):
    """A whole prompt, no cache: logits only."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, input_ids):
        return self.model(input_ids=input_ids, use_cache=False).logits


def randomize(model):
    """Every parameter random: the exporter stores equal tensors once (the ones and zeros a
    fresh model starts its norms and biases with), which would hide weights from the count."""
    with torch.no_grad():
        for p in model.parameters():
            p.normal_(0.0, 0.02)
    return model


def export(module, args, names, axes, path):
    module.eval()
    with torch.no_grad():
        torch.onnx.export(module, args, path, input_names=names[0], output_names=names[1],
                          dynamic_axes=axes, opset_version=OPSET, do_constant_folding=True,
                          dynamo=False)
    onnx.checker.check_model(onnx.load(path))
    print(f"{path}: {os.path.getsize(path)} bytes")


def decoder(model, heads, head_dim, out, name):
    ids = torch.randint(0, VOCAB, (2, 5))
    export(Prefill(model), (ids,), (["input_ids"], ["logits"]),
           {"input_ids": {0: "batch", 1: "sequence"}, "logits": {0: "batch", 1: "sequence"}},
           os.path.join(out, f"{name}-prefill.onnx"))
    past = []
    names = ["input_ids"]
    outs = ["logits"]
    axes = {"input_ids": {0: "batch"}, "logits": {0: "batch"}}
    for i in range(LAYERS):
        for kv in ("key", "value"):
            past.append(torch.randn(2, heads, 7, head_dim))
            names.append(f"past_key_values.{i}.{kv}")
            outs.append(f"present.{i}.{kv}")
            axes[names[-1]] = {0: "batch", 2: "past_sequence"}
            axes[outs[-1]] = {0: "batch", 2: "total_sequence"}
    export(Decode(model), (torch.randint(0, VOCAB, (2, 1)), *past), (names, outs), axes,
           os.path.join(out, f"{name}-decode.onnx"))


def bad_fixtures(out):
    """Small models elk-opt refuses, for the error tests, written with onnx.helper (not
    exported by torch): an operator it cannot map, an input dimension without a shape, and
    a KV cache broadcast on two axes (not repeat_kv's one)."""
    from onnx import TensorProto, helper

    def save(name, dims, node, x_name="x", initializers=()):
        x = helper.make_tensor_value_info(x_name, TensorProto.FLOAT, dims)
        y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
        graph = helper.make_graph([node], name, [x], [y], initializer=list(initializers))
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
        path = os.path.join(out, f"{name}.onnx")
        onnx.save(model, path)
        print(f"{path}: {os.path.getsize(path)} bytes")

    save("unsupported-op", ["batch", "sequence", 8],
         helper.make_node("Hardmax", ["x"], ["y"], name="/head/Hardmax"))
    # The middle dimension has neither a number nor a name.
    save("missing-shape", ["batch", None, 8],
         helper.make_node("Relu", ["x"], ["y"], name="/act/Relu"))
    shape = helper.make_tensor("shape", TensorProto.INT64, [4], [1, 4, 1, 16])
    save("expanded-kv", ["batch", 1, "past_sequence", 1],
         helper.make_node("Expand", ["past_key", "shape"], ["y"], name="/attn/Expand"),
         x_name="past_key", initializers=[shape])


def llama(kv_heads, tied=False, attention="eager"):
    """The tiny Llama, with `kv_heads` key/value heads (grouped-query attention when fewer
    than HEADS), its LM head tied or not, eager or SDPA attention."""
    torch.manual_seed(SEED)
    return randomize(LlamaForCausalLM(LlamaConfig(
        vocab_size=VOCAB, hidden_size=HIDDEN, intermediate_size=172,
        num_hidden_layers=LAYERS, num_attention_heads=HEADS, num_key_value_heads=kv_heads,
        max_position_embeddings=128, tie_word_embeddings=tied,
        attn_implementation=attention)))


def gpt2(tied):
    """The tiny GPT-2, its LM head tied to the embedding or not."""
    torch.manual_seed(SEED)
    return randomize(GPT2LMHeadModel(GPT2Config(
        vocab_size=VOCAB, n_positions=128, n_embd=HIDDEN, n_layer=LAYERS, n_head=HEADS,
        tie_word_embeddings=tied, attn_implementation="eager")))


def main(out):
    os.makedirs(out, exist_ok=True)
    decoder(llama(HEADS), HEADS, HIDDEN // HEADS, out, "tiny-llama")
    decoder(gpt2(tied=False), HEADS, HIDDEN // HEADS, out, "tiny-gpt2")
    torch.manual_seed(SEED)
    vit = randomize(ViTForImageClassification(ViTConfig(
        image_size=32, patch_size=8, num_channels=3, hidden_size=HIDDEN,
        num_hidden_layers=LAYERS, num_attention_heads=HEADS, intermediate_size=4 * HIDDEN,
        num_labels=10, attn_implementation="eager")))

    class Vit(torch.nn.Module):
        def __init__(self, m):
            super().__init__()
            self.m = m

        def forward(self, pixel_values):
            return self.m(pixel_values=pixel_values).logits

    export(Vit(vit), (torch.randn(2, 3, 32, 32),), (["pixel_values"], ["logits"]),
           {"pixel_values": {0: "batch"}, "logits": {0: "batch"}},
           os.path.join(out, "tiny-vit.onnx"))
    bad_fixtures(out)
    # Grouped-query attention (Llama 3, Mistral, Qwen2): repeat_kv expands the cache.
    decoder(llama(KV_HEADS), KV_HEADS, HIDDEN // HEADS, out, "tiny-llama-gqa")
    # GPT-2 as published, its LM head tied: the exporter stores the head as a transposed
    # copy of the embedding, which elk-opt counts once.
    decoder(gpt2(tied=True), HEADS, HIDDEN // HEADS, out, "tiny-gpt2-tied")
    # Both, with transformers' default SDPA attention (its export scales Q and the repeated
    # K by √scale each): how Llama 3.2 1B is configured and exported by default.
    decoder(llama(KV_HEADS, tied=True, attention="sdpa"), KV_HEADS, HIDDEN // HEADS, out,
            "tiny-llama3-sdpa")
    print(f"torch {torch.__version__}, transformers {transformers.__version__}, "
          f"onnx {onnx.__version__}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "tests/data/onnx")
