#!/usr/bin/env python3
"""numpy_example.py: a fused operator written in tx, called on numpy arrays.

    PYTHONPATH=python TXC=./txc python3 examples/python/numpy_example.py

(from the top of the build tree; installed, plain `python3` does).  The
first run compiles gelu_bias.tx into the cache (~/.cache/txc); later runs
load the library from there.  It checks the kernel against numpy at a few
sizes, shows an error, and times both.
"""

import os
import time

import numpy as np

import txc

HERE = os.path.dirname(os.path.abspath(__file__))


def reference(x, w, b, scale):
    u = x @ w + b
    return scale * 0.5 * u * (1 + np.tanh(0.7978845608 * (u + 0.044715 * u ** 3)))


def main():
    mod = txc.load(os.path.join(HERE, "gelu_bias.tx"))
    print(mod.dense_gelu.signature())
    print("from the cache" if mod.cached else "compiled", "->", mod.path)
    rng = np.random.default_rng(0)
    for m, n, k in [(1, 1, 1), (7, 45, 19), (65, 130, 33)]:
        x = rng.standard_normal((m, k), dtype=np.float32)
        w = rng.standard_normal((k, n), dtype=np.float32)
        b = rng.standard_normal(n, dtype=np.float32)
        y = mod.dense_gelu(x, w, b, scale=2.0)          # y allocated; sizes from the shapes
        err = np.max(np.abs(y - reference(x, w, b, 2.0)), initial=0.0)
        print("M=%d N=%d K=%d: max error %.2g" % (m, n, k, err))
        assert err < 1e-3 * max(1, k)

    # an output given: written in place (here a strided view, copied back)
    out = np.zeros((7, 90), np.float32)
    x, w, b = np.ones((7, 3), np.float32), np.ones((3, 45), np.float32), np.zeros(45, np.float32)
    mod.dense_gelu(x, w, b, out[:, ::2], scale=1.0)
    assert np.allclose(out[:, ::2], reference(x, w, b, 1.0)) and not out[:, 1::2].any()

    try:
        mod.dense_gelu(x, w[:2], b, scale=1.0)
    except txc.Error as e:
        print("refused:", e)

    x = rng.standard_normal((256, 256), dtype=np.float32)
    w = rng.standard_normal((256, 256), dtype=np.float32)
    b = rng.standard_normal(256, dtype=np.float32)
    y = np.empty((256, 256), np.float32)
    for name, fn in [("txc", lambda: mod.dense_gelu(x, w, b, y, scale=1.0)),
                     ("numpy", lambda: reference(x, w, b, 1.0))]:
        fn()
        t = time.perf_counter()
        for _ in range(5):
            fn()
        print("%-6s %.2f ms" % (name, (time.perf_counter() - t) / 5 * 1e3))


if __name__ == "__main__":
    main()
