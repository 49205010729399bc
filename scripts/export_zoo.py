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


def image(make, note, outputs, bn, trace, b1, alt):
    """A model over images of any size: trace, b1 and alt are (batch,
    height, width)."""
    hw = lambda b: dict(batch=b[0], height=b[1], width=b[2])
    return dict(make=make, opset=17, inputs=IMG, outputs=outputs, bn=bn, trace=hw(trace),
                cases=dict(b1=hw(b1), alt=hw(alt)), feed=base.img_inputs, note=note)


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


class ConvBNSiLU(torch.nn.Module):
    def __init__(self, c1, c2, k=1, s=1, p=None):
        super().__init__()
        self.conv = torch.nn.Conv2d(c1, c2, k, s, k // 2 if p is None else p, bias=False)
        self.bn = torch.nn.BatchNorm2d(c2)
        self.act = torch.nn.SiLU()

    def forward(self, x):
        return self.act(self.bn(self.conv(x)))


class Bottleneck(torch.nn.Module):
    def __init__(self, c, shortcut=True):
        super().__init__()
        self.cv1, self.cv2, self.add = ConvBNSiLU(c, c, 1), ConvBNSiLU(c, c, 3), shortcut

    def forward(self, x):
        y = self.cv2(self.cv1(x))
        return x + y if self.add else y


class C3(torch.nn.Module):
    def __init__(self, c1, c2, n=1, shortcut=True):
        super().__init__()
        h = c2 // 2
        self.cv1, self.cv2, self.cv3 = ConvBNSiLU(c1, h), ConvBNSiLU(c1, h), ConvBNSiLU(2 * h, c2)
        self.m = torch.nn.Sequential(*(Bottleneck(h, shortcut) for _ in range(n)))

    def forward(self, x):
        return self.cv3(torch.cat((self.m(self.cv1(x)), self.cv2(x)), 1))


class SPPF(torch.nn.Module):
    def __init__(self, c1, c2):
        super().__init__()
        self.cv1, self.cv2 = ConvBNSiLU(c1, c1 // 2), ConvBNSiLU(c1 * 2, c2)
        self.m = torch.nn.MaxPool2d(5, 1, 2)

    def forward(self, x):
        x = self.cv1(x)
        y1 = self.m(x)
        y2 = self.m(y1)
        return self.cv2(torch.cat((x, y1, y2, self.m(y2)), 1))


class YoloV5s(torch.nn.Module):
    """YOLOv5s's layers as the ultralytics model builds them (width 0.5,
    depth 0.33), written out here: no package to install. The detect head
    stops at the sigmoid, before the grid decode."""

    def __init__(self, classes=80):
        super().__init__()
        C = ConvBNSiLU
        self.b0, self.b1, self.b2 = C(3, 32, 6, 2, 2), C(32, 64, 3, 2), C3(64, 64, 1)
        self.b3, self.b4 = C(64, 128, 3, 2), C3(128, 128, 2)
        self.b5, self.b6 = C(128, 256, 3, 2), C3(256, 256, 3)
        self.b7, self.b8, self.b9 = C(256, 512, 3, 2), C3(512, 512, 1), SPPF(512, 512)
        self.h10, self.h13 = C(512, 256), C3(512, 256, 1, False)
        self.h14, self.h17 = C(256, 128), C3(256, 128, 1, False)
        self.h18, self.h20 = C(128, 128, 3, 2), C3(256, 256, 1, False)
        self.h21, self.h23 = C(256, 256, 3, 2), C3(512, 512, 1, False)
        self.up = torch.nn.Upsample(scale_factor=2, mode="nearest")
        self.no = classes + 5
        self.det = torch.nn.ModuleList(torch.nn.Conv2d(c, 3 * self.no, 1) for c in (128, 256, 512))

    def forward(self, x):
        x = self.b2(self.b1(self.b0(x)))
        p3 = self.b4(self.b3(x))
        p4 = self.b6(self.b5(p3))
        x10 = self.h10(self.b9(self.b8(self.b7(p4))))
        x14 = self.h14(self.h13(torch.cat((self.up(x10), p4), 1)))
        o3 = self.h17(torch.cat((self.up(x14), p3), 1))
        o4 = self.h20(torch.cat((self.h18(o3), x14), 1))
        o5 = self.h23(torch.cat((self.h21(o4), x10), 1))
        outs = []
        for conv, o in zip(self.det, (o3, o4, o5)):
            y = conv(o)
            b, _, h, w = y.shape
            y = y.view(b, 3, self.no, h, w).permute(0, 1, 3, 4, 2).sigmoid()
            outs.append(y.reshape(b, -1, self.no))
        return torch.cat(outs, 1)


class FirstOutput(torch.nn.Module):
    """A model's first output alone (torchaudio's return tuples)."""

    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, x):
        return self.m(x)[0]


class ConformerFull(torch.nn.Module):
    """torchaudio's Conformer over unpadded input: every row's length is the
    sequence's (the padding mask is still built and applied)."""

    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, x):
        lengths = torch.ones(x.shape[0], dtype=torch.int64) * x.shape[1]
        return self.m(x, lengths)[0]


