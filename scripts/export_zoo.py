#!/usr/bin/python3
"""Exports torchvision architectures at full size, with seeded random
weights, to measure rlx on models it was never tuned on. Run by hand,
never by CI, and never committed (the files are 5-350 MB):

    apt-get install python3-torch python3-torchvision python3-onnx python3-numpy
    /usr/bin/python3 scripts/export_zoo.py /tmp/rlx-zoo               # all models
    /usr/bin/python3 scripts/export_zoo.py /tmp/rlx-zoo resnet50 vit  # some of them
    go run ./cmd/rlxbench --manifest /tmp/rlx-zoo/manifest.json \\
        --bench-dir ../shared/bench --threads 1,2 --skip-gemm

The output directory gets M.onnx, M_data/ and manifest.json in the format
of testdata/onnx/manifest.json, so rlxbench checks every case against
PyTorch's outputs and times it against ONNX Runtime. The export, seeding
and BatchNorm calibration are scripts/export_onnx_tests.py's: only the
models and the size cap differ. Weights are torchvision's default
initialization, so the outputs say nothing about accuracy; they exercise
the operators, the shapes and the graph structure a user's export of the
same architecture has.
"""

import importlib.util
import json
import os
import sys

import torch
import torchvision.models as tvm

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("export_onnx_tests", os.path.join(HERE, "export_onnx_tests.py"))
base = importlib.util.module_from_spec(spec)
spec.loader.exec_module(base)

IMG = {"x": ["batch", 3, "height", "width"]}
FIXED = {"x": ["batch", 3, 224, 224]}
LOGITS = {"logits": ["batch", 1000]}


def cnn(make, note, sizes=((224, 224), (160, 192)), opset=17):
    """An image classifier with dynamic batch, height and width."""
    (h1, w1), (h2, w2) = sizes
    return dict(make=make, opset=opset, inputs=IMG, outputs=LOGITS, bn=True,
                trace=dict(batch=3, height=h2 + 32, width=w2 - 32),
                cases=dict(b1=dict(batch=1, height=h1, width=w1), alt=dict(batch=2, height=h2, width=w2)),
                feed=base.img_inputs, note=note)


def fixed(make, note, opset=17):
    """A classifier whose graph bakes in 224x224 (position embeddings)."""
    return dict(make=make, opset=opset, inputs=FIXED, outputs=LOGITS, bn=True,
                trace=dict(batch=3), cases=dict(b1=dict(batch=1), alt=dict(batch=2)),
                feed=lambda rng, b: {"x": base.signal(rng, (b["batch"], 3, 224, 224))}, note=note)


def vit_b_16():
    # torchvision zero-initializes the classifier head: outputs would be 0.
    m = tvm.vit_b_16(weights=None)
    torch.nn.init.normal_(m.heads.head.weight, std=0.02)
    return m


class SegmentationOut(torch.nn.Module):
    """A torchvision segmentation model's "out" map alone (it returns a dict)."""

    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, x):
        return self.m(x)["out"]


def segmentation(make, note):
    """A segmentation model: logits per pixel at the input's size."""
    spec = cnn(lambda: SegmentationOut(make(weights=None, weights_backbone=None, num_classes=21)), note,
               sizes=((224, 224), (160, 192)))
    spec["outputs"] = {"out": ["batch", 21, "height", "width"]}
    return spec


def video(make, note):
    """A video classifier over [batch, 3, frames, 112, 112] clips."""
    return dict(make=lambda: make(weights=None), opset=17, inputs={"x": ["batch", 3, "frames", 112, 112]},
                outputs={"logits": ["batch", 400]}, bn=True, trace=dict(batch=2, frames=8),
                cases=dict(b1=dict(batch=1, frames=16), alt=dict(batch=2, frames=8)),
                feed=lambda rng, b: {"x": base.signal(rng, (b["batch"], 3, b["frames"], 112, 112))}, note=note)


def video224(make, note):
    """A video classifier over [batch, 3, frames, 224, 224] clips."""
    alt = dict(batch=1, frames=24)
    return dict(make=lambda: make(weights=None), opset=17, inputs={"x": ["batch", 3, "frames", 224, 224]},
                outputs={"logits": ["batch", 400]}, bn=True, trace=dict(batch=2, frames=16),
                cases=dict(b1=dict(batch=1, frames=16), alt=alt),
                feed=lambda rng, b: {"x": base.signal(rng, (b["batch"], 3, b["frames"], 224, 224))}, note=note)


def eval_inception_v3():
    return tvm.inception_v3(weights=None, aux_logits=False, init_weights=True)


def eval_googlenet():
    return tvm.googlenet(weights=None, aux_logits=False, init_weights=True)


