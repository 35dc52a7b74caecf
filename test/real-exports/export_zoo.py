#!/usr/bin/env python3
# Exports the real-exports zoo: torchvision families, a segmentation model and
# transformers encoders/decoders, through PyTorch's TorchScript and dynamo
# exporters with a dynamic batch axis (and a dynamic sequence axis for text),
# then strips their weights to statistics (weights.py) so each file is small.
# Runs where torch, torchvision and transformers are installed (the GPU machine).
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""usage: export_zoo.py --out DIR [--only NAME,...] [--exporters torchscript,dynamo]

Writes DIR/<name>.<exporter>.onnx (weights stripped) and DIR/export.log with
one `ok` or `FAIL` line per export. Models are the families' own constructors;
where a family's standard configuration is over ~20M parameters a shallower
or narrower member of the same family is built (named in the table below),
since the graph structure the exporter writes -- not the weight count -- is
what the zoo tests. Vision inputs are 64x64 unless the family needs more.
"""

import argparse
import os
import sys
import time
import traceback

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import weights  # noqa: E402


class FirstOutput(torch.nn.Module):
    """The model's main output as one tensor (logits, 'out', last_hidden_state)."""

    def __init__(self, inner):
        super().__init__()
        self.inner = inner

    def forward(self, x):
        out = self.inner(x)
        if isinstance(out, dict) and "out" in out:
            return out["out"]
        if hasattr(out, "last_hidden_state"):
            return out.last_hidden_state
        return out[0] if isinstance(out, (tuple, list)) else out


def trim_classifier(model, hidden=256):
    """VGG/AlexNet with their 4096-wide classifier narrowed (102M -> 6M weights)."""
    layers = list(model.classifier)
    linears = [i for i, l in enumerate(layers) if isinstance(l, torch.nn.Linear)]
    first, last = linears[0], linears[-1]
    layers[first] = torch.nn.Linear(layers[first].in_features, hidden)
    for i in linears[1:-1]:
        layers[i] = torch.nn.Linear(hidden, hidden)
    layers[last] = torch.nn.Linear(hidden, layers[last].out_features)
    model.classifier = torch.nn.Sequential(*layers)
    return model


def vision_models():
    """(name, module, image size) for each torchvision family."""
    import torchvision.models as tv
    from torchvision.models import convnext, resnet, segmentation
    yield "resnet18", tv.resnet18(), 64
    yield "resnext_small", resnet.ResNet(resnet.Bottleneck, [1, 1, 1, 1], groups=32, width_per_group=4), 64
    yield "wide_resnet_small", resnet.ResNet(resnet.Bottleneck, [1, 1, 1, 1], width_per_group=128), 64
    yield "densenet121", tv.densenet121(), 64
    yield "inception_v3", tv.inception_v3(aux_logits=False, init_weights=True), 96
    yield "googlenet", tv.googlenet(aux_logits=False, init_weights=True), 64
    yield "vgg11_narrow", trim_classifier(tv.vgg11()), 224
    yield "alexnet_narrow", trim_classifier(tv.alexnet()), 224
    yield "squeezenet1_1", tv.squeezenet1_1(), 64
    yield "shufflenet_v2_x0_5", tv.shufflenet_v2_x0_5(), 64
    yield "mobilenet_v2", tv.mobilenet_v2(), 64
    yield "mobilenet_v3_small", tv.mobilenet_v3_small(), 64
    yield "mnasnet0_5", tv.mnasnet0_5(), 64
    yield "efficientnet_b0", tv.efficientnet_b0(), 64
    yield "regnet_y_400mf", tv.regnet_y_400mf(), 64
    yield "convnext_small_config", convnext.ConvNeXt([
        convnext.CNBlockConfig(32, 64, 1), convnext.CNBlockConfig(64, 128, 1),
        convnext.CNBlockConfig(128, 256, 2), convnext.CNBlockConfig(256, None, 1)]), 64
    yield "vit_small_config", tv.VisionTransformer(
        image_size=64, patch_size=16, num_layers=2, num_heads=4, hidden_dim=64, mlp_dim=128), 64
    yield "swin_small_config", tv.SwinTransformer(
        patch_size=[4, 4], embed_dim=32, depths=[2, 2, 2, 2], num_heads=[2, 4, 8, 16],
        window_size=[7, 7]), 64
    yield "lraspp_mobilenet_v3_large", segmentation.lraspp_mobilenet_v3_large(
        weights=None, weights_backbone=None), 64
    yield "deeplabv3_mobilenet_v3_large", segmentation.deeplabv3_mobilenet_v3_large(
        weights=None, weights_backbone=None, aux_loss=False), 64