class WhisperEncoder(torch.nn.Module):
    """Whisper-tiny's encoder's layers (written out): two Conv1d with GELU
    (the second stride 2), sinusoidal positions sliced to the length,
    four pre-norm blocks of nn.MultiheadAttention (6 heads of 64) and a
    GELU MLP, a final LayerNorm."""

    def __init__(self, mels=80, width=384, heads=6, layers=4, ctx=1500):
        super().__init__()
        self.conv1 = torch.nn.Conv1d(mels, width, 3, padding=1)
        self.conv2 = torch.nn.Conv1d(width, width, 3, stride=2, padding=1)
        t = torch.arange(ctx, dtype=torch.float32)[:, None]
        inv = torch.exp(-torch.log(torch.tensor(10000.0)) * torch.arange(width // 2) / (width // 2 - 1))
        self.register_buffer("pos", torch.cat([torch.sin(t * inv), torch.cos(t * inv)], 1))
        self.blocks = torch.nn.ModuleList(WhisperBlock(width, heads) for _ in range(layers))
        self.ln = torch.nn.LayerNorm(width)

    def forward(self, x):
        x = torch.nn.functional.gelu(self.conv1(x))
        x = torch.nn.functional.gelu(self.conv2(x)).permute(0, 2, 1)
        x = x + self.pos[: x.shape[1]]
        for b in self.blocks:
            x = b(x)
        return self.ln(x)


class WhisperBlock(torch.nn.Module):
    def __init__(self, width, heads):
        super().__init__()
        self.ln1, self.ln2 = torch.nn.LayerNorm(width), torch.nn.LayerNorm(width)
        self.attn = torch.nn.MultiheadAttention(width, heads, batch_first=True)
        self.mlp = torch.nn.Sequential(torch.nn.Linear(width, 4 * width), torch.nn.GELU(), torch.nn.Linear(4 * width, width))

    def forward(self, x):
        h = self.ln1(x)
        x = x + self.attn(h, h, h, need_weights=False)[0]
        return x + self.mlp(self.ln2(x))


class T5Encoder(torch.nn.Module):
    """T5 v1.1's encoder's layers (written out, the small size's widths,
    four layers): RMS norms by pow/mean/rsqrt, unscaled attention with a
    bucketed relative position bias (log, floor by cast, min, where,
    abs), gated-GELU feed-forward."""

    def __init__(self, vocab=1000, width=512, heads=8, ff=1024, layers=4, buckets=32, max_dist=128):
        super().__init__()
        self.emb = torch.nn.Embedding(vocab, width)
        self.rel = torch.nn.Embedding(buckets, heads)
        self.heads, self.buckets, self.max_dist = heads, buckets, max_dist
        self.layers = torch.nn.ModuleList(T5Layer(width, heads, ff) for _ in range(layers))
        self.norm = T5Norm(width)

    def bias(self, n):
        pos = torch.arange(n)
        rel = pos[None, :] - pos[:, None]
        half = self.buckets // 2
        out = (rel > 0).long() * half
        rel = rel.abs()
        exact = half // 2
        large = exact + (torch.log(rel.float() / exact) / torch.log(torch.tensor(self.max_dist / exact))
                         * (half - exact)).long()
        large = torch.min(large, torch.full_like(large, half - 1))
        out = out + torch.where(rel < exact, rel, large)
        return self.rel(out).permute(2, 0, 1)[None]

    def forward(self, tokens):
        x = self.emb(tokens)
        b = self.bias(tokens.shape[1])
        for layer in self.layers:
            x = layer(x, b)
        return self.norm(x)


class T5Norm(torch.nn.Module):
    def __init__(self, width):
        super().__init__()
        self.w = torch.nn.Parameter(torch.ones(width))

    def forward(self, x):
        return self.w * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6))