SPECS = {
    "resnet50": cnn(tvm.resnet50, "ResNet-50: 1x1-3x3-1x1 bottlenecks, stride-2 3x3 and 1x1 shortcuts"),
    "efficientnet_b0": cnn(tvm.efficientnet_b0, "EfficientNet-B0: MBConv, SiLU, depthwise 3x3/5x5, "
                           "squeeze-excitation (global pool, 1x1 convs, sigmoid, broadcast Mul)"),
    "mobilenet_v3_small": cnn(tvm.mobilenet_v3_small, "MobileNetV3-Small: hardswish, hardsigmoid SE, depthwise"),
    "convnext_tiny": fixed(tvm.convnext_tiny, "ConvNeXt-T: depthwise 7x7, channel LayerNorm by permute, "
                           "GELU, layer scale, 4x4 patchify and 2x2 downsampling convs"),
    "squeezenet1_1": cnn(tvm.squeezenet1_1, "SqueezeNet 1.1: fire modules (Concat of 1x1 and 3x3), "
                         "MaxPool 3x3/2 ceil_mode, no BatchNorm"),
    "shufflenet_v2": cnn(tvm.shufflenet_v2_x1_0, "ShuffleNetV2 x1.0: channel split (Split/Slice), "
                         "channel shuffle (Reshape, Transpose, Reshape), depthwise"),
    "densenet121": cnn(tvm.densenet121, "DenseNet-121: dense blocks of growing Concat, BN-ReLU before convs "
                       "(not foldable into the previous conv), AveragePool 2x2 transitions"),
    "regnet_y_400mf": cnn(tvm.regnet_y_400mf, "RegNetY-400MF: grouped 3x3 convs (group width 8), SE"),
    "googlenet": cnn(eval_googlenet, "GoogLeNet: inception blocks, MaxPool ceil_mode, 5x5-as-3x3 branches"),
    "swin_t": fixed(tvm.swin_t, "Swin-T: shifted-window attention (roll as Slice+Concat, window partition "
                    "by Reshape/Transpose), relative position bias, patch merging"),
    "resnext50_32x4d": cnn(tvm.resnext50_32x4d, "ResNeXt-50 32x4d: grouped 3x3 convs (32 groups of 4-32 channels)"),
    "inception_v3": cnn(eval_inception_v3, "Inception-v3: 1x7/7x1 factorized convs, AvgPool 3x3/1 branches",
                        sizes=((299, 299), (224, 256))),
    "mnasnet1_0": cnn(tvm.mnasnet1_0, "MNASNet 1.0: inverted residuals with 5x5 depthwise, no SE"),
    "deeplabv3_mbv3": segmentation(tvm.segmentation.deeplabv3_mobilenet_v3_large,
                                   "DeepLabV3 on MobileNetV3-Large: dilated depthwise, ASPP (dilated 3x3, "
                                   "global pool branch), bilinear Resize to the input"),
    "lraspp_mbv3": segmentation(tvm.segmentation.lraspp_mobilenet_v3_large,
                                "LR-ASPP on MobileNetV3-Large: sigmoid gate from a global pool, two Resizes"),
    "r3d_18": video(tvm.video.r3d_18, "R3D-18: 3x3x3 Conv3d, BatchNorm3d, adaptive 3-D average pool"),
    "efficientnet_v2_s": cnn(tvm.efficientnet_v2_s, "EfficientNetV2-S: fused MBConv (3x3 expand convs), SiLU, SE",
                             sizes=((224, 224), (192, 160))),
    "mobilenet_v3_large": cnn(tvm.mobilenet_v3_large, "MobileNetV3-Large: hardswish, SE, 5x5 depthwise"),
    "regnet_x_400mf": cnn(tvm.regnet_x_400mf, "RegNetX-400MF: grouped 3x3 (group width 16), no SE"),
    # torch.onnx exports adaptive_avg_pool2d to 6x6 only for a static input size.
    "alexnet": fixed(tvm.alexnet, "AlexNet: 11x11/4 stem, MaxPool 3x3/2, adaptive average pool to 6x6, large Gemms"),
    "fcn_resnet50": segmentation(tvm.segmentation.fcn_resnet50,
                                 "FCN on a dilated ResNet-50: 3x3 at dilations 2 and 4, Resize to the input"),
    "r2plus1d_18": video(tvm.video.r2plus1d_18, "R(2+1)D-18: 3-D convolutions factorized as 1x3x3 then 3x1x1"),
    "mc3_18": video(tvm.video.mc3_18, "MC3-18: 3-D convolutions in the first stages, 2-D-like (1x3x3) after"),
    "maxvit_t": fixed(tvm.maxvit_t, "MaxViT-T: MBConv with SE, block and grid attention (window partitions by "
                      "reshape/permute), relative position bias"),
    "s3d": video224(tvm.video.s3d, "S3D: separable 3-D convolutions (1x3x3 then 3x1x1), MaxPool3d, "
                    "AvgPool3d 2x7x7, inception blocks"),
    "vit_b_16": fixed(vit_b_16, "ViT-B/16: 16x16 patchify conv, 12 encoder layers (MultiheadAttention), "
                      "class token"),
}


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    out = os.path.abspath(sys.argv[1])
    os.makedirs(out, exist_ok=True)
    base.OUT = out
    base.MAX_BYTES = 1 << 40
    names = sys.argv[2:] or list(SPECS)
    mpath = os.path.join(out, "manifest.json")
    man = json.load(open(mpath)) if os.path.exists(mpath) and sys.argv[2:] else {"models": {}}
    man["generator"] = {"script": "scripts/export_zoo.py", "torch": torch.__version__,
                        "note": "torchvision architectures, default initialization, seeded"}
    for name in names:
        seed = 100 + list(SPECS).index(name)
        man["models"][name] = base.export(name, SPECS[name], seed)
        with open(mpath, "w") as f:
            json.dump(man, f, indent=1)
            f.write("\n")


if __name__ == "__main__":
    main()
