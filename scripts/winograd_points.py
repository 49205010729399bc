#!/usr/bin/python3
"""Chooses F(4x4, 3x3)'s interpolation points by their float32 error.

Run by hand (needs numpy and sympy: apt-get install python3-numpy
python3-sympy); never by CI. For every set of five distinct points from
CANDIDATES (with the point at infinity), it builds the Toom-Cook matrices
B^T, G and A^T (B^T's rows scaled to integers, G absorbing the scale:
G applies in float64 at build time, B^T and A^T in float32 at run time),
simulates a 3x3 convolution over random inputs in float32 the way rlx
runs it (input transform, products summed over channels one at a time,
output transform) and prints the sets with the least rms error against
float64, then the matrices of the best. pkg/targets/cpu/kernels/winograd
has the chosen set (f4) and docs/perf/native.md the results.

    /usr/bin/python3 scripts/winograd_points.py
"""

import itertools
import math
from fractions import Fraction as F

import numpy as np
import sympy

CANDIDATES = [F(0)] + [s * F(p) for p in ("1/4", "1/2", "3/4", "1", "3/2", "2", "4") for s in (1, -1)]


def transforms(points, m=4, r=3):
    """B^T (alpha x alpha), G (alpha x r), A^T (m x alpha) as Fractions."""
    a = m + r - 1
    rows = lambda n: [[p**k for k in range(n)] for p in points] + [[F(0)] * (n - 1) + [F(1)]]
    inv = sympy.Matrix(rows(a)).inv()  # interpolation: values -> coefficients
    bt = [[F(str(inv[j, i])) for j in range(a)] for i in range(a)]
    g = rows(r)
    for i in range(a):
        scale = math.lcm(*(x.denominator for x in bt[i]))
        two = 1
        while all((x * scale / (2 * two)).denominator == 1 for x in bt[i]):
            two *= 2
        bt[i] = [x * scale / two for x in bt[i]]
        g[i] = [x * two / scale for x in g[i]]
    at = [list(col) for col in zip(*rows(m))]
    return bt, g, at


def direct64(d, w, out):
    d, w = d.astype(np.float64), w.astype(np.float64)
    y = np.zeros((w.shape[0], out, out))
    for kh in range(3):
        for kw in range(3):
            y += np.einsum("oc,chw->ohw", w[:, :, kh, kw], d[:, kh:kh + out, kw:kw + out])
    return y


def winograd32(d, w, bt, g, at, m=4):
    bt32 = np.array(bt, dtype=np.float64).astype(np.float32)
    at32 = np.array(at, dtype=np.float64).astype(np.float32)
    gg = np.array(g, dtype=np.float64)
    a, c, tiles = m + 2, d.shape[0], (d.shape[1] - 2) // m
    u = np.einsum("ik,ockl,jl->ocij", gg, w.astype(np.float64), gg).astype(np.float32)
    idx = np.arange(tiles)[:, None] * m + np.arange(a)[None, :]
    patches = d[:, idx[:, None, :, None], idx[None, :, None, :]]
    v = np.einsum("ik,cxykl->cxyil", bt32, patches).astype(np.float32)
    v = np.einsum("cxyil,jl->cxyij", v, bt32).astype(np.float32)
    mm = np.zeros((w.shape[0], tiles, tiles, a, a), np.float32)
    for ci in range(c):  # a GEMM's sum: one channel at a time, in float32
        mm += u[:, ci][:, None, None] * v[ci][None]
    y = np.einsum("ik,oxykl->oxyil", at32, mm).astype(np.float32)
    y = np.einsum("oxyil,jl->oxyij", y, at32).astype(np.float32)
    return y.transpose(0, 1, 3, 2, 4).reshape(w.shape[0], tiles * m, tiles * m)


def main():
    cases = []
    for c, relu, seed in ((64, False, 1), (256, True, 2), (512, True, 3)):
        rng = np.random.default_rng(seed)
        d = rng.standard_normal((c, 26, 26)).astype(np.float32)
        if relu:
            d = np.maximum(d, 0)
        w = (rng.standard_normal((8, c, 3, 3)) / np.sqrt(9 * c)).astype(np.float32)
        cases.append((d, w, direct64(d, w, 24)))
    results = []
    for points in itertools.combinations(CANDIDATES, 5):
        if tuple(sorted(-p for p in points)) < tuple(sorted(points)):
            continue  # the negated set has the same error
        bt, g, at = transforms(list(points))
        err = 1.0
        for d, w, ref in cases:
            e = winograd32(d, w, bt, g, at) - ref
            err *= np.sqrt((e**2).mean() / (ref**2).mean())
        nonzero = sum(x != 0 for row in bt for x in row)
        results.append((err ** (1 / len(cases)), [str(p) for p in points], nonzero))
    results.sort()
    lavin = [r for r in results if sorted(r[1]) == sorted(["0", "1", "-1", "2", "-2"])]
    print("relative rms error (geometric mean over the cases), points, nonzero B^T entries")
    for r in results[:10] + lavin:
        print("%.3e  %-28s %d" % (r[0], ", ".join(r[1]), r[2]))
    bt, g, at = transforms([F(p) for p in results[0][1]])
    for name, mat in (("B^T", bt), ("G", g), ("A^T", at)):
        print(name)
        for row in mat:
            print("  ", ", ".join(str(x) for x in row))


if __name__ == "__main__":
    main()