class T5Layer(torch.nn.Module):
    def __init__(self, width, heads, ff):
        super().__init__()
        self.heads = heads
        self.n1, self.n2 = T5Norm(width), T5Norm(width)
        self.qkv = torch.nn.Linear(width, 3 * width, bias=False)
        self.o = torch.nn.Linear(width, width, bias=False)
        self.wi0 = torch.nn.Linear(width, ff, bias=False)
        self.wi1 = torch.nn.Linear(width, ff, bias=False)
        self.wo = torch.nn.Linear(ff, width, bias=False)

    def forward(self, x, bias):
        b, n, w = x.shape
        q, k, v = self.qkv(self.n1(x)).view(b, n, 3, self.heads, w // self.heads).permute(2, 0, 3, 1, 4)
        a = torch.softmax(q @ k.transpose(-1, -2) + bias, -1) @ v
        x = x + self.o(a.transpose(1, 2).reshape(b, n, w))
        h = self.n2(x)
        return x + self.wo(torch.nn.functional.gelu(self.wi0(h), approximate="tanh") * self.wi1(h))


class ResBlock(torch.nn.Module):
    """A diffusion UNet's residual block: GroupNorm(32) and SiLU before
    each 3x3 convolution, the timestep embedding added between them, a 1x1
    shortcut where the channels change."""

    def __init__(self, cin, cout, temb):
        super().__init__()
        self.n1, self.n2 = torch.nn.GroupNorm(32, cin), torch.nn.GroupNorm(32, cout)
        self.c1, self.c2 = torch.nn.Conv2d(cin, cout, 3, padding=1), torch.nn.Conv2d(cout, cout, 3, padding=1)
        self.t = torch.nn.Linear(temb, cout)
        self.skip = torch.nn.Conv2d(cin, cout, 1) if cin != cout else torch.nn.Identity()

    def forward(self, x, e):
        h = self.c1(torch.nn.functional.silu(self.n1(x)))
        h = h + self.t(torch.nn.functional.silu(e))[:, :, None, None]
        h = self.c2(torch.nn.functional.silu(self.n2(h)))
        return self.skip(x) + h


class AttnBlock(torch.nn.Module):
    """Self-attention over a feature map's positions (GroupNorm, one
    projection to q, k and v, 8 heads), added back."""

    def __init__(self, c, heads=8):
        super().__init__()
        self.n = torch.nn.GroupNorm(32, c)
        self.attn = torch.nn.MultiheadAttention(c, heads, batch_first=True)

    def forward(self, x):
        b, c, h, w = x.shape
        t = self.n(x).flatten(2).transpose(1, 2)
        a = self.attn(t, t, t, need_weights=False)[0]
        return x + a.transpose(1, 2).reshape(b, c, h, w)


class DiffusionUNet(torch.nn.Module):
    """A latent diffusion UNet at small widths (Stable Diffusion's layout
    without text conditioning): sinusoidal timestep embedding (Sin, Cos)
    through a SiLU MLP, three levels of 64, 128 and 256 channels with two
    residual blocks each, attention at the two lower levels, stride-2
    convolutions down, nearest 2x upsampling and skip concatenations up,
    a GroupNorm-SiLU-conv head."""

    def __init__(self, cin=4, chans=(64, 128, 256), temb=256):
        super().__init__()
        self.temb = temb
        self.mlp = torch.nn.Sequential(torch.nn.Linear(chans[0], temb), torch.nn.SiLU(), torch.nn.Linear(temb, temb))
        self.inp = torch.nn.Conv2d(cin, chans[0], 3, padding=1)
        self.down, self.downattn, self.downsample = torch.nn.ModuleList(), torch.nn.ModuleList(), torch.nn.ModuleList()
        c, skips = chans[0], [chans[0]]
        for i, co in enumerate(chans):
            blocks = torch.nn.ModuleList([ResBlock(c, co, temb), ResBlock(co, co, temb)])
            self.down.append(blocks)
            self.downattn.append(torch.nn.ModuleList([AttnBlock(co) for _ in blocks]) if i > 0 else torch.nn.ModuleList())
            c = co
            skips += [co, co]
            if i < len(chans) - 1:
                self.downsample.append(torch.nn.Conv2d(c, c, 3, stride=2, padding=1))
                skips.append(c)
        self.mid1, self.midattn, self.mid2 = ResBlock(c, c, temb), AttnBlock(c), ResBlock(c, c, temb)
        self.up, self.upattn, self.upsample = torch.nn.ModuleList(), torch.nn.ModuleList(), torch.nn.ModuleList()
        for i, co in reversed(list(enumerate(chans))):
            blocks = torch.nn.ModuleList()
            for _ in range(3):
                blocks.append(ResBlock(c + skips.pop(), co, temb))
                c = co
            self.up.append(blocks)
            self.upattn.append(torch.nn.ModuleList([AttnBlock(co) for _ in blocks]) if i > 0 else torch.nn.ModuleList())
            if i > 0:
                self.upsample.append(torch.nn.Conv2d(c, c, 3, padding=1))
        self.out_norm, self.out = torch.nn.GroupNorm(32, c), torch.nn.Conv2d(c, cin, 3, padding=1)

    def forward(self, x, t):
        half = self.mlp[0].in_features // 2
        freqs = torch.exp(-torch.log(torch.tensor(10000.0)) * torch.arange(half, dtype=torch.float32) / half)
        a = t[:, None] * freqs[None]
        e = self.mlp(torch.cat([torch.sin(a), torch.cos(a)], 1))
        h = self.inp(x)
        hs = [h]
        for i, blocks in enumerate(self.down):
            for j, blk in enumerate(blocks):
                h = blk(h, e)
                if len(self.downattn[i]):
                    h = self.downattn[i][j](h)
                hs.append(h)
            if i < len(self.downsample):
                h = self.downsample[i](h)
                hs.append(h)
        h = self.mid2(self.midattn(self.mid1(h, e)), e)
        for i, blocks in enumerate(self.up):
            for j, blk in enumerate(blocks):
                h = blk(torch.cat([h, hs.pop()], 1), e)
                if len(self.upattn[i]):
                    h = self.upattn[i][j](h)
            if i < len(self.upsample):
                h = self.upsample[i](torch.nn.functional.interpolate(h, scale_factor=2.0, mode="nearest"))
        return self.out(torch.nn.functional.silu(self.out_norm(h)))


class StyleTransfer(torch.nn.Module):
    """Johnson et al.'s fast neural style network (the PyTorch examples'
    TransformerNet): reflection padding before every convolution,
    InstanceNorm with affine parameters, ReLU, 9x9 convolutions at both
    ends, two stride-2 convolutions down, five residual blocks at 128
    channels, nearest 2x upsampling before the convolutions up."""

    def __init__(self):
        super().__init__()
        def conv(cin, cout, k, stride=1, up=False, norm=True, relu=True):
            layers = [torch.nn.Upsample(scale_factor=2, mode="nearest")] if up else []
            layers += [torch.nn.ReflectionPad2d(k // 2), torch.nn.Conv2d(cin, cout, k, stride)]
            if norm:
                layers.append(torch.nn.InstanceNorm2d(cout, affine=True))
            if relu:
                layers.append(torch.nn.ReLU())
            return torch.nn.Sequential(*layers)
        self.down = torch.nn.Sequential(conv(3, 32, 9), conv(32, 64, 3, 2), conv(64, 128, 3, 2))
        self.res = torch.nn.ModuleList(
            [torch.nn.Sequential(conv(128, 128, 3), conv(128, 128, 3, relu=False)) for _ in range(5)])
        self.up = torch.nn.Sequential(conv(128, 64, 3, up=True), conv(64, 32, 3, up=True),
                                      conv(32, 3, 9, norm=False, relu=False))

    def forward(self, x):
        h = self.down(x)
        for r in self.res:
            h = h + r(h)
        return self.up(h)


class DoubleConv(torch.nn.Sequential):
    def __init__(self, cin, cout):
        super().__init__(torch.nn.Conv2d(cin, cout, 3, padding=1, bias=False), torch.nn.BatchNorm2d(cout),
                         torch.nn.ReLU(), torch.nn.Conv2d(cout, cout, 3, padding=1, bias=False),
                         torch.nn.BatchNorm2d(cout), torch.nn.ReLU())


class SegUNet(torch.nn.Module):
    """Ronneberger's U-Net at half width (32 to 512 channels, 4 levels):
    two 3x3 Conv-BN-ReLU per level, MaxPool 2x2 down, ConvTranspose 2x2
    stride 2 up, skip Concats, a 1x1 head onto 2 classes."""

    def __init__(self, chans=(32, 64, 128, 256, 512), classes=2):
        super().__init__()
        self.inc = DoubleConv(3, chans[0])
        self.downs = torch.nn.ModuleList([DoubleConv(a, b) for a, b in zip(chans, chans[1:])])
        self.ups = torch.nn.ModuleList([torch.nn.ConvTranspose2d(b, a, 2, stride=2) for a, b in zip(chans, chans[1:])])
        self.upconvs = torch.nn.ModuleList([DoubleConv(2 * a, a) for a in chans[:-1]])
        self.head = torch.nn.Conv2d(chans[0], classes, 1)

    def forward(self, x):
        hs = [self.inc(x)]
        for d in self.downs:
            hs.append(d(torch.nn.functional.max_pool2d(hs[-1], 2)))
        h = hs.pop()
        for up, conv in reversed(list(zip(self.ups, self.upconvs))):
            h = conv(torch.cat([hs.pop(), up(h)], 1))
        return self.head(h)


class ESPCN(torch.nn.Module):
    """Shi et al.'s sub-pixel super-resolution (the PyTorch examples'
    model): 5x5 and 3x3 convolutions with tanh on the luma channel, then
    PixelShuffle (DepthToSpace) by 3."""

    def __init__(self, r=3):
        super().__init__()
        self.c1, self.c2 = torch.nn.Conv2d(1, 64, 5, padding=2), torch.nn.Conv2d(64, 32, 3, padding=1)
        self.c3 = torch.nn.Conv2d(32, r * r, 3, padding=1)
        self.shuffle = torch.nn.PixelShuffle(r)

    def forward(self, x):
        return self.shuffle(self.c3(torch.tanh(self.c2(torch.tanh(self.c1(x))))))


class TNet(torch.nn.Module):
    """PointNet's transform network: shared MLPs (Conv1d 1x1 with BN),
    max over points, a k x k matrix added to the identity."""

    def __init__(self, k):
        super().__init__()
        self.k = k
        self.conv = torch.nn.Sequential(
            torch.nn.Conv1d(k, 64, 1), torch.nn.BatchNorm1d(64), torch.nn.ReLU(),
            torch.nn.Conv1d(64, 128, 1), torch.nn.BatchNorm1d(128), torch.nn.ReLU(),
            torch.nn.Conv1d(128, 1024, 1), torch.nn.BatchNorm1d(1024), torch.nn.ReLU())
        self.fc = torch.nn.Sequential(
            torch.nn.Linear(1024, 512), torch.nn.BatchNorm1d(512), torch.nn.ReLU(),
            torch.nn.Linear(512, 256), torch.nn.BatchNorm1d(256), torch.nn.ReLU(), torch.nn.Linear(256, k * k))

    def forward(self, x):
        m = self.fc(torch.max(self.conv(x), 2)[0])
        return m.view(-1, self.k, self.k) + torch.eye(self.k)


class PointNet(torch.nn.Module):
    """PointNet classification over [batch, 3, points]: input and feature
    transforms (batched 3x3 and 64x64 products), shared MLPs as Conv1d
    1x1 with BN, a global max over points, an MLP head, LogSoftmax."""

    def __init__(self, classes=40):
        super().__init__()
        self.t3, self.t64 = TNet(3), TNet(64)
        self.c1 = torch.nn.Sequential(torch.nn.Conv1d(3, 64, 1), torch.nn.BatchNorm1d(64), torch.nn.ReLU())
        self.c2 = torch.nn.Sequential(
            torch.nn.Conv1d(64, 128, 1), torch.nn.BatchNorm1d(128), torch.nn.ReLU(),
            torch.nn.Conv1d(128, 1024, 1), torch.nn.BatchNorm1d(1024))
        self.head = torch.nn.Sequential(
            torch.nn.Linear(1024, 512), torch.nn.BatchNorm1d(512), torch.nn.ReLU(),
            torch.nn.Linear(512, 256), torch.nn.BatchNorm1d(256), torch.nn.ReLU(), torch.nn.Linear(256, classes))

    def forward(self, x):
        x = torch.bmm(self.t3(x), x)
        x = self.c1(x)
        x = torch.bmm(self.t64(x), x)
        x = torch.max(self.c2(x), 2)[0]
        return torch.log_softmax(self.head(x), 1)


class WaveNet(torch.nn.Module):
    """A WaveNet-style stack over [batch, 1, samples]: causal dilated
    Conv1d k2 (left padding by Pad), gated tanh * sigmoid, 1x1 residual
    and skip convolutions, dilations 1 to 512 twice, a ReLU-1x1 head."""

    def __init__(self, res=64, skip=128, layers=10, stacks=2):
        super().__init__()
        self.inp = torch.nn.Conv1d(1, res, 1)
        self.dil = [2 ** i for i in range(layers)] * stacks
        self.filt = torch.nn.ModuleList([torch.nn.Conv1d(res, 2 * res, 2, dilation=d) for d in self.dil])
        self.res = torch.nn.ModuleList([torch.nn.Conv1d(res, res, 1) for _ in self.dil])
        self.skip = torch.nn.ModuleList([torch.nn.Conv1d(res, skip, 1) for _ in self.dil])
        self.out = torch.nn.Sequential(torch.nn.ReLU(), torch.nn.Conv1d(skip, skip, 1), torch.nn.ReLU(),
                                       torch.nn.Conv1d(skip, 256, 1))

    def forward(self, x):
        h = self.inp(x)
        s = 0
        for d, f, r, k in zip(self.dil, self.filt, self.res, self.skip):
            t, g = f(torch.nn.functional.pad(h, (d, 0))).chunk(2, 1)
            z = torch.tanh(t) * torch.sigmoid(g)
            h = h + r(z)
            s = s + k(z)
        return self.out(s)


class DLRM(torch.nn.Module):
    """A DLRM-style recommender: a bottom MLP over dense features, 8
    embedding tables (Gather), the pairwise dot products of the 9 vectors
    (a batched product), their lower triangle by a constant index
    (Gather), a top MLP and a sigmoid."""

    def __init__(self, dense=13, tables=8, rows=20000, dim=64):
        super().__init__()
        self.bottom = torch.nn.Sequential(torch.nn.Linear(dense, 512), torch.nn.ReLU(), torch.nn.Linear(512, 256),
                                          torch.nn.ReLU(), torch.nn.Linear(256, dim), torch.nn.ReLU())
        self.emb = torch.nn.ModuleList([torch.nn.Embedding(rows, dim) for _ in range(tables)])
        n = tables + 1
        li, lj = torch.tril_indices(n, n, -1)
        self.register_buffer("flat", li * n + lj)
        self.top = torch.nn.Sequential(torch.nn.Linear(dim + len(li), 512), torch.nn.ReLU(),
                                       torch.nn.Linear(512, 256), torch.nn.ReLU(), torch.nn.Linear(256, 1))

    def forward(self, dense, ids):
        x = self.bottom(dense)
        t = torch.stack([x] + [e(ids[:, i]) for i, e in enumerate(self.emb)], 1)
        z = torch.bmm(t, t.transpose(1, 2)).flatten(1)[:, self.flat]
        return torch.sigmoid(self.top(torch.cat([x, z], 1)))


def dlrm_inputs(rng, b):
    import numpy as np
    return {"dense": np.log1p(rng.exponential(3.0, size=(b["batch"], 13))).astype(np.float32),
            "ids": base.tokens(rng, (b["batch"], 8), 20000)}


class MobileViTBlock(torch.nn.Module):
    """MobileViT's block: a 3x3 and a 1x1 convolution, the feature map
    unfolded into 2x2 patches (reshape and transpose: each of the 4 pixel
    positions a sequence over the patches), two transformer layers per
    position, folded back, a 1x1 convolution, concatenated with the input
    and fused by a 3x3 convolution."""

    def __init__(self, c, d, layers=2, heads=4):
        super().__init__()
        self.local = torch.nn.Sequential(torch.nn.Conv2d(c, c, 3, padding=1, bias=False), torch.nn.BatchNorm2d(c),
                                         torch.nn.SiLU(), torch.nn.Conv2d(c, d, 1, bias=False))
        self.tf = torch.nn.ModuleList([torch.nn.TransformerEncoderLayer(d, heads, 2 * d, 0.0, batch_first=True,
                                                                        norm_first=True, activation="gelu")
                                       for _ in range(layers)])
        self.norm = torch.nn.LayerNorm(d)
        self.proj = torch.nn.Sequential(torch.nn.Conv2d(d, c, 1, bias=False), torch.nn.BatchNorm2d(c), torch.nn.SiLU())
        self.fuse = torch.nn.Sequential(torch.nn.Conv2d(2 * c, c, 3, padding=1, bias=False), torch.nn.BatchNorm2d(c),
                                        torch.nn.SiLU())

    def forward(self, x):
        b, _, h, w = x.shape
        y = self.local(x)
        d = y.shape[1]
        # [b, d, h, w] -> [b*4, (h/2)*(w/2), d]: sequences of patches per pixel position
        t = y.reshape(b, d, h // 2, 2, w // 2, 2).permute(0, 3, 5, 2, 4, 1).reshape(b * 4, (h // 2) * (w // 2), d)
        for layer in self.tf:
            t = layer(t)
        t = self.norm(t)
        y = t.reshape(b, 2, 2, h // 2, w // 2, d).permute(0, 5, 3, 1, 4, 2).reshape(b, d, h, w)
        return self.fuse(torch.cat([x, self.proj(y)], 1))


class MobileViTS(torch.nn.Module):
    """A MobileViT at small widths (layers written out): MobileNetV2
    inverted residuals down to 32x32, MobileViT blocks at 32x32, 16x16
    and 8x8 (96, 120 and 144 wide), a classifier."""

    def __init__(self, classes=1000):
        super().__init__()
        def mv2(cin, cout, stride, e=4):
            return tvm.mobilenetv2.InvertedResidual(cin, cout, stride, e)
        self.stem = torch.nn.Sequential(torch.nn.Conv2d(3, 16, 3, 2, 1, bias=False), torch.nn.BatchNorm2d(16), torch.nn.SiLU())
        self.body = torch.nn.Sequential(
            mv2(16, 32, 1), mv2(32, 48, 2), mv2(48, 48, 1), mv2(48, 64, 2),
            MobileViTBlock(64, 96), mv2(64, 80, 2), MobileViTBlock(80, 120), mv2(80, 96, 2), MobileViTBlock(96, 144))
        self.head = torch.nn.Sequential(torch.nn.Conv2d(96, 384, 1, bias=False), torch.nn.BatchNorm2d(384), torch.nn.SiLU(),
                                        torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), torch.nn.Linear(384, classes))

    def forward(self, x):
        return self.head(self.body(self.stem(x)))


class GCN(torch.nn.Module):
    """A two-layer graph convolutional network over a dense normalized
    adjacency (Kipf and Welling's, on a Cora-sized graph): A·X·W1, ReLU,
    A·H·W2, LogSoftmax per node."""

    def __init__(self, feats=1433, hidden=64, classes=7):
        super().__init__()
        self.w1, self.w2 = torch.nn.Linear(feats, hidden), torch.nn.Linear(hidden, classes)

    def forward(self, adj, x):
        h = torch.relu(adj @ self.w1(x))
        return torch.log_softmax(adj @ self.w2(h), -1)


def gcn_inputs(rng, b):
    import numpy as np
    n = b["nodes"]
    a = (rng.random((n, n)) < 4.0 / n).astype(np.float32)
    a = np.maximum(a, a.T) + np.eye(n, dtype=np.float32)
    d = 1 / np.sqrt(a.sum(1))
    return {"adj": (a * d[:, None] * d[None, :]).astype(np.float32),
            "x": (rng.random((n, 1433)) < 0.02).astype(np.float32)}


class MixerBlock(torch.nn.Module):
    def __init__(self, tokens, dim, tok_hidden, ch_hidden):
        super().__init__()
        self.n1, self.n2 = torch.nn.LayerNorm(dim), torch.nn.LayerNorm(dim)
        self.tok = torch.nn.Sequential(torch.nn.Linear(tokens, tok_hidden), torch.nn.GELU(), torch.nn.Linear(tok_hidden, tokens))
        self.ch = torch.nn.Sequential(torch.nn.Linear(dim, ch_hidden), torch.nn.GELU(), torch.nn.Linear(ch_hidden, dim))

    def forward(self, x):
        x = x + self.tok(self.n1(x).transpose(1, 2)).transpose(1, 2)
        return x + self.ch(self.n2(x))


class Mixer(torch.nn.Module):
    """MLP-Mixer S/16 at 224x224 (8 blocks): a 16x16 patchify convolution,
    token-mixing MLPs over the 196 patches (on transposed activations)
    and channel-mixing MLPs, a mean over patches."""

    def __init__(self, dim=512, blocks=8, classes=1000):
        super().__init__()
        self.patch = torch.nn.Conv2d(3, dim, 16, 16)
        self.blocks = torch.nn.Sequential(*[MixerBlock(196, dim, 256, 2048) for _ in range(blocks)])
        self.norm, self.head = torch.nn.LayerNorm(dim), torch.nn.Linear(dim, classes)

    def forward(self, x):
        x = self.patch(x).flatten(2).transpose(1, 2)
        return self.head(self.norm(self.blocks(x)).mean(1))


class CLIPText(torch.nn.Module):
    """CLIP's text encoder at small widths (layers written out): token and
    position embeddings, pre-norm transformer layers with a causal mask
    (nn.MultiheadAttention), the final LayerNorm, the feature at each
    sequence's end token (the largest id: argmax, then an indexed row)
    projected."""

    def __init__(self, vocab=4096, width=256, heads=4, layers=4, ctx=77, out=256):
        super().__init__()
        self.tok, self.pos = torch.nn.Embedding(vocab, width), torch.nn.Parameter(0.01 * torch.randn(ctx, width))
        self.layers = torch.nn.ModuleList([torch.nn.TransformerEncoderLayer(width, heads, 4 * width, 0.0, batch_first=True,
                                                                            norm_first=True, activation="gelu")
                                           for _ in range(layers)])
        self.ln, self.proj = torch.nn.LayerNorm(width), torch.nn.Linear(width, out, bias=False)

    def forward(self, tokens):
        n = tokens.shape[1]
        x = self.tok(tokens) + self.pos[:n]
        mask = torch.triu(torch.full((n, n), float("-inf")), 1)
        for layer in self.layers:
            x = layer(x, src_mask=mask)
        x = self.ln(x)
        end = x[torch.arange(x.shape[0]), tokens.argmax(-1)]
        return self.proj(end)


def clip_inputs(rng, b):
    import numpy as np
    t = rng.integers(1, 4000, size=(b["batch"], b["seq"]), dtype=np.int64)
    for i in range(b["batch"]):  # the end token (the largest id) at a different place per row
        t[i, b["seq"] - 1 - 2 * i] = 4095
    return {"tokens": t}


class ConvGRU(torch.nn.Module):
    def __init__(self, hidden, inp):
        super().__init__()
        self.z = torch.nn.Conv2d(hidden + inp, hidden, 3, padding=1)
        self.r = torch.nn.Conv2d(hidden + inp, hidden, 3, padding=1)
        self.q = torch.nn.Conv2d(hidden + inp, hidden, 3, padding=1)

    def forward(self, h, x):
        hx = torch.cat([h, x], 1)
        z, r = torch.sigmoid(self.z(hx)), torch.sigmoid(self.r(hx))
        q = torch.tanh(self.q(torch.cat([r * h, x], 1)))
        return (1 - z) * h + z * q


class RAFTLite(torch.nn.Module):
    """An optical-flow model in RAFT's manner at small widths (layers
    written out): a shared feature encoder at 1/8, the all-pairs
    correlation volume (a batched product), a two-level pyramid
    (AvgPool), lookups of each level around the current flow by
    GridSample, and 4 iterations of a ConvGRU update predicting flow
    increments."""

    def __init__(self, dim=96, hidden=64, iters=4, radius=2):
        super().__init__()
        self.iters, self.r = iters, radius
        def enc():
            return torch.nn.Sequential(
                torch.nn.Conv2d(3, 32, 7, 2, 3), torch.nn.ReLU(), torch.nn.Conv2d(32, 64, 3, 2, 1), torch.nn.ReLU(),
                torch.nn.Conv2d(64, dim, 3, 2, 1), torch.nn.ReLU(), torch.nn.Conv2d(dim, dim, 1))
        self.fnet, self.cnet = enc(), enc()
        k = (2 * radius + 1) ** 2 * 2
        self.menc = torch.nn.Sequential(torch.nn.Conv2d(k + 2, 64, 3, padding=1), torch.nn.ReLU())
        self.gru = ConvGRU(hidden, 64 + dim)
        self.head = torch.nn.Sequential(torch.nn.Conv2d(hidden, 64, 3, padding=1), torch.nn.ReLU(), torch.nn.Conv2d(64, 2, 3, padding=1))

    def lookup(self, corr, flow, h, w):
        b = flow.shape[0]
        r = self.r
        d = torch.arange(-r, r + 1, dtype=torch.float32)
        dy, dx = torch.meshgrid(d, d, indexing="ij")
        delta = torch.stack([dx, dy], -1).reshape(1, 1, 1, -1, 2)
        ys, xs = torch.meshgrid(torch.arange(h, dtype=torch.float32), torch.arange(w, dtype=torch.float32), indexing="ij")
        coords = torch.stack([xs, ys], -1)[None] + flow.permute(0, 2, 3, 1)
        out = []
        for lvl, c in enumerate(corr):
            hh, ww = c.shape[-2:]
            p = (coords / (2 ** lvl))[:, :, :, None, :] + delta
            g = torch.stack([2 * p[..., 0] / (ww - 1) - 1, 2 * p[..., 1] / (hh - 1) - 1], -1)
            g = g.reshape(b * h * w, 1, -1, 2)
            s = torch.nn.functional.grid_sample(c, g, align_corners=True)
            out.append(s.reshape(b, h, w, -1).permute(0, 3, 1, 2))
        return torch.cat(out, 1)

    def forward(self, im1, im2):
        f1, f2 = self.fnet(im1), self.fnet(im2)
        b, d, h, w = f1.shape
        corr = torch.bmm(f1.flatten(2).transpose(1, 2), f2.flatten(2)) / d ** 0.5
        c0 = corr.reshape(b * h * w, 1, h, w)
        pyramid = [c0, torch.nn.functional.avg_pool2d(c0, 2, 2)]
        ctx = self.cnet(im1)
        hid, inp = torch.tanh(ctx[:, :64]), torch.relu(ctx)
        flow = torch.zeros(b, 2, h, w)
        for _ in range(self.iters):
            m = self.menc(torch.cat([self.lookup(pyramid, flow, h, w), flow], 1))
            hid = self.gru(hid, torch.cat([m, inp], 1))
            flow = flow + self.head(hid)
        return flow


def raft_inputs(rng, b):
    shape = (b["batch"], 3, b["height"], b["width"])
    return {"im1": base.signal(rng, shape), "im2": base.signal(rng, shape)}


class MiTBlock(torch.nn.Module):
    """SegFormer's transformer block: efficient self-attention whose keys
    and values come from the map reduced by a stride-R convolution, and a
    Mix-FFN (a 3x3 depthwise convolution between its two linears)."""

    def __init__(self, d, heads, sr):
        super().__init__()
        self.heads, self.sr = heads, sr
        self.n1, self.n2 = torch.nn.LayerNorm(d), torch.nn.LayerNorm(d)
        self.q, self.kv, self.o = torch.nn.Linear(d, d), torch.nn.Linear(d, 2 * d), torch.nn.Linear(d, d)
        if sr > 1:
            self.red, self.nr = torch.nn.Conv2d(d, d, sr, sr), torch.nn.LayerNorm(d)
        self.f1, self.f2 = torch.nn.Linear(d, 4 * d), torch.nn.Linear(4 * d, d)
        self.dw = torch.nn.Conv2d(4 * d, 4 * d, 3, padding=1, groups=4 * d)

    def forward(self, x, h, w):
        b, n, d = x.shape
        y = self.n1(x)
        q = self.q(y).reshape(b, n, self.heads, d // self.heads).transpose(1, 2)
        if self.sr > 1:
            y = y.transpose(1, 2).reshape(b, d, h, w)
            y = self.nr(self.red(y).flatten(2).transpose(1, 2))
        k, v = self.kv(y).reshape(b, -1, 2, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        a = torch.softmax(q @ k.transpose(-1, -2) / (d // self.heads) ** 0.5, -1) @ v
        x = x + self.o(a.transpose(1, 2).reshape(b, n, d))
        y = self.f1(self.n2(x)).transpose(1, 2).reshape(b, 4 * d, h, w)
        y = torch.nn.functional.gelu(self.dw(y)).flatten(2).transpose(1, 2)
        return x + self.f2(y)


class SegFormerB0(torch.nn.Module):
    """SegFormer-B0 (layers written out): four stages of overlapping patch
    embeddings (7x7/4, then 3x3/2 convolutions), MiT blocks with
    spatial-reduction attention (R = 8, 4, 2, 1) and Mix-FFNs, an all-MLP
    decoder upsampling every stage to 1/4 (bilinear) and fusing them."""

    def __init__(self, dims=(32, 64, 160, 256), heads=(1, 2, 5, 8), srs=(8, 4, 2, 1), depth=2, classes=19):
        super().__init__()
        self.embeds, self.norms, self.stages, self.outn = (torch.nn.ModuleList() for _ in range(4))
        cin = 3
        for i, d in enumerate(dims):
            k, st = (7, 4) if i == 0 else (3, 2)
            self.embeds.append(torch.nn.Conv2d(cin, d, k, st, k // 2))
            self.norms.append(torch.nn.LayerNorm(d))
            self.stages.append(torch.nn.ModuleList([MiTBlock(d, heads[i], srs[i]) for _ in range(depth)]))
            self.outn.append(torch.nn.LayerNorm(d))
            cin = d
        self.proj = torch.nn.ModuleList([torch.nn.Conv2d(d, 256, 1) for d in dims])
        self.fuse = torch.nn.Sequential(torch.nn.Conv2d(4 * 256, 256, 1, bias=False), torch.nn.BatchNorm2d(256), torch.nn.ReLU())
        self.cls = torch.nn.Conv2d(256, classes, 1)

    def forward(self, x):
        feats = []
        for emb, norm, blocks, on in zip(self.embeds, self.norms, self.stages, self.outn):
            x = emb(x)
            b, d, h, w = x.shape
            t = norm(x.flatten(2).transpose(1, 2))
            for blk in blocks:
                t = blk(t, h, w)
            x = on(t).transpose(1, 2).reshape(b, d, h, w)
            feats.append(x)
        size = feats[0].shape[-2:]
        ups = [torch.nn.functional.interpolate(p(f), size=size, mode="bilinear", align_corners=False)
               for p, f in zip(self.proj, feats)]
        return self.cls(self.fuse(torch.cat(ups[::-1], 1)))


def unet_inputs(rng, b):
    import numpy as np
    return {"x": base.signal(rng, (b["batch"], 4, b["height"], b["width"])),
            "t": (rng.integers(0, 1000, size=(b["batch"],))).astype(np.float32)}


def audio(make, note, inputs, outputs, trace, cases, shape, opset=17, bn=False):
    """An audio model: shape(binding) gives the input's shape."""
    return dict(make=make, opset=opset, inputs=inputs, outputs=outputs, bn=bn, trace=trace, cases=cases,
                feed=lambda rng, b: {list(inputs)[0]: base.signal(rng, shape(b))}, note=note)


def wav2vec2_base():
    import torchaudio.models as tam
    return FirstOutput(tam.wav2vec2_base())


def conformer_s():
    import torchaudio.models as tam
    return ConformerFull(tam.Conformer(input_dim=144, num_heads=4, ffn_dim=576, num_layers=16,
                                       depthwise_conv_kernel_size=31))


def conv_tasnet():
    import torchaudio.models as tam
    return tam.conv_tasnet_base(num_sources=2)


def deepspeech():
    import torchaudio.models as tam
    return tam.DeepSpeech(n_feature=80, n_hidden=1024)


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
    "yolov5s": cnn(YoloV5s, "YOLOv5s (layers written out): Conv-BN-SiLU, C3 blocks, SPPF (three MaxPool 5x5/1), "
                   "nearest Resize x2, Concat, three 1x1 detect heads, reshape/permute/sigmoid",
                   sizes=((320, 320), (256, 384))),
    "wav2vec2_base": audio(wav2vec2_base, "wav2vec 2.0 base (torchaudio): 7 strided Conv1d with GroupNorm and GELU, "
                           "feature projection, positional Conv1d k128 groups 16, 12 post-norm encoder layers",
                           {"wave": ["batch", "samples"]}, {"features": ["batch", "frames", 768]},
                           dict(batch=3, samples=12000), dict(b1=dict(batch=1, samples=16000),
                                                              alt=dict(batch=2, samples=9600)),
                           lambda b: (b["batch"], b["samples"])),
    "conformer_s": audio(conformer_s, "Conformer-S (torchaudio): 16 blocks of half-step FFNs, attention with a "
                         "length mask, GLU, depthwise Conv1d k31, BatchNorm1d, SiLU; 200 frames (torch 1.13's "
                         "export of its attention bakes the traced length into a Reshape)",
                         {"feats": ["batch", 200, 144]}, {"out": ["batch", 200, 144]},
                         dict(batch=3), dict(b1=dict(batch=1), alt=dict(batch=2)),
                         lambda b: (b["batch"], 200, 144), bn=True),
    "conv_tasnet": audio(conv_tasnet, "Conv-TasNet (torchaudio base): Conv1d k16/8 encoder, 3x8 dilated depthwise "
                         "Conv1d blocks with PReLU and global layer norm (GroupNorm 1), ConvTranspose1d decoder",
                         {"wave": ["batch", 1, "samples"]}, {"sources": ["batch", 2, "samples"]},
                         dict(batch=3, samples=6000), dict(b1=dict(batch=1, samples=16000),
                                                           alt=dict(batch=2, samples=8000)),
                         lambda b: (b["batch"], 1, b["samples"])),
    "deepspeech": audio(deepspeech, "DeepSpeech (torchaudio): three Linear+hardtanh layers, a bidirectional "
                        "relu RNN, log-softmax", {"feats": ["batch", 1, "frames", 80]},
                        {"logp": ["batch", "frames", 40]}, dict(batch=3, frames=90),
                        dict(b1=dict(batch=1, frames=200), alt=dict(batch=2, frames=120)),
                        lambda b: (b["batch"], 1, b["frames"], 80)),
    "whisper_enc": audio(WhisperEncoder, "Whisper-tiny's encoder (layers written out): Conv1d+GELU twice (stride 2), "
                         "positions sliced to the length, 4 pre-norm MultiheadAttention blocks (6 heads of 64)",
                         {"mel": ["batch", 80, "frames"]}, {"features": ["batch", "ctx", 384]},
                         dict(batch=3, frames=600), dict(b1=dict(batch=1, frames=1000), alt=dict(batch=2, frames=400)),
                         lambda b: (b["batch"], 80, b["frames"])),
    "diffusion_unet": dict(make=DiffusionUNet, opset=17, inputs={"x": ["batch", 4, "height", "width"], "t": ["batch"]},
                           outputs={"eps": ["batch", 4, "height", "width"]}, bn=False,
                           trace=dict(batch=3, height=16, width=24),
                           cases=dict(b1=dict(batch=1, height=32, width=32), alt=dict(batch=2, height=24, width=40)),
                           feed=unet_inputs,
                           note="A latent diffusion UNet at small widths (layers written out): GroupNorm+SiLU before "
                                "3x3 convs, timestep embedding (Sin, Cos, SiLU MLP) added per block, self-attention "
                                "(8 heads) at 16x16 and 8x8, stride-2 convs down, nearest upsampling and skip Concats up"),
    "t5_enc": dict(make=T5Encoder, opset=17, inputs={"tokens": ["batch", "seq"]}, outputs={"hidden": ["batch", "seq", 512]},
                   input_dtypes={"tokens": "int64"}, bn=False, trace=dict(batch=3, seq=40),
                   cases=dict(b1=dict(batch=1, seq=128), alt=dict(batch=2, seq=64)),
                   feed=lambda rng, b: {"tokens": base.tokens(rng, (b["batch"], b["seq"]), 1000)},
                   note="T5 v1.1's encoder (layers written out, small widths, 4 layers): RMS norms, unscaled "
                        "attention with a bucketed relative position bias (log, cast, min, where), gated GELU"),
    "style_transfer": image(StyleTransfer, "Fast neural style (Johnson et al., layers written out): ReflectionPad "
                            "before every conv, 9x9 convs at both ends, InstanceNorm, stride-2 down, nearest upsampling up",
                            {"y": ["batch", 3, "height", "width"]}, False, (2, 96, 128), (1, 256, 256), (2, 192, 160)),
    "seg_unet": image(SegUNet, "U-Net at half width (layers written out): 3x3 Conv-BN-ReLU pairs, MaxPool 2x2, "
                      "ConvTranspose 2x2/2, skip Concats, 32 to 512 channels over 4 levels",
                      {"mask": ["batch", 2, "height", "width"]}, True, (2, 96, 128), (1, 256, 256), (2, 128, 192)),
    "espcn": dict(make=ESPCN, opset=17, inputs={"x": ["batch", 1, "height", "width"]},
                  outputs={"y": ["batch", 1, "h3", "w3"]}, bn=False, trace=dict(batch=2, height=48, width=64),
                  cases=dict(b1=dict(batch=1, height=224, width=224), alt=dict(batch=2, height=120, width=160)),
                  feed=lambda rng, b: {"x": base.signal(rng, (b["batch"], 1, b["height"], b["width"]))},
                  note="ESPCN super-resolution x3 (layers written out): 5x5 and 3x3 convs with tanh on one "
                       "channel, PixelShuffle as DepthToSpace"),
    "pointnet": dict(make=PointNet, opset=17, inputs={"points": ["batch", 3, "n"]},
                     outputs={"logp": ["batch", 40]}, bn=True, trace=dict(batch=4, n=512),
                     cases=dict(b1=dict(batch=1, n=1024), alt=dict(batch=8, n=2048)),
                     feed=lambda rng, b: {"points": base.signal(rng, (b["batch"], 3, b["n"]))},
                     note="PointNet classification (layers written out): T-Nets, Conv1d 1x1 shared MLPs with BN, "
                          "batched 3x3 and 64x64 transforms, max over points, LogSoftmax"),
    "wavenet": audio(WaveNet, "A WaveNet stack (layers written out): 20 causal dilated Conv1d k2 (dilations 1-512, "
                     "left Pad), gated tanh*sigmoid, 1x1 residual and skip convs",
                     {"wave": ["batch", 1, "samples"]}, {"logits": ["batch", 256, "samples"]},
                     dict(batch=2, samples=3000), dict(b1=dict(batch=1, samples=16000), alt=dict(batch=4, samples=4000)),
                     lambda b: (b["batch"], 1, b["samples"])),
    "dlrm": dict(make=DLRM, opset=17, inputs={"dense": ["batch", 13], "ids": ["batch", 8]},
                 outputs={"ctr": ["batch", 1]}, input_dtypes={"ids": "int64"}, bn=False, trace=dict(batch=16),
                 cases=dict(b1=dict(batch=1), alt=dict(batch=256)), feed=dlrm_inputs,
                 note="A DLRM-style recommender (layers written out): bottom MLP, 8 embedding tables of 20000x64 "
                      "(Gather), pairwise dots by a batched product, lower triangle by Gather, top MLP, sigmoid"),
    "mobilevit": image(MobileViTS, "A MobileViT at small widths (layers written out): inverted residuals, MobileViT "
                       "blocks (2x2 patches unfolded by reshape and transpose, pre-norm transformer layers, folded "
                       "back) at 1/8, 1/16 and 1/32 (sizes multiples of 64)",
                       LOGITS, True, (3, 256, 192), (1, 256, 256), (2, 192, 320)),
    "gcn": dict(make=GCN, opset=17, inputs={"adj": ["nodes", "nodes"], "x": ["nodes", 1433]},
                outputs={"logp": ["nodes", 7]}, bn=False, trace=dict(nodes=300),
                cases=dict(b1=dict(nodes=2708), alt=dict(nodes=1000)), feed=gcn_inputs,
                note="A two-layer GCN over a dense normalized adjacency (Cora-sized: 2708 nodes, 1433 sparse "
                     "features): adjacency products of K = nodes onto 64 and 7 columns"),
    "mixer": fixed(Mixer, "MLP-Mixer S/16 (layers written out, 8 blocks): 16x16 patchify conv, token-mixing MLPs "
                   "on transposed activations, channel-mixing MLPs, LayerNorm, GELU"),
    "clip_text": dict(make=CLIPText, opset=17, inputs={"tokens": ["batch", "seq"]}, outputs={"emb": ["batch", 256]},
                      input_dtypes={"tokens": "int64"}, bn=False, trace=dict(batch=3, seq=40),
                      cases=dict(b1=dict(batch=1, seq=77), alt=dict(batch=4, seq=32)), feed=clip_inputs,
                      note="CLIP's text encoder at small widths (layers written out): causal pre-norm transformer "
                           "layers, the feature at each row's end token by argmax and an indexed row"),
    "raft_lite": dict(make=RAFTLite, opset=17, inputs={"im1": ["batch", 3, "height", "width"], "im2": ["batch", 3, "height", "width"]},
                      outputs={"flow": ["batch", 2, "h8", "w8"]}, bn=False, trace=dict(batch=1, height=128, width=160),
                      cases=dict(b1=dict(batch=1, height=256, width=320), alt=dict(batch=2, height=192, width=256)),
                      feed=raft_inputs,
                      note="Optical flow in RAFT's manner at small widths (layers written out): 1/8 feature encoders, "
                           "all-pairs correlation by a batched product, an AvgPool pyramid looked up by GridSample "
                           "around the flow, 4 ConvGRU iterations"),
    "segformer_b0": image(SegFormerB0, "SegFormer-B0 (layers written out): overlapping patch embeddings, "
                          "spatial-reduction attention, Mix-FFN with a depthwise 3x3 on the token map, an all-MLP "
                          "decoder with bilinear upsampling",
                          {"logits": ["batch", 19, "h4", "w4"]}, True, (2, 256, 320), (1, 512, 512), (2, 256, 384)),
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
