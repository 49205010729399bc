#!/usr/bin/env python3
"""Compare rlxrun builds across thread counts on a many-core host (issue
19): each VARIANTS_DIR/rlxrun-<name> times each model of
MANIFEST_DIR/manifest.json at its "b1" binding from the prebuilt
artifact ARTIFACT_DIR/<model>.rlx, at each thread count, the variants
interleaved and the whole repeated for several rounds (that host's
timings swing between identical runs). Prints the lowest p50 (ms) per
model, thread count and variant, and writes them to $OUT/variants.json
when OUT is set. gpu-check.sh prepare builds the variants from git refs
(VARIANTS="name=ref ...") and the artifacts; gpu-check.sh run calls this.

    python3 variants.py VARIANTS_DIR ARTIFACT_DIR MANIFEST_DIR [threads] [rounds]
"""
import json
import os
import subprocess
import sys

vdir, adir, mdir = sys.argv[1], sys.argv[2], sys.argv[3]
threads = [int(t) for t in (sys.argv[4] if len(sys.argv) > 4 else "1,4,8,16").split(",")]
rounds = int(sys.argv[5]) if len(sys.argv) > 5 else 2
variants = sorted(f[len("rlxrun-"):] for f in os.listdir(vdir) if f.startswith("rlxrun-"))
man = json.load(open(os.path.join(mdir, "manifest.json")))
best = {}
for r in range(rounds):
    for name, m in man["models"].items():
        art = os.path.join(adir, name + ".rlx")
        if not os.path.exists(art):
            continue
        case = m["cases"]["b1"]
        inputs = [f"--input={k}=@{os.path.join(mdir, f['file'])}" for k, f in case["inputs"].items()]
        for th in threads:
            for v in variants:
                q = subprocess.run([os.path.join(vdir, "rlxrun-" + v), "bench", art, "--json", "--threads", str(th), "--time", "0.6s"] + inputs,
                                   capture_output=True, text=True)
                try:
                    p50 = json.loads(q.stdout)["p50_ms"]
                except Exception:
                    print(name, th, v, "error:", (q.stderr or q.stdout)[-200:], flush=True)
                    continue
                key = (name, th, v)
                best[key] = min(best.get(key, p50), p50)
print("lowest p50 ms over %d rounds; threads %s" % (rounds, threads))
print("model".ljust(14) + "".join(v.rjust(12) for v in variants) + "  threads")
for name in man["models"]:
    for th in threads:
        row = [best.get((name, th, v)) for v in variants]
        if any(x is not None for x in row):
            print(name.ljust(14) + "".join(("%.3f" % x if x is not None else "-").rjust(12) for x in row) + "  %d" % th)
out = os.environ.get("OUT")
if out:
    json.dump({"%s/%d/%s" % k: v for k, v in best.items()}, open(os.path.join(out, "variants.json"), "w"), indent=1)
