#!/usr/bin/python3
"""Exports the tiny test models in testdata/onnx/ with PyTorch's TorchScript
ONNX exporter. Run by hand, never by CI:

    apt-get install python3-torch python3-torchvision python3-onnx python3-numpy
    /usr/bin/python3 scripts/export_onnx_tests.py            # all models
    /usr/bin/python3 scripts/export_onnx_tests.py unet vit   # some of them

(Debian bookworm: torch 1.13.1, onnx 1.12, numpy 1.24.) It writes, for each
model M, testdata/onnx/M.onnx and testdata/onnx/M_data/{b1,alt}_{in,out}_*.npy,
and rewrites testdata/onnx/manifest.json (the format of
../shared/models/torch2/manifest.json, plus per model "inputs", "outputs",
"dynamic_dims", "ops", "op_counts" and "note").

Everything is deterministic: each model's weights come from its own
torch.manual_seed, its inputs from a seeded numpy generator, and BatchNorm
running statistics are calibrated (cumulative average over seeded batches in
train mode) before eval, so outputs depend on the input. Every model is traced
at a third binding, different from both cases, so a shape the exporter baked
into the graph shows up as a failure at both case bindings.

onnxruntime is not in Debian; where it is installed (pip), each case is also
run by it and compared.
"""

import hashlib
import json
import math
import os
import sys

import numpy as np
import onnx
import torch
import torch.nn as nn
import torch.nn.functional as F

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "testdata", "onnx")
MAX_BYTES = 1 << 20

torch.set_num_threads(1)


# ---------------------------------------------------------------- helpers


def calibrate_bn(model, make_batch, steps=8):
    """Running statistics from seeded batches (cumulative average), then eval."""
    bns = [m for m in model.modules() if isinstance(m, nn.modules.batchnorm._BatchNorm)]
    for m in bns:
        m.reset_running_stats()
        m.momentum = None
    model.train()
    with torch.no_grad():
        for i in range(steps):
            model(*make_batch(i))
    model.eval()


def randomize_affine(model, gen):
    """Norm layers' weight/bias away from 1/0 so they matter."""
    for m in model.modules():
        if isinstance(m, (nn.modules.batchnorm._BatchNorm, nn.GroupNorm, nn.LayerNorm)):
            if m.weight is not None:
                with torch.no_grad():
                    m.weight.copy_(1 + 0.25 * torch.randn(m.weight.shape, generator=gen))
                    m.bias.copy_(0.1 * torch.randn(m.bias.shape, generator=gen))


# ---------------------------------------------------------------- models


class UNet(nn.Module):
    """Two levels down (MaxPool), up by ConvTranspose2d and by bilinear
    Upsample, skip concats; BatchNorm after each concat (not after a conv, so
    the exporter keeps it as BatchNormalization)."""

    def __init__(self, cin=3, c=8, ncls=4):
        super().__init__()

        def block(i, o):
            return nn.Sequential(
                nn.Conv2d(i, o, 3, padding=1), nn.BatchNorm2d(o), nn.ReLU(),
                nn.Conv2d(o, o, 3, padding=1), nn.ReLU())

        self.enc0 = block(cin, c)
        self.enc1 = block(c, 2 * c)
        self.mid = block(2 * c, 4 * c)
        self.up1 = nn.ConvTranspose2d(4 * c, 2 * c, 2, stride=2)
        self.bn1 = nn.BatchNorm2d(4 * c)
        self.dec1 = block(4 * c, 2 * c)
        self.up0 = nn.Upsample(scale_factor=2, mode="bilinear", align_corners=False)
        self.bn0 = nn.BatchNorm2d(3 * c)
        self.dec0 = block(3 * c, c)
        self.head = nn.Conv2d(c, ncls, 1)

    def forward(self, x):
        e0 = self.enc0(x)
        e1 = self.enc1(F.max_pool2d(e0, 2))
        m = self.mid(F.max_pool2d(e1, 2))
        d1 = self.dec1(self.bn1(torch.cat([self.up1(m), e1], dim=1)))
        d0 = self.dec0(self.bn0(torch.cat([self.up0(d1), e0], dim=1)))
        return self.head(d0)


