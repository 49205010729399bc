#!/usr/bin/env python3
"""Quantizes shared models to QDQ form with ONNX Runtime's own quantizer,
for measuring quantized inference against ONNX Runtime (rlxbench
--manifest). Run by hand, never by CI (it needs onnxruntime, which Debian
does not package):

    python3 -m venv /tmp/ortq && /tmp/ortq/bin/pip install onnxruntime onnx numpy
    /tmp/ortq/bin/python scripts/quantize_qdq.py ../shared/models /tmp/qdq resnet18 mobilenet_v2

For each model M it writes OUT/M.onnx: quantize_static in QDQ format, int8
weights per output channel, uint8 activations, MinMax calibration over the
model's own b1 input and 16 seeded random batches of the same shape; then
OUT/M/{b1,alt}/ with the shared inputs and ONNX Runtime's outputs of the
quantized model as the references, and OUT/manifest.json in the shared
manifest's format. The quantized models are several MB: they stay out of
the repository (docs/perf says how the numbers were made).
"""

import json
import os
import shutil
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static


class Reader(CalibrationDataReader):
    """The b1 input, then seeded normal batches of its shape."""

    def __init__(self, name, first, seed, n=16):
        rng = np.random.default_rng(seed)
        self.batches = [first] + [rng.standard_normal(first.shape).astype(np.float32) for _ in range(n)]
        self.name = name

    def get_next(self):
        if not self.batches:
            return None
        return {self.name: self.batches.pop(0)}


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    src, out, names = sys.argv[1], sys.argv[2], sys.argv[3:]
    manifest = json.load(open(os.path.join(src, "manifest.json")))
    os.makedirs(out, exist_ok=True)
    models = {}
    for seed, name in enumerate(names):
        entry = manifest["models"][name]
        if len(entry["inputs"]) != 1:
            sys.exit(f"{name}: one input expected")
        inp = entry["inputs"][0]["name"]
        b1 = np.load(os.path.join(src, entry["cases"]["b1"]["inputs"][inp]["file"]))
        dst = os.path.join(out, name + ".onnx")
        quantize_static(os.path.join(src, entry["file"]), dst, Reader(inp, b1, seed),
                        quant_format=QuantFormat.QDQ, per_channel=True,
                        activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8)
        so = ort.SessionOptions()
        so.intra_op_num_threads = 1
        sess = ort.InferenceSession(dst, so, providers=["CPUExecutionProvider"])
        e = dict(entry)
        e["file"] = name + ".onnx"
        e["bytes"] = os.path.getsize(dst)
        e.pop("sha256", None)
        m = onnx.load(dst)
        counts = {}
        for n in m.graph.node:
            counts[n.op_type] = counts.get(n.op_type, 0) + 1
        e["op_counts"] = counts
        e["num_nodes"] = len(m.graph.node)
        cases = {}
        for cname, case in entry["cases"].items():
            d = os.path.join(out, name, cname)
            os.makedirs(d, exist_ok=True)
            c = json.loads(json.dumps(case))
            feeds = {}
            for iname, spec in case["inputs"].items():
                f = os.path.join(d, "in_" + iname + ".npy")
                shutil.copyfile(os.path.join(src, spec["file"]), f)
                feeds[iname] = np.load(f)
                c["inputs"][iname]["file"] = os.path.relpath(f, out)
            res = sess.run(None, feeds)
            for o, v in zip(sess.get_outputs(), res):
                f = os.path.join(d, "out_" + o.name + ".npy")
                np.save(f, v)
                c["outputs"][o.name]["file"] = os.path.relpath(f, out)
                c["outputs"][o.name]["abs_max"] = float(np.abs(v).max())
                c["outputs"][o.name]["std"] = float(v.std())
            cases[cname] = c
        e["cases"] = cases
        models[name] = e
        print(f"{name}: {e['bytes']} bytes, {e['num_nodes']} nodes {counts}")
    json.dump({"models": models, "generator": {"script": "scripts/quantize_qdq.py", "onnxruntime": ort.__version__,
                                               "note": "QDQ, per-channel int8 weights, uint8 activations, MinMax calibration; references are ONNX Runtime's outputs"}},
              open(os.path.join(out, "manifest.json"), "w"), indent=1)


if __name__ == "__main__":
    main()