def text_models():
    """(name, module, example input, input name, dynamic axes) for transformers models."""
    import transformers as tf
    ids = torch.randint(0, 1000, (2, 16))
    seq = {0: "batch", 1: "sequence"}
    yield "bert_tiny", tf.BertModel(tf.BertConfig(
        vocab_size=1000, hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
        intermediate_size=128)), ids, "input_ids", seq
    yield "distilbert_tiny", tf.DistilBertModel(tf.DistilBertConfig(
        vocab_size=1000, dim=64, n_layers=2, n_heads=4, hidden_dim=128)), ids, "input_ids", seq
    yield "gpt2_tiny", tf.GPT2Model(tf.GPT2Config(
        vocab_size=1000, n_embd=64, n_layer=2, n_head=4, n_positions=128)), ids, "input_ids", seq
    yield "t5_encoder_tiny", tf.T5EncoderModel(tf.T5Config(
        vocab_size=1000, d_model=64, d_kv=16, d_ff=128, num_layers=2, num_heads=4)), ids, "input_ids", seq
    yield "vit_tiny", tf.ViTModel(tf.ViTConfig(
        hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=128,
        image_size=64, patch_size=16)), torch.randn(2, 3, 64, 64), "pixel_values", {0: "batch"}
    whisper = tf.WhisperModel(tf.WhisperConfig(
        vocab_size=1000, d_model=64, encoder_layers=2, encoder_attention_heads=4,
        decoder_layers=1, decoder_attention_heads=4, encoder_ffn_dim=128, decoder_ffn_dim=128,
        num_mel_bins=80, max_source_positions=64, max_target_positions=64,
        # The default special token ids (50256-50362) lie outside a
        # 1000-word vocabulary, which transformers refuses.
        pad_token_id=0, bos_token_id=1, eos_token_id=2, decoder_start_token_id=1,
        suppress_tokens=None, begin_suppress_tokens=None))
    yield "whisper_encoder_tiny", whisper.get_encoder(), torch.randn(2, 80, 128), "input_features", {0: "batch"}


def export(module, example, input_name, dynamic, path, exporter):
    model = FirstOutput(module).eval()
    kwargs = dict(input_names=[input_name], output_names=["output"], opset_version=18)
    if exporter == "torchscript":
        torch.onnx.export(model, (example,), path, dynamo=False,
                          dynamic_axes={input_name: dynamic, "output": {0: "batch"}}, **kwargs)
    else:
        dims = {axis: torch.export.Dim(name, min=1 if name == "batch" else 2, max=1024 if name == "batch" else 64)
                for axis, name in dynamic.items()}
        torch.onnx.export(model, (example,), path, dynamo=True, external_data=False,
                          dynamic_shapes=({**dims},), **kwargs)


def jobs(exporters):
    for name, module, size in vision_models():
        example = torch.randn(2, 3, size, size)
        for exporter in exporters:
            yield name, module, example, "input", {0: "batch"}, exporter
    for name, module, example, input_name, dynamic in text_models():
        for exporter in exporters:
            yield name, module, example, input_name, dynamic, exporter


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--out", required=True)
    p.add_argument("--only", default="")
    p.add_argument("--exporters", default="torchscript,dynamo")
    a = p.parse_args()
    os.makedirs(a.out, exist_ok=True)
    only = set(filter(None, a.only.split(",")))
    torch.manual_seed(0)
    with open(os.path.join(a.out, "export.log"), "a") as log:
        for name, module, example, input_name, dynamic, exporter in jobs(a.exporters.split(",")):
            if only and name not in only:
                continue
            path = os.path.join(a.out, f"{name}.{exporter}.onnx")
            start = time.time()
            try:
                with torch.no_grad():
                    export(module, example, input_name, dynamic, path, exporter)
                import onnx
                model = onnx.load(path)
                stripped = weights.strip(model)
                onnx.save(model, path)
                line = (f"ok   {name}.{exporter} {os.path.getsize(path) / 2**10:.0f} KiB, "
                        f"{stripped} initializers stripped, {time.time() - start:.0f} s")
            except Exception as e:  # one failure must not stop the others
                line = f"FAIL {name}.{exporter}: {type(e).__name__}: {str(e)[:400]}"
                traceback.print_exc(limit=3, file=sys.stdout)
                if os.path.exists(path):
                    os.remove(path)
            print(line, flush=True)
            log.write(line + "\n")
            log.flush()


if __name__ == "__main__":
    main()
