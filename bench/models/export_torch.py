# Exports small real PyTorch architectures (random weights) to ONNX with
# both exporters; run on a machine with torch, torchvision and transformers.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""usage: export_torch.py OUTDIR [NAME...]

Writes OUTDIR/<name>.onnx for torchvision CNNs and Hugging Face transformers
at small sizes (ResNet-18 at full size, 45 MB), from the TorchScript-based exporter
(`ts_*`, opset 17) and the dynamo-based one (`dyn_*`, opset 18). Prints one
line per model: name, exporter, file size, or the exception if export fails.
"""

import os
import sys
import traceback

import torch
import torchvision


def transformers_models():
    from transformers import BertConfig, BertModel, GPT2Config, GPT2Model, ViTConfig, ViTModel
    bert = BertModel(BertConfig(vocab_size=1000, hidden_size=128, num_hidden_layers=2,
                                num_attention_heads=2, intermediate_size=512))
    gpt2 = GPT2Model(GPT2Config(vocab_size=1000, n_embd=128, n_layer=2, n_head=2,
                                use_cache=False, bos_token_id=0, eos_token_id=0))
    vit = ViTModel(ViTConfig(hidden_size=128, num_hidden_layers=2, num_attention_heads=2,
                             intermediate_size=512, image_size=64, patch_size=16))
    class Keywords(torch.nn.Module):
        """Keyword arguments, as the exporters cannot bind them positionally."""

        def __init__(self, model):
            super().__init__()
            self.model = model

        def forward(self, input_ids, attention_mask=None):
            return self.model(input_ids=input_ids,
                              attention_mask=attention_mask).last_hidden_state

    bert = Keywords(bert)
    gpt2 = Keywords(gpt2)
    ids = torch.randint(0, 1000, (1, 32))
    mask = torch.ones(1, 32, dtype=torch.int64)
    return [
        ("bert", bert, (ids, mask), ["input_ids", "attention_mask"]),
        ("gpt2", gpt2, (ids,), ["input_ids"]),
        ("vit", vit, (torch.randn(1, 3, 64, 64),), ["pixel_values"]),
    ]


def main():
    out = sys.argv[1]
    only = set(sys.argv[2:])
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(0)
    image = (torch.randn(1, 3, 224, 224),)
    cnns = [
        ("squeezenet1_1", torchvision.models.squeezenet1_1()),
        ("shufflenet_v2_x0_5", torchvision.models.shufflenet_v2_x0_5()),
        ("mobilenet_v3_small", torchvision.models.mobilenet_v3_small()),
        ("mnasnet0_5", torchvision.models.mnasnet0_5()),
        ("resnet18", torchvision.models.resnet18()),
    ]
    # Every model through both exporters: TorchScript-based (ts_) and dynamo (dyn_).
    jobs = []
    for name, model in cnns:
        jobs.append(("ts_" + name, model, image, ["input"], False))
        jobs.append(("dyn_" + name, model, image, ["input"], True))
    for name, model, args, names in transformers_models():
        jobs.append(("ts_" + name, model, args, names, False))
        jobs.append(("dyn_" + name, model, args, names, True))
    for name, model, args, input_names, dynamo in jobs:
        if only and name not in only:
            continue
        path = os.path.join(out, name + ".onnx")
        try:
            model.eval()
            with torch.no_grad():
                if dynamo:
                    program = torch.onnx.export(model, args, dynamo=True, opset_version=18,
                                                input_names=input_names)
                    program.save(path)
                else:
                    torch.onnx.export(model, args, path, dynamo=False, opset_version=17,
                                      input_names=input_names)
            print(f"{name}: exported, {os.path.getsize(path)} bytes", flush=True)
        except Exception:
            print(f"{name}: export failed\n{traceback.format_exc(limit=3)}", flush=True)


if __name__ == "__main__":
    main()
