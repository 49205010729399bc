#!/usr/bin/python3
"""Exports the shared encoder's architecture (two nn.TransformerEncoderLayer,
d_model 256, 4 heads, ff 1024, ReLU, batch_first) with PyTorch 1.13's
TorchScript exporter at opset 13 (LayerNorm decomposed into ReduceMean, Sub,
Pow, Add, Sqrt, Div, Mul, Add) and at opset 17 (LayerNormalization), for
comparing what rlx makes of the two spellings (docs/perf/opset13.md).

Run by hand, never by CI (Debian's python3-torch and python3-onnx):

    /usr/bin/python3 scripts/export_encoder_opsets.py /tmp/op13

writes enc13.onnx and enc17.onnx (about 3 MB each; not committed).
"""
import os
import sys

import torch
import torch.nn as nn


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        layer = nn.TransformerEncoderLayer(256, 4, 1024, dropout=0.0, activation="relu", batch_first=True)
        self.enc = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)

    def forward(self, x):
        return self.enc(x)


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "."
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(7)
    model = Encoder().eval()
    x = torch.randn(3, 20, 256)  # traced at a shape no benchmark uses
    for opset in (13, 17):
        torch.onnx.export(model, (x,), os.path.join(out, f"enc{opset}.onnx"), opset_version=opset,
                          input_names=["x"], output_names=["y"],
                          dynamic_axes={"x": {0: "batch", 1: "seq"}, "y": {0: "batch", 1: "seq"}})
    print(f"wrote {out}/enc13.onnx and {out}/enc17.onnx")


if __name__ == "__main__":
    main()
