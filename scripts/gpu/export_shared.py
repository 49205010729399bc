#!/usr/bin/env python3
"""Export the shared conformance models (../shared/models) again on a GPU
machine, which does not have that folder: runs the shared export script
(models.py, from ../shared/bench/gpu) with its fixed seeds into --out, in
the same layout and manifest. Newer PyTorch defaults to the dynamo
exporter; the shared models came from the TorchScript one, so it is
asked for here.

    python3 export_shared.py MODELS_PY_DIR --out DIR [models...]
"""
import functools
import sys

import torch

sys.path.insert(0, sys.argv.pop(1))
import models  # noqa: E402  (the shared export script)

export = torch.onnx.export
try:
    torch.onnx.export = functools.partial(export, dynamo=False)
except TypeError:
    pass
models.main()
