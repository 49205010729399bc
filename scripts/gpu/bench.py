#!/usr/bin/env python3
"""Time rlx cuda artifacts of exported models on a GPU machine: each
model of MANIFEST_DIR/manifest.json at its "b1" binding, built with rlxc,
run with rlxrun bench with the launches replayed as a CUDA graph and one
by one (RLX_CUDA_GRAPH=0), and once profiled (each kernel's device time,
the top rows kept); with PRECISION=1, built again with --precision tf32
and bf16 (tensor cores), each checked against PyTorch's outputs at its
bar (1e-2 and 6e-2, e2e's precisionTol) and replayed as a graph. Prints
one JSON object and writes it to $OUT/bench.json
when OUT is set.

    python3 bench.py BIN_DIR MANIFEST_DIR [runs]
"""
import json
import os
import subprocess
import sys
import tempfile

bindir, mdir = sys.argv[1], sys.argv[2]
runs = sys.argv[3] if len(sys.argv) > 3 else "300"
rlxc, rlxrun = os.path.join(bindir, "rlxc"), os.path.join(bindir, "rlxrun")
man = json.load(open(os.path.join(mdir, "manifest.json")))
tmp = tempfile.mkdtemp()
res = {}


def bench(art, inputs, env=None, profile=False):
    cmd = [rlxrun, "bench", art, "--json", "--runs", "30" if profile else runs] + inputs
    if profile:
        cmd.append("--profile")
    p = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ, **(env or {})))
    if p.returncode:
        return {"err": (p.stderr or p.stdout)[-300:]}
    return json.loads(p.stdout)


for name, m in man["models"].items():
    case = m["cases"]["b1"]
    art = os.path.join(tmp, name + ".rlx")
    binds = [f"--bind={k}={v}" for k, v in case["binding"].items()]
    p = subprocess.run([rlxc, "build", os.path.join(mdir, m["file"]), "--target", "cuda", "-o", art, "--no-cache"] + binds,
                       capture_output=True, text=True)
    if p.returncode:
        res[name] = {"build_err": p.stderr[-300:]}
        print(name, res[name], flush=True)
        continue
    inputs = [f"--input={k}=@{os.path.join(mdir, f['file'])}" for k, f in case["inputs"].items()]
    r = {}
    g = bench(art, inputs)
    r["graph_p50_ms"] = g.get("p50_ms", g.get("err"))
    n = bench(art, inputs, {"RLX_CUDA_GRAPH": "0"})
    r["launches_p50_ms"] = n.get("p50_ms", n.get("err"))
    pr = bench(art, inputs, profile=True)
    if "err" in pr:
        r["profile_err"] = pr["err"]
    else:
        rows = pr.get("profile") or []
        r["profile_sum_ms"] = round(sum(x["ms_per_run"] for x in rows), 4)
        r["profile_top"] = [[x["kind"], x["src"], round(x["ms_per_run"], 4), round(x["percent"], 1)] for x in rows[:12]]
    # The same model with its products on tensor cores: tf32 against
    # PyTorch's defaults (cuDNN convolutions in TF32), bf16 beside it.
    precisions = (("tf32", "1e-2"), ("bf16", "6e-2")) if os.environ.get("PRECISION") == "1" else ()
    for prec, bar in precisions:
        artp = os.path.join(tmp, name + "." + prec + ".rlx")
        p = subprocess.run([rlxc, "build", os.path.join(mdir, m["file"]), "--target", "cuda", "--precision", prec, "-o", artp, "--no-cache"] + binds,
                           capture_output=True, text=True)
        if p.returncode:
            r[prec + "_build_err"] = p.stderr[-300:]
            continue
        expect = [f"--expect={k}=@{os.path.join(mdir, f['file'])}" for k, f in case["outputs"].items()]
        c = subprocess.run([rlxrun, artp, "--atol", bar, "--rtol", bar] + inputs + expect, capture_output=True, text=True)
        r[prec + "_check"] = "ok" if c.returncode == 0 else (c.stderr or c.stdout)[-300:]
        g = bench(artp, inputs)
        r[prec + "_graph_p50_ms"] = g.get("p50_ms", g.get("err"))
    res[name] = r
    print(name, json.dumps(r), flush=True)

out = os.environ.get("OUT")
if out:
    json.dump(res, open(os.path.join(out, "bench.json"), "w"), indent=1)
print(json.dumps(res))
