#!/usr/bin/python3
"""Converts a float32 ONNX model to float16, as an fp16 export has it:
every FLOAT initializer, Constant, graph input, output and value_info
becomes FLOAT16. Run by hand (docs/perf/models.md, "A half-precision
ResNet-18"), never by CI:

    /usr/bin/python3 scripts/to_fp16.py ../shared/models/resnet18.onnx /tmp/r18_16.onnx

Enough for convolutional models (Conv, Relu, MaxPool, Add, pools, Gemm);
a model whose float inputs must stay float32 (Resize's scales, shape
arithmetic cast to float) needs those kept by hand.
"""

import sys

import numpy as np
import onnx
from onnx import TensorProto, numpy_helper


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    m = onnx.load(sys.argv[1])
    g = m.graph
    for i, t in enumerate(g.initializer):
        if t.data_type == TensorProto.FLOAT:
            g.initializer[i].CopyFrom(numpy_helper.from_array(numpy_helper.to_array(t).astype(np.float16), t.name))
    for v in list(g.input) + list(g.output) + list(g.value_info):
        if v.type.tensor_type.elem_type == TensorProto.FLOAT:
            v.type.tensor_type.elem_type = TensorProto.FLOAT16
    for n in g.node:
        for a in n.attribute:
            if n.op_type == "Constant" and a.name == "value" and a.t.data_type == TensorProto.FLOAT:
                a.t.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(a.t).astype(np.float16), a.t.name))
    onnx.checker.check_model(m)
    onnx.save(m, sys.argv[2])


if __name__ == "__main__":
    main()
