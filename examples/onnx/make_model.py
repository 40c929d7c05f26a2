#!/usr/bin/python3
"""make_model.py: writes classifier.onnx, a small image classifier.

    /usr/bin/python3 make_model.py [DIR]

Conv + BatchNormalization + Relu, MaxPool, Conv + Relu, GlobalAveragePool,
Flatten, Gemm, Softmax on 1x16x16 images, with a dynamic batch
(dim_param "batch") and seeded random weights (Debian's python3-onnx and
numpy).  It prints numpy's class and probability for each image of the
batch classify.c makes (pixel i of image b is sin(0.05 i (b + 1)) (b - 1.5)),
so that the two can be compared.
"""
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(1)
f32 = lambda *s, k=1.0: (rng.standard_normal(s) * k).astype(np.float32)
w1, s1, b1 = f32(8, 1, 3, 3, k=0.3), 1 + f32(8, k=0.1), f32(8, k=0.1)
m1, v1 = f32(8, k=0.1), (0.5 + rng.random(8)).astype(np.float32)
w2, b2 = f32(16, 8, 3, 3, k=0.12), f32(16, k=0.1)
fw, fb = f32(10, 16, k=2.0), f32(10, k=0.1)

inits = [numpy_helper.from_array(a, n) for a, n in
         ((w1, "w1"), (s1, "s1"), (b1, "b1"), (m1, "m1"), (v1, "v1"), (w2, "w2"), (b2, "b2"),
          (fw, "fw"), (fb, "fb"))]
N = helper.make_node
nodes = [
    N("Conv", ["image", "w1"], ["c1"], pads=[1, 1, 1, 1]),
    N("BatchNormalization", ["c1", "s1", "b1", "m1", "v1"], ["n1"]),
    N("Relu", ["n1"], ["r1"]),
    N("MaxPool", ["r1"], ["p1"], kernel_shape=[2, 2], strides=[2, 2]),
    N("Conv", ["p1", "w2", "b2"], ["c2"], pads=[1, 1, 1, 1]),
    N("Relu", ["c2"], ["r2"]),
    N("GlobalAveragePool", ["r2"], ["g"]),
    N("Flatten", ["g"], ["f"]),
    N("Gemm", ["f", "fw", "fb"], ["logits"], transB=1),
    N("Softmax", ["logits"], ["probs"], axis=1),
]
graph = helper.make_graph(
    nodes, "classifier",
    [helper.make_tensor_value_info("image", TensorProto.FLOAT, ["batch", 1, 16, 16])],
    [helper.make_tensor_value_info("probs", TensorProto.FLOAT, ["batch", 10])], inits)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
out = sys.argv[1] if len(sys.argv) > 1 else "."
with open(os.path.join(out, "classifier.onnx"), "wb") as fp:
    fp.write(model.SerializeToString())

# numpy's answer for the images classify.c makes
batch = 4
x = np.array([[np.sin(0.05 * i * (b + 1)) * (b - 1.5) for i in range(256)] for b in range(batch)],
             np.float32).reshape(batch, 1, 16, 16)


def conv(x, w, pad=1):
    n, c, h, wd = x.shape
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    y = np.zeros((n, w.shape[0], h, wd))
    for i in range(3):
        for j in range(3):
            y += np.einsum("nchw,kc->nkhw", xp[:, :, i:i + h, j:j + wd], w[:, :, i, j])
    return y


ch = lambda a: a[None, :, None, None]
h = np.maximum((conv(x, w1) - ch(m1)) / np.sqrt(ch(v1) + 1e-5) * ch(s1) + ch(b1), 0)
h = h.reshape(batch, 8, 8, 2, 8, 2).max(axis=(3, 5))
h = np.maximum(conv(h, w2) + ch(b2), 0).mean(axis=(2, 3)) @ fw.T + fb
p = np.exp(h - h.max(1, keepdims=True))
p /= p.sum(1, keepdims=True)
for b in range(batch):
    print("image %d: class %d (p = %.3f)" % (b, p[b].argmax(), p[b].max()))
