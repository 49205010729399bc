#!/usr/bin/env python3
"""Thread scaling of the cpu target against ONNX Runtime on a many-core
host (issue 19): each model of MANIFEST_DIR/manifest.json at its "b1"
binding, built with rlxc for the cpu target (native code where clang is
installed, else the portable kernels: the build's stderr says which), timed
with rlxrun bench and with onnxruntime's CPU provider at each thread count,
interleaved per count. Prints one JSON object (p50 ms) and writes it to
$OUT/scaling.json when OUT is set. With PROFILE=8,16 (thread counts) it
also appends each model's per-kernel profile at those counts to
$OUT/profiles.txt: where the time goes when adding threads stops paying.
With PREBUILT=DIR, DIR/<model>.rlx is timed instead of a build made there:
gpu-check.sh prepare builds native artifacts where clang is (with zeroed
weights, which cost the kernels the same time), since that host has none.

    python3 cpu_scaling.py BIN_DIR MANIFEST_DIR [threads, default 1,2,4,8,16]
"""
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnxruntime as ort

bindir, mdir = sys.argv[1], sys.argv[2]
threads = [int(t) for t in (sys.argv[3] if len(sys.argv) > 3 else "1,2,4,8,16").split(",")]
rlxc, rlxrun = os.path.join(bindir, "rlxc"), os.path.join(bindir, "rlxrun")
man = json.load(open(os.path.join(mdir, "manifest.json")))
tmp = tempfile.mkdtemp()
res = {"cpu": open("/proc/cpuinfo").read().split("model name")[1].split("\n")[0].strip(": \t"), "threads": threads}

for name, m in man["models"].items():
    case = m["cases"]["b1"]
    onnx = os.path.join(mdir, m["file"])
    art = os.path.join(tmp, name + ".rlx")
    pre = os.path.join(os.environ.get("PREBUILT", ""), name + ".rlx")
    if os.environ.get("PREBUILT") and os.path.exists(pre):
        art, r = pre, {"build_note": "prebuilt " + pre}
    else:
        binds = [f"--bind={k}={v}" for k, v in case["binding"].items()]
        p = subprocess.run([rlxc, "build", onnx, "--target", "cpu", "-o", art, "--no-cache"] + binds, capture_output=True, text=True)
        r = {"build_note": p.stderr.strip()[:300]}
        if p.returncode:
            res[name] = r
            continue
    feeds = {k: np.load(os.path.join(mdir, f["file"])) for k, f in case["inputs"].items()}
    inputs = [f"--input={k}=@{os.path.join(mdir, f['file'])}" for k, f in case["inputs"].items()]
    for th in threads:
        q = subprocess.run([rlxrun, "bench", art, "--json", "--threads", str(th), "--time", "1s"] + inputs, capture_output=True, text=True)
        try:
            r[f"rlx_t{th}"] = json.loads(q.stdout)["p50_ms"]
        except Exception:
            r[f"rlx_t{th}_err"] = (q.stderr or q.stdout)[-200:]
        so = ort.SessionOptions()
        so.intra_op_num_threads = th
        s = ort.InferenceSession(onnx, so, providers=["CPUExecutionProvider"])
        for _ in range(5):
            s.run(None, feeds)
        ts, t0 = [], time.time()
        while time.time() - t0 < 1.0 or len(ts) < 10:
            t = time.perf_counter()
            s.run(None, feeds)
            ts.append((time.perf_counter() - t) * 1e3)
        r[f"ort_t{th}"] = float(np.median(ts))
    for th in [int(t) for t in os.environ.get("PROFILE", "").split(",") if t]:
        q = subprocess.run([rlxrun, "bench", art, "--profile", "--threads", str(th), "--time", "1s"] + inputs, capture_output=True, text=True)
        with open(os.path.join(os.environ.get("OUT", tmp), "profiles.txt"), "a") as f:
            f.write(f"== {name} at {th} threads\n" + q.stdout + q.stderr + "\n")
    res[name] = r
    print(name, json.dumps(r), flush=True)

out = os.environ.get("OUT")
if out:
    json.dump(res, open(os.path.join(out, "scaling.json"), "w"), indent=1)
print(json.dumps(res))