class Attention(nn.Module):
    """Multi-head self-attention with shapes taken from the input (traced as
    Shape/Gather), an optional additive or boolean mask."""

    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.scale = 1 / math.sqrt(dim // heads)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x, bool_mask=None):
        b, n, d = x.shape
        h = self.heads
        qkv = self.qkv(x).reshape(b, n, 3, h, d // h).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]
        s = (q @ k.transpose(-2, -1)) * self.scale
        if bool_mask is not None:
            s = s.masked_fill(~bool_mask[:, None, None, :], torch.finfo(s.dtype).min)
        a = s.softmax(dim=-1)
        return self.proj((a @ v).transpose(1, 2).reshape(b, n, d))


class ViT(nn.Module):
    """Patch embedding (Conv2d stride 8), class token expanded to the batch,
    learned position embedding, two pre-norm blocks (LayerNorm, GELU), head on
    the class token."""

    def __init__(self, img=32, patch=8, dim=48, heads=4, depth=2, ncls=10):
        super().__init__()
        n = (img // patch) ** 2
        self.embed = nn.Conv2d(3, dim, patch, stride=patch)
        self.cls = nn.Parameter(torch.randn(1, 1, dim))
        self.pos = nn.Parameter(0.5 * torch.randn(1, n + 1, dim))
        self.blocks = nn.ModuleList()
        for _ in range(depth):
            self.blocks.append(nn.ModuleDict(dict(
                ln1=nn.LayerNorm(dim), attn=Attention(dim, heads), ln2=nn.LayerNorm(dim),
                mlp=nn.Sequential(nn.Linear(dim, 2 * dim), nn.GELU(), nn.Linear(2 * dim, dim)))))
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, ncls)

    def forward(self, x):
        x = self.embed(x).flatten(2).transpose(1, 2)
        x = torch.cat([self.cls.expand(x.shape[0], -1, -1), x], dim=1) + self.pos
        for blk in self.blocks:
            x = x + blk["attn"](blk["ln1"](x))
            x = x + blk["mlp"](blk["ln2"](x))
        return self.head(self.norm(x[:, 0]))


class Bert(nn.Module):
    """BERT-style: token + position (arange) embeddings, embedding LayerNorm,
    two post-norm layers with erf GELU, a bool padding mask (masked_fill with
    the float32 minimum), and a tanh pooler on the first token."""

    def __init__(self, vocab=100, dim=48, heads=4, depth=2, ff=96, maxlen=64):
        super().__init__()
        self.tok = nn.Embedding(vocab, dim)
        self.pos = nn.Embedding(maxlen, dim)
        self.ln = nn.LayerNorm(dim, eps=1e-12)
        self.layers = nn.ModuleList()
        for _ in range(depth):
            self.layers.append(nn.ModuleDict(dict(
                attn=Attention(dim, heads), ln1=nn.LayerNorm(dim, eps=1e-12),
                ff1=nn.Linear(dim, ff), ff2=nn.Linear(ff, dim), ln2=nn.LayerNorm(dim, eps=1e-12))))
        self.pool = nn.Linear(dim, dim)

    def forward(self, input_ids, attention_mask):
        pos = torch.arange(input_ids.shape[1], device=input_ids.device)
        x = self.ln(self.tok(input_ids) + self.pos(pos)[None])
        for l in self.layers:
            x = l["ln1"](x + l["attn"](x, attention_mask))
            x = l["ln2"](x + l["ff2"](F.gelu(l["ff1"](x))))
        return x, torch.tanh(self.pool(x[:, 0]))


class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def rotate_half(x):
    h = x.shape[-1] // 2
    return torch.cat([-x[..., h:], x[..., :h]], dim=-1)


class LlamaBlock(nn.Module):
    def __init__(self, dim, heads, kv_heads, hidden):
        super().__init__()
        self.heads, self.kv_heads, self.hd = heads, kv_heads, dim // heads
        self.attn_norm = RMSNorm(dim)
        self.wq = nn.Linear(dim, heads * self.hd, bias=False)
        self.wk = nn.Linear(dim, kv_heads * self.hd, bias=False)
        self.wv = nn.Linear(dim, kv_heads * self.hd, bias=False)
        self.wo = nn.Linear(heads * self.hd, dim, bias=False)
        self.ffn_norm = RMSNorm(dim)
        self.w1 = nn.Linear(dim, hidden, bias=False)
        self.w2 = nn.Linear(hidden, dim, bias=False)
        self.w3 = nn.Linear(dim, hidden, bias=False)

    def forward(self, x, cos, sin, mask):
        b, s, _ = x.shape
        q, k, v = self.qkv(x, cos, sin, b, s)
        return self.attend(x, q, k, v, mask, b, s, s)

    def qkv(self, x, cos, sin, b, s):
        """Queries, keys and values of x [b, s, dim], rotary-embedded."""
        h = self.attn_norm(x)
        q = self.wq(h).view(b, s, self.heads, self.hd).transpose(1, 2)
        k = self.wk(h).view(b, s, self.kv_heads, self.hd).transpose(1, 2)
        v = self.wv(h).view(b, s, self.kv_heads, self.hd).transpose(1, 2)
        return q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin, v

    def attend(self, x, q, k, v, mask, b, s, n):
        """The rest of the block after the rotary embedding, over n keys."""
        rep = self.heads // self.kv_heads  # grouped-query attention: repeat kv heads
        k = k[:, :, None].expand(b, self.kv_heads, rep, n, self.hd).reshape(b, self.heads, n, self.hd)
        v = v[:, :, None].expand(b, self.kv_heads, rep, n, self.hd).reshape(b, self.heads, n, self.hd)
        a = torch.softmax(q @ k.transpose(2, 3) / math.sqrt(self.hd) + mask, dim=-1)
        x = x + self.wo((a @ v).transpose(1, 2).reshape(b, s, -1))
        h = self.ffn_norm(x)
        return x + self.w2(F.silu(self.w1(h)) * self.w3(h))


class Llama(nn.Module):
    """Token embedding, two LLaMA blocks (RMSNorm, rotary embedding from
    sin/cos of an arange of positions, GQA 4 query / 2 kv heads, SwiGLU), a
    causal mask built at run time by torch.triu of a -inf matrix, final
    RMSNorm and an untied LM head."""

    def __init__(self, vocab=128, dim=64, heads=4, kv_heads=2, hidden=160, depth=2):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)
        self.blocks = nn.ModuleList([LlamaBlock(dim, heads, kv_heads, hidden) for _ in range(depth)])
        self.norm = RMSNorm(dim)
        self.out = nn.Linear(dim, vocab, bias=False)
        hd = dim // heads
        self.register_buffer("inv_freq", 1.0 / (10000 ** (torch.arange(0, hd, 2).float() / hd)), persistent=False)

    def forward(self, tokens):
        s = tokens.shape[1]
        x = self.emb(tokens)
        t = torch.arange(s, dtype=torch.float32)
        freqs = t[:, None] * self.inv_freq[None, :]
        emb = torch.cat([freqs, freqs], dim=-1)
        cos, sin = emb.cos(), emb.sin()
        mask = torch.triu(torch.full((s, s), float("-inf")), diagonal=1)
        for blk in self.blocks:
            x = blk(x, cos, sin, mask)
        return self.out(self.norm(x))


class LlamaKV(Llama):
    """The Llama above as a decoder step with a key/value cache, the way
    generation runs it: seq new tokens after past cached ones. Per block the
    cached keys and values [batch, kv_heads, past, head] come in, the new
    ones are concatenated after them and go out as present_k/present_v
    [batch, kv_heads, past + seq, head] (the exporter names that dim);
    positions run from past (a Shape of the cache), and query i sees keys
    j <= past + i (a mask built from two Ranges, Greater and Where)."""

    def forward(self, tokens, past_k0, past_v0, past_k1, past_v1):
        b, s = tokens.shape
        past = past_k0.shape[2]
        x = self.emb(tokens)
        t = torch.arange(s, dtype=torch.float32) + past
        freqs = t[:, None] * self.inv_freq[None, :]
        emb = torch.cat([freqs, freqs], dim=-1)
        cos, sin = emb.cos(), emb.sin()
        i = torch.arange(s)[:, None] + past
        j = torch.arange(past + s)[None, :]
        mask = torch.where(j > i, torch.tensor(float("-inf")), torch.tensor(0.0))
        present = []
        for blk, pk, pv in zip(self.blocks, (past_k0, past_k1), (past_v0, past_v1)):
            q, k, v = blk.qkv(x, cos, sin, b, s)
            k = torch.cat([pk, k], dim=2)
            v = torch.cat([pv, v], dim=2)
            present += [k, v]
            x = blk.attend(x, q, k, v, mask, b, s, k.shape[2])
        return (self.out(self.norm(x)), *present)


def llama_kv_inputs(rng, b):
    feeds = {"tokens": tokens(rng, (b["batch"], b["seq"]), 128)}
    for n in ("past_k0", "past_v0", "past_k1", "past_v1"):
        feeds[n] = signal(rng, (b["batch"], 2, b["past"], 16))
    return feeds


class Audio(nn.Module):
    """Log-mel frames (batch, mels, time): Conv1d + BatchNorm1d + ReLU, then a
    bidirectional LSTM and a GRU over time (batch_first, no lengths), per-frame
    logits."""

    def __init__(self, mels=16, c=24, hidden=16, ncls=8):
        super().__init__()
        self.conv = nn.Conv1d(mels, c, 5, padding=2)
        self.bn = nn.BatchNorm1d(c)
        self.lstm = nn.LSTM(c, hidden, batch_first=True, bidirectional=True)
        self.gru = nn.GRU(2 * hidden, hidden, batch_first=True)
        self.head = nn.Linear(hidden, ncls)

    def forward(self, x):
        x = F.relu(self.bn(self.conv(x))).transpose(1, 2)
        x, _ = self.lstm(x)
        x, _ = self.gru(x)
        return self.head(x)


class SqueezeExcite(nn.Module):
    def __init__(self, c, r):
        super().__init__()
        self.reduce = nn.Conv2d(c, r, 1)
        self.expand = nn.Conv2d(r, c, 1)

    def forward(self, x):
        s = F.adaptive_avg_pool2d(x, 1)
        return x * torch.sigmoid(self.expand(F.silu(self.reduce(s))))


class MBConv(nn.Module):
    def __init__(self, cin, cout, expand, k, stride):
        super().__init__()
        c = cin * expand
        self.residual = stride == 1 and cin == cout
        self.body = nn.Sequential(
            nn.Conv2d(cin, c, 1, bias=False), nn.BatchNorm2d(c), nn.SiLU(),
            nn.Conv2d(c, c, k, stride=stride, padding=k // 2, groups=c, bias=False), nn.BatchNorm2d(c), nn.SiLU(),
            SqueezeExcite(c, max(1, cin // 4)),
            nn.Conv2d(c, cout, 1, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        y = self.body(x)
        return x + y if self.residual else y


class EfficientNet(nn.Module):
    """Stem conv stride 2 + BN + SiLU, MBConv blocks (1x1 expand, depthwise
    5x5, squeeze-excitation, 1x1 project, residual), GlobalAveragePool head."""

    def __init__(self, ncls=10):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 16, 3, stride=2, padding=1, bias=False), nn.BatchNorm2d(16), nn.SiLU())
        self.blocks = nn.Sequential(MBConv(16, 16, 4, 5, 1), MBConv(16, 24, 4, 5, 2), MBConv(24, 24, 4, 5, 1))
        self.head = nn.Linear(24, ncls)

    def forward(self, x):
        x = self.blocks(self.stem(x))
        return self.head(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))


class ChannelLayerNorm(nn.Module):
    """LayerNorm over channels of NCHW by permuting to NHWC and back."""

    def __init__(self, c):
        super().__init__()
        self.ln = nn.LayerNorm(c, eps=1e-6)

    def forward(self, x):
        return self.ln(x.permute(0, 2, 3, 1)).permute(0, 3, 1, 2)


class ConvNeXtBlock(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.dw = nn.Conv2d(c, c, 7, padding=3, groups=c)
        self.ln = nn.LayerNorm(c, eps=1e-6)
        self.pw1 = nn.Linear(c, 4 * c)
        self.pw2 = nn.Linear(4 * c, c)
        # layer scale: ConvNeXt starts it at 1e-6; random here so the block matters
        self.gamma = nn.Parameter(0.5 + 0.25 * torch.randn(c))

    def forward(self, x):
        y = self.dw(x).permute(0, 2, 3, 1)
        y = self.pw2(F.gelu(self.pw1(self.ln(y))))
        return x + (self.gamma * y).permute(0, 3, 1, 2)


class ConvNeXt(nn.Module):
    """Patchify stem (4x4 stride 4) + channel LayerNorm by permute, two
    ConvNeXt blocks (depthwise 7x7, LayerNorm, GELU, layer scale), a
    downsample (channel LayerNorm + 2x2 stride 2), mean over H and W,
    LayerNorm, head."""

    def __init__(self, c=24, ncls=10):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, c, 4, stride=4), ChannelLayerNorm(c))
        self.stage0 = nn.Sequential(ConvNeXtBlock(c), ConvNeXtBlock(c))
        self.down = nn.Sequential(ChannelLayerNorm(c), nn.Conv2d(c, 2 * c, 2, stride=2))
        self.stage1 = ConvNeXtBlock(2 * c)
        self.norm = nn.LayerNorm(2 * c, eps=1e-6)
        self.head = nn.Linear(2 * c, ncls)

    def forward(self, x):
        x = self.stage1(self.down(self.stage0(self.stem(x))))
        return self.head(self.norm(x.mean([-2, -1])))


class GroupNormCNN(nn.Module):
    """Conv + GroupNorm + SiLU/ReLU layers (GroupNorm exports as Reshape +
    InstanceNormalization + Reshape + Mul + Add before opset 18), a strided
    conv, GlobalAveragePool head."""

    def __init__(self, ncls=10):
        super().__init__()
        self.body = nn.Sequential(
            nn.Conv2d(3, 16, 3, padding=1), nn.GroupNorm(4, 16), nn.SiLU(),
            nn.Conv2d(16, 16, 3, padding=1), nn.GroupNorm(1, 16), nn.ReLU(),
            nn.Conv2d(16, 32, 3, stride=2, padding=1), nn.GroupNorm(8, 32), nn.SiLU())
        self.head = nn.Linear(32, ncls)

    def forward(self, x):
        return self.head(torch.flatten(F.adaptive_avg_pool2d(self.body(x), 1), 1))


class Encoder(nn.Module):
    """The shared encoder's architecture (../shared/models/encoder.onnx: two
    nn.TransformerEncoderLayer, batch_first, dropout 0), at a tiny width."""

    def __init__(self, dim=64, heads=4, ff=128, depth=2, activation="relu", norm_first=False, final_norm=False):
        super().__init__()
        layer = nn.TransformerEncoderLayer(dim, heads, ff, dropout=0.0, activation=activation,
                                           batch_first=True, norm_first=norm_first)
        self.enc = nn.TransformerEncoder(layer, depth, norm=nn.LayerNorm(dim) if final_norm else None,
                                         enable_nested_tensor=False)

    def forward(self, x):
        return self.enc(x)


class PostProc(nn.Module):
    """Detection-style post-processing: per-anchor class scores (Linear,
    Sigmoid), the best class's score per anchor (ReduceMax), the 8 best
    anchors (TopK) and their boxes (torch.gather: GatherElements)."""

    def __init__(self, feat=16, ncls=5, k=8):
        super().__init__()
        self.cls = nn.Linear(feat, ncls)
        self.k = k

    def forward(self, feats, boxes):
        best = self.cls(feats).sigmoid().amax(-1)  # [B, A]
        top, idx = torch.topk(best, self.k, dim=1)  # [B, k], sorted
        sel = torch.gather(boxes, 1, idx.unsqueeze(-1).expand(-1, -1, 4))  # [B, k, 4]
        return top, idx, sel


class Upsample9(nn.Module):
    """An opset-9 export: nearest 2x upsampling becomes Upsample (scales
    as an input), between two convolutions."""

    def __init__(self, c=6):
        super().__init__()
        self.a = nn.Conv2d(3, c, 3, padding=1)
        self.b = nn.Conv2d(c, 4, 3, padding=1)

    def forward(self, x):
        y = F.interpolate(torch.relu(self.a(x)), scale_factor=2, mode="nearest")
        return self.b(y)


def postproc_inputs(rng, bind):
    """Features, and boxes as corners; the scores' 9 best per row are
    checked to be apart (1e-4), so the selection does not hang on rounding."""
    b, a = bind["batch"], bind["anchors"]
    feats = f32(rng, (b, a, 16))
    boxes = np.sort(rng.uniform(0, 1, size=(b, a, 4)).astype(np.float32), axis=-1)
    return {"feats": feats, "boxes": boxes}


# ---------------------------------------------------------------- specs


def f32(rng, shape, scale=1.0):
    return (scale * rng.standard_normal(shape)).astype(np.float32)


def signal(rng, shape):
    """Noise with a random scale and offset per sample and channel, so that
    pooled features (and classifier outputs) differ from sample to sample."""
    lead = tuple(shape[:2]) + (1,) * (len(shape) - 2)
    scale = rng.uniform(0.5, 1.5, size=lead)
    offset = 0.7 * rng.standard_normal(lead)
    x = scale * rng.standard_normal(shape) + offset
    if len(shape) == 4:
        # plus a plane wave per sample and channel: spatial structure that
        # survives normalization and pooling
        h, w = shape[2], shape[3]
        amp = rng.uniform(0.5, 1.5, size=lead)
        fy, fx = rng.integers(0, 3, size=lead), rng.integers(0, 3, size=lead)
        phase = rng.uniform(0, 2 * np.pi, size=lead)
        yy = np.arange(h).reshape(1, 1, h, 1) / h
        xx = np.arange(w).reshape(1, 1, 1, w) / w
        x = x + amp * np.sin(2 * np.pi * (fy * yy + fx * xx) + phase)
    return x.astype(np.float32)


def tokens(rng, shape, vocab):
    return rng.integers(0, vocab, size=shape, dtype=np.int64)


def bert_inputs(rng, b, s):
    ids = tokens(rng, (b, s), 100)
    mask = np.ones((b, s), dtype=bool)
    for i in range(b):  # padding: row i's last 2 + 3*i tokens masked
        mask[i, s - 2 - 3 * i:] = False
        ids[i, s - 2 - 3 * i:] = 0
    return {"input_ids": ids, "attention_mask": mask}


# Per model: make (constructor), opset, inputs and outputs {name: dims} (a
# string dim is dynamic), input_dtypes (float32 otherwise), trace (the binding
# the exporter traces), cases {name: binding}, feed(rng, binding) -> inputs,
# bn (calibrate BatchNorm first), note.
IMG = {"x": ["batch", 3, "height", "width"]}


def img_inputs(rng, bind):
    return {"x": signal(rng, (bind["batch"], 3, bind["height"], bind["width"]))}


SPECS = {
    "unet": dict(
        make=UNet, opset=16, inputs=IMG, outputs={"y": ["batch", 4, "height", "width"]},
        trace=dict(batch=3, height=16, width=24),
        cases=dict(b1=dict(batch=1, height=32, width=32), alt=dict(batch=2, height=24, width=40)),
        feed=img_inputs, bn=True,
        note="UNet: MaxPool down twice, ConvTranspose2d(k2 s2) and bilinear Upsample (Resize, "
             "half_pixel, linear) up, skip Concats, BatchNorm after each concat (kept as "
             "BatchNormalization; BNs after convs are folded by the exporter); height and width "
             "multiples of 4"),
    "vit": dict(
        make=ViT, opset=17, inputs={"x": ["batch", 3, 32, 32]}, outputs={"logits": ["batch", 10]},
        trace=dict(batch=3), cases=dict(b1=dict(batch=1), alt=dict(batch=2)),
        feed=lambda rng, b: {"x": signal(rng, (b["batch"], 3, 32, 32))},
        note="ViT: Conv2d patch embedding (8x8 stride 8, 16 patches), class token Expand-ed to "
             "the batch and Concat-ed, learned position embedding, two pre-norm blocks "
             "(LayerNormalization, erf GELU, 4 heads), head on the class token (Gather)"),
    "bert": dict(
        make=Bert, opset=14,
        inputs={"input_ids": ["batch", "seq"], "attention_mask": ["batch", "seq"]},
        outputs={"last_hidden_state": ["batch", "seq", 48], "pooled": ["batch", 48]},
        input_dtypes={"input_ids": "int64", "attention_mask": "bool"},
        trace=dict(batch=3, seq=20), cases=dict(b1=dict(batch=1, seq=16), alt=dict(batch=2, seq=24)),
        feed=lambda rng, b: bert_inputs(rng, b["batch"], b["seq"]),
        note="BERT-style encoder: token and position (Range) embeddings, LayerNorm decomposed "
             "(opset 14), two post-norm layers, erf GELU, bool padding mask (Not, Where with "
             "float32 min); row i of a case has its last 2+3i tokens padded (mask false, id 0); two outputs"),
    "llama": dict(
        make=Llama, opset=14, inputs={"tokens": ["batch", "seq"]},
        outputs={"logits": ["batch", "seq", 128]}, input_dtypes={"tokens": "int64"},
        trace=dict(batch=3, seq=20), cases=dict(b1=dict(batch=1, seq=16), alt=dict(batch=2, seq=24)),
        feed=lambda rng, b: {"tokens": tokens(rng, (b["batch"], b["seq"]), 128)},
        note="LLaMA-style: two blocks with RMSNorm (Pow, ReduceMean, Add, Sqrt, Div), rotary "
             "embedding from Sin/Cos of a float Range of positions (Cast of seq), grouped-query "
             "attention (4 query heads, 2 kv heads repeated by Expand + Reshape), SwiGLU (SiLU as "
             "Sigmoid*x), "
             "causal mask from torch.triu of a -inf ConstantOfShape (Trilu upper, k=1)"),
    "llama_kv": dict(
        make=LlamaKV, opset=14,
        inputs={"tokens": ["batch", "seq"], "past_k0": ["batch", 2, "past", 16], "past_v0": ["batch", 2, "past", 16],
                "past_k1": ["batch", 2, "past", 16], "past_v1": ["batch", 2, "past", 16]},
        outputs={"logits": ["batch", "seq", 128], "present_k0": ["batch", 2, "total", 16],
                 "present_v0": ["batch", 2, "total", 16], "present_k1": ["batch", 2, "total", 16],
                 "present_v1": ["batch", 2, "total", 16]},
        input_dtypes={"tokens": "int64"},
        trace=dict(batch=3, seq=2, past=5),
        cases=dict(b1=dict(batch=1, seq=1, past=15), alt=dict(batch=2, seq=3, past=8)),
        feed=llama_kv_inputs,
        note="LLaMA-style decoder step with a key/value cache: the llama model's blocks, cached keys and "
             "values per block [batch, 2, past, 16] concatenated before the new ones and returned as "
             "present_* [batch, 2, past + seq, 16]; rotary positions from past (Shape of the cache, "
             "Range, Add), mask from Ranges, Greater and Where (query i sees keys j <= past + i); b1 is "
             "one token after 15"),
    "audio": dict(
        make=Audio, opset=15, inputs={"x": ["batch", 16, "time"]},
        outputs={"y": ["batch", "time", 8]},
        trace=dict(batch=3, time=25), cases=dict(b1=dict(batch=1, time=20), alt=dict(batch=2, time=33)),
        feed=lambda rng, b: {"x": signal(rng, (b["batch"], 16, b["time"]))}, bn=True,
        note="audio: Conv1d (k5) + BatchNorm1d (folded into the Conv by the exporter) + ReLU, "
             "bidirectional LSTM, GRU (both batch_first, no sequence lengths, no initial "
             "state), per-frame Linear"),
    "efficientnet": dict(
        make=EfficientNet, opset=13, inputs=IMG, outputs={"logits": ["batch", 10]},
        trace=dict(batch=3, height=24, width=24),
        cases=dict(b1=dict(batch=1, height=32, width=32), alt=dict(batch=2, height=28, width=36)),
        feed=img_inputs, bn=True,
        note="EfficientNet-style: stem conv s2 + SiLU, three MBConv blocks (1x1 expand, "
             "depthwise 5x5 (group=channels), squeeze-excitation (GlobalAveragePool, 1x1 convs, "
             "Sigmoid, Mul), 1x1 project, residual), BatchNorms calibrated then folded into the "
             "convs by the exporter"),
    "convnext": dict(
        make=ConvNeXt, opset=17, inputs=IMG, outputs={"logits": ["batch", 10]},
        trace=dict(batch=3, height=24, width=40),
        cases=dict(b1=dict(batch=1, height=32, width=32), alt=dict(batch=2, height=40, width=24)),
        feed=img_inputs,
        note="ConvNeXt-style: 4x4 s4 patchify stem, channel LayerNormalization by Transpose "
             "NCHW->NHWC and back, blocks of depthwise 7x7 conv, LayerNormalization, Linear, erf "
             "GELU, Linear, layer scale (Mul), residual; 2x2 s2 downsample; ReduceMean over H, "
             "W; height and width multiples of 8"),
    "groupnorm": dict(
        make=GroupNormCNN, opset=15, inputs=IMG, outputs={"logits": ["batch", 10]},
        trace=dict(batch=3, height=20, width=12),
        cases=dict(b1=dict(batch=1, height=32, width=32), alt=dict(batch=2, height=24, width=16)),
        feed=img_inputs,
        note="GroupNorm CNN: GroupNorm(4,16), (1,16), (8,32) exported as Reshape to (N, G, -1), "
             "InstanceNormalization, Reshape back (Shape of the input), Mul, Add; SiLU "
             "(Sigmoid, Mul), ReLU, strided conv, GlobalAveragePool"),
    "encoder13": dict(
        make=Encoder, opset=13, inputs={"x": ["batch", "seq", 64]},
        outputs={"y": ["batch", "seq", 64]},
        trace=dict(batch=3, seq=20), cases=dict(b1=dict(batch=1, seq=16), alt=dict(batch=2, seq=24)),
        feed=lambda rng, b: {"x": f32(rng, (b["batch"], b["seq"], 64))},
        note="the shared encoder's architecture (2 x nn.TransformerEncoderLayer, post-norm, "
             "ReLU, batch_first, nn.MultiheadAttention) at d_model 64, 4 heads, ff 128, exported "
             "at opset 13: LayerNorm decomposed to ReduceMean/Sub/Pow/Add/Sqrt/Div, Unsqueeze takes "
             "its axes as an input"),
    "encoder13_gelu": dict(
        make=lambda: Encoder(activation="gelu", norm_first=True, final_norm=True), opset=13,
        inputs={"x": ["batch", "seq", 64]}, outputs={"y": ["batch", "seq", 64]},
        trace=dict(batch=3, seq=20), cases=dict(b1=dict(batch=1, seq=16), alt=dict(batch=2, seq=24)),
        feed=lambda rng, b: {"x": f32(rng, (b["batch"], b["seq"], 64))},
        note="the shared encoder's layers with activation='gelu' (Erf form) and norm_first=True "
             "plus a final LayerNorm, d_model 64, 4 heads, ff 128, opset 13 (LayerNorm "
             "decomposed)"),
    "postproc": dict(
        make=PostProc, opset=13, inputs={"feats": ["batch", "anchors", 16], "boxes": ["batch", "anchors", 4]},
        outputs={"scores": ["batch", 8], "indices": ["batch", 8], "boxes_out": ["batch", 8, 4]},
        output_dtypes={"indices": "int64"},
        trace=dict(batch=3, anchors=50), cases=dict(b1=dict(batch=1, anchors=40), alt=dict(batch=2, anchors=64)),
        feed=postproc_inputs, check=lambda outs: min_gap(outs[0]) > 1e-4,
        note="detection-style post-processing: Linear + Sigmoid class scores, ReduceMax over "
             "classes, TopK (k=8) over a dynamic number of anchors, GatherElements of the "
             "boxes by the indices (torch.gather of an Unsqueeze + Expand); three outputs, one "
             "int64"),
    "upsample9": dict(
        make=Upsample9, opset=9, inputs=IMG, outputs={"y": ["batch", 4, "h2", "w2"]},
        trace=dict(batch=3, height=10, width=14),
        cases=dict(b1=dict(batch=1, height=16, width=16), alt=dict(batch=2, height=12, width=20)),
        feed=img_inputs,
        note="opset 9: Conv, ReLU, nearest 2x Upsample (scales as an input), Conv; nearest "
             "is exact against PyTorch (floor of the scaled index)"),
}


def min_gap(top):
    """The smallest difference between consecutive selected scores."""
    return float(np.min(top[:, :-1] - top[:, 1:])) if top.shape[1] > 1 else 1.0


# ---------------------------------------------------------------- export


def npy_dtype(a):
    return {np.dtype(np.float32): "float32", np.dtype(np.int64): "int64", np.dtype(np.bool_): "bool"}[a.dtype]


def to_torch(feeds):
    return [torch.from_numpy(v) for v in feeds.values()]


def ops_of(graph):
    counts = {}
    for n in graph.node:
        counts[n.op_type] = counts.get(n.op_type, 0) + 1
        for a in n.attribute:
            for g in ([a.g] if a.type == onnx.AttributeProto.GRAPH else list(a.graphs)):
                for k, v in ops_of(g).items():
                    counts[k] = counts.get(k, 0) + v
    return counts


def run(model, feeds):
    """PyTorch's outputs, by the path the exporter traced (grad enabled, see
    export)."""
    outs = model(*to_torch(feeds))
    if not isinstance(outs, tuple):
        outs = (outs,)
    return [o.detach().numpy() for o in outs]


def try_ort(path, feeds):
    try:
        import onnxruntime as ort
    except ImportError:
        return None
    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    return sess.run(None, feeds)


def export(name, spec, seed):
    torch.manual_seed(seed)
    model = spec["make"]()
    randomize_affine(model, torch.Generator().manual_seed(seed + 1000))
    in_names = list(spec["inputs"])
    out_names = list(spec["outputs"])
    if spec.get("bn"):
        def batch(i):
            r = np.random.default_rng(seed * 100 + i)
            return to_torch(spec["feed"](r, spec["trace"]))
        calibrate_bn(model, batch)
    model.eval()

    path = os.path.join(OUT, name + ".onnx")
    dyn = {}
    for n, dims in list(spec["inputs"].items()) + list(spec["outputs"].items()):
        dyn[n] = {i: d for i, d in enumerate(dims) if isinstance(d, str)}
    trace_feeds = spec["feed"](np.random.default_rng(seed + 7), spec["trace"])
    # Not under no_grad: nn.TransformerEncoderLayer would take its fused fast
    # path (aten::_transformer_encoder_layer_fwd), which does not export.
    torch.onnx.export(model, tuple(to_torch(trace_feeds)), path, opset_version=spec["opset"],
                      input_names=in_names, output_names=out_names, dynamic_axes=dyn,
                      do_constant_folding=True)
    m = onnx.load(path)
    onnx.checker.check_model(m, full_check=True)
    counts = ops_of(m.graph)
    size = os.path.getsize(path)
    assert size < MAX_BYTES, (name, size)

    ddir = os.path.join(OUT, name + "_data")
    os.makedirs(ddir, exist_ok=True)
    for f in os.listdir(ddir):
        os.remove(os.path.join(ddir, f))
    cases = {}
    for ci, (cname, bind) in enumerate(spec["cases"].items()):
        feeds = spec["feed"](np.random.default_rng(seed * 10 + ci), bind)
        outs = run(model, feeds)
        if "check" in spec:
            assert spec["check"](outs), (name, cname, "inputs fail the spec's check: pick another seed")
        # how much the outputs depend on the input: std(f(x) - f(x')) / std(f(x))
        # for another draw x' at the same binding
        other = run(model, spec["feed"](np.random.default_rng(seed * 10 + ci + 5), bind))
        # (a single output value has no spread: its change relative to itself)
        sens = {n: float((a - b).std() / a.std()) if a.std() > 0 else float(np.abs(a - b).max() / np.abs(a).max())
                for n, a, b in zip(out_names, outs, other)}
        case = {"binding": bind, "inputs": {}, "outputs": {}}
        for n, a in feeds.items():
            rel = f"{name}_data/{cname}_in_{n}.npy"
            np.save(os.path.join(OUT, rel), a)
            case["inputs"][n] = {"file": rel, "dtype": npy_dtype(a), "shape": list(a.shape)}
        for n, a in zip(out_names, outs):
            rel = f"{name}_data/{cname}_out_{n}.npy"
            np.save(os.path.join(OUT, rel), a)
            case["outputs"][n] = {"file": rel, "dtype": npy_dtype(a), "shape": list(a.shape),
                                  "abs_max": float(np.abs(a).max()), "std": float(a.std()),
                                  "input_sensitivity": round(sens[n], 4)}
            print(f"  {name} {cname} {bind} {n} {list(a.shape)} abs_max={np.abs(a).max():.4g} "
                  f"std={a.std():.4g} input_sensitivity={sens[n]:.3g}")
        ort_outs = try_ort(path, feeds)
        if ort_outs is not None:
            for n, a, b in zip(out_names, outs, ort_outs):
                print(f"  {name} {cname} {n}: onnxruntime max|diff| {np.abs(a - b).max():.3g}")
        cases[cname] = case

    dtypes = spec.get("input_dtypes", {})
    entry = {
        "file": name + ".onnx",
        "bytes": size,
        "sha256": hashlib.sha256(open(path, "rb").read()).hexdigest(),
        "opset": spec["opset"],
        "ir_version": m.ir_version,
        "params": int(sum(p.numel() for p in model.parameters())),
        "input_dims": spec["inputs"][in_names[0]],
        "inputs": [{"name": n, "dtype": dtypes.get(n, "float32"), "shape": d} for n, d in spec["inputs"].items()],
        "outputs": [{"name": n, "dtype": spec.get("output_dtypes", {}).get(n, "float32"), "shape": d}
                    for n, d in spec["outputs"].items()],
        "dynamic_dims": sorted({d for ds in spec["inputs"].values() for d in ds if isinstance(d, str)}),
        "traced_binding": spec["trace"],
        "ops": sorted(counts),
        "op_counts": dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))),
        "num_nodes": len(m.graph.node),
        "cases": cases,
        "note": spec["note"],
    }
    print(f"{name}: opset {spec['opset']}, {size} bytes, {entry['params']} params, ops {entry['ops']}")
    return entry


def main():
    os.makedirs(OUT, exist_ok=True)
    names = sys.argv[1:] or list(SPECS)
    mpath = os.path.join(OUT, "manifest.json")
    man = {"models": {}}
    if os.path.exists(mpath) and sys.argv[1:]:
        man = json.load(open(mpath))
    man["generator"] = {
        "script": "scripts/export_onnx_tests.py",
        "torch": torch.__version__, "onnx": onnx.__version__, "numpy": np.__version__,
        "exporter": "torch.onnx.export (TorchScript), do_constant_folding, dynamic_axes",
        "note": "tiny models, each with its own seed (its index in the script); inputs from "
                "numpy default_rng; BatchNorm statistics calibrated on seeded batches; traced at "
                "traced_binding, a binding neither case uses",
    }
    for name in names:
        seed = list(SPECS).index(name)
        man["models"][name] = export(name, SPECS[name], seed)
    man["models"] = dict(sorted(man["models"].items(), key=lambda kv: list(SPECS).index(kv[0])))
    with open(mpath, "w") as f:
        json.dump(man, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
