#!/usr/bin/python3
"""genmodels.py: small networks as .onnx files, with numpy's outputs.

    /usr/bin/python3 genmodels.py DIR [NAME ...]

Writes, for each model, DIR/NAME.onnx (Debian's python3-onnx, weights
from a seeded generator), its inputs and numpy's reference outputs as raw
little-endian float32 files, and DIR/NAME.meta, which tests/onnx/models.c
reads: the entry point's call (txc(1) ONNX MODELS: size parameters, then
inputs, then outputs) and, for each run, the sizes, the input files and
the output files with their element counts.  tests/onnx/models.sh and
examples/onnx use it.

    mlp          Gemm, Relu, Gemm, Softmax
    lenet        Conv, Relu, MaxPool twice, Flatten, Gemm, Relu, Gemm
    resnet_tiny  Conv + BatchNormalization + Relu, two residual blocks (Add,
                 a strided one with a 1x1 projection), GlobalAveragePool,
                 Flatten, Gemm
    gated-mlp    a layer norm written from ReduceMean, Sub, Mul, Add, Sqrt,
                 Div; a gated MLP (MatMul, Sigmoid, Mul); a residual Add
    bn_runtime   Conv, then BatchNormalization whose mean and variance are
                 inputs (a stage of its own), Relu, then one with known
                 statistics after the Relu (a scale and a shift), then a
                 Conv of 2 groups with a bias and a BatchNormalization
                 folded into it
    outputs      three outputs: a stage, a Constant and a graph input (the
                 last two copied into the entry point's outputs)
    dynamic      input [N, 3, H, 8] (dim_param N and H): Conv, Relu,
                 GlobalAveragePool, Flatten, Gemm; run at two sizes
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

F = TensorProto.FLOAT
rng = np.random.default_rng(2026)


def rand(*shape, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


class Net:
    """A graph under construction: nodes, initializers, unique names."""

    def __init__(self):
        self.nodes, self.inits, self.k = [], [], 0

    def name(self, hint):
        self.k += 1
        return "%s_%d" % (hint, self.k)

    def const(self, a, hint="w"):
        n = self.name(hint)
        self.inits.append(numpy_helper.from_array(np.asarray(a), n))
        return n

    def op(self, op, ins, **attrs):
        out = self.name(op.lower())
        self.nodes.append(helper.make_node(op, ins, [out], name=out, **attrs))
        return out

    def model(self, inputs, outputs, opset=13):
        g = helper.make_graph(self.nodes, "net", inputs, outputs, self.inits)
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
        m.ir_version = 8
        onnx.checker.check_model(m)
        return m


# ---- numpy references (float64) ----------------------------------------------

def np_conv(x, w, b=None, stride=1, pad=0):
    n, c, h, wd = x.shape
    k, _, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    ho, wo = (h + 2 * pad - kh) // stride + 1, (wd + 2 * pad - kw) // stride + 1
    out = np.zeros((n, k, ho, wo))
    for i in range(kh):
        for j in range(kw):
            patch = xp[:, :, i:i + stride * ho:stride, j:j + stride * wo:stride]
            out += np.einsum("nchw,kc->nkhw", patch, w[:, :, i, j])
    if b is not None:
        out += b[None, :, None, None]
    return out


def np_bn(x, s, b, m, v, eps=1e-5):
    r = lambda a: a[None, :, None, None]
    return (x - r(m)) / np.sqrt(r(v) + eps) * r(s) + r(b)


def np_maxpool2(x):
    n, c, h, w = x.shape
    return x.reshape(n, c, h // 2, 2, w // 2, 2).max(axis=(3, 5))


def relu(x):
    return np.maximum(x, 0)


def softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def vi(name, shape):
    return helper.make_tensor_value_info(name, F, shape)


# ---- the models: each returns (model, call, runs); a run is (sizes, inputs,
# outputs) with numpy arrays ------------------------------------------------------

def mlp():
    t = Net()
    w1, b1, w2, b2 = rand(32, 16, scale=0.25), rand(32), rand(10, 32, scale=0.18), rand(10)
    h = t.op("Relu", [t.op("Gemm", ["x", t.const(w1), t.const(b1)], transB=1)])
    y = t.op("Softmax", [t.op("Gemm", [h, t.const(w2), t.const(b2)], transB=1)], axis=-1)
    t.nodes[-1].output[0] = "y"
    m = t.model([vi("x", [4, 16])], [vi("y", [4, 10])])
    x = rand(4, 16)
    ref = softmax(relu(x @ w1.T + b1) @ w2.T + b2)
    return m, "mlp(in[0], out[0])", [([], [x], [ref])]


def lenet():
    t = Net()
    c1, cb1 = rand(6, 1, 5, 5, scale=0.2), rand(6, scale=0.1)
    c2, cb2 = rand(16, 6, 5, 5, scale=0.08), rand(16, scale=0.1)
    f1, fb1 = rand(32, 64, scale=0.12), rand(32, scale=0.1)
    f2, fb2 = rand(10, 32, scale=0.18), rand(10, scale=0.1)
    h = t.op("Conv", ["x", t.const(c1), t.const(cb1)], pads=[2, 2, 2, 2], kernel_shape=[5, 5])
    h = t.op("MaxPool", [t.op("Relu", [h])], kernel_shape=[2, 2], strides=[2, 2])
    h = t.op("Conv", [h, t.const(c2), t.const(cb2)])
    h = t.op("MaxPool", [t.op("Relu", [h])], kernel_shape=[2, 2], strides=[2, 2])
    h = t.op("Flatten", [h], axis=1)
    h = t.op("Relu", [t.op("Gemm", [h, t.const(f1), t.const(fb1)], transB=1)])
    t.op("Gemm", [h, t.const(f2.T.copy()), t.const(fb2)])
    t.nodes[-1].output[0] = "logits"
    m = t.model([vi("x", [2, 1, 16, 16])], [vi("logits", [2, 10])])
    x = rand(2, 1, 16, 16)
    r = np_maxpool2(relu(np_conv(x, c1, cb1, pad=2)))
    r = np_maxpool2(relu(np_conv(r, c2, cb2)))
    r = relu(r.reshape(2, -1) @ f1.T + fb1) @ f2.T + fb2
    return m, "lenet(in[0], out[0])", [([], [x], [r])]


def resnet_tiny():
    t = Net()
    ref_ops = []

    def conv_bn(x, xr, cin, cout, k, stride, act):
        w = rand(cout, cin, k, k, scale=1.0 / np.sqrt(cin * k * k))
        s, b = 1 + 0.1 * rand(cout), 0.1 * rand(cout)
        mu, var = 0.1 * rand(cout), (0.5 + rng.random(cout)).astype(np.float32)
        h = t.op("Conv", [x, t.const(w)], pads=[k // 2] * 4, strides=[stride, stride])
        h = t.op("BatchNormalization", [h, t.const(s), t.const(b), t.const(mu), t.const(var)])
        r = np_bn(np_conv(xr, w, stride=stride, pad=k // 2), s, b, mu, var)
        if act:
            return t.op("Relu", [h]), relu(r)
        return h, r

    x = rand(2, 3, 16, 16)
    h, r = conv_bn("x", x, 3, 8, 3, 1, True)
    a, ar = conv_bn(h, r, 8, 8, 3, 1, True)
    a, ar = conv_bn(a, ar, 8, 8, 3, 1, False)
    h, r = t.op("Relu", [t.op("Add", [a, h])]), relu(ar + r)
    a, ar = conv_bn(h, r, 8, 16, 3, 2, True)
    a, ar = conv_bn(a, ar, 16, 16, 3, 1, False)
    p, pr = conv_bn(h, r, 8, 16, 1, 2, False)
    h, r = t.op("Relu", [t.op("Add", [a, p])]), relu(ar + pr)
    h, r = t.op("GlobalAveragePool", [h]), r.mean(axis=(2, 3), keepdims=True)
    h, r = t.op("Flatten", [h]), r.reshape(2, -1)
    fw, fb = rand(10, 16, scale=0.25), rand(10)
    t.op("Gemm", [h, t.const(fw), t.const(fb)], transB=1)
    t.nodes[-1].output[0] = "y"
    m = t.model([vi("x", [2, 3, 16, 16])], [vi("y", [2, 10])])
    return m, "resnet_tiny(in[0], out[0])", [([], [x], [r @ fw.T + fb])]


def gated_mlp():
    t = Net()
    d, hdim = 32, 48
    g, bt = 1 + 0.1 * rand(d), 0.1 * rand(d)
    w1, w2, w3 = rand(d, hdim, scale=0.18), rand(d, hdim, scale=0.18), rand(hdim, d, scale=0.14)
    mu = t.op("ReduceMean", ["x"], axes=[-1], keepdims=1)
    dv = t.op("Sub", ["x", mu])
    var = t.op("ReduceMean", [t.op("Mul", [dv, dv])], axes=[-1], keepdims=1)
    sd = t.op("Sqrt", [t.op("Add", [var, t.const(np.array(1e-5, np.float32), "eps")])])
    nrm = t.op("Add", [t.op("Mul", [t.op("Div", [dv, sd]), t.const(g)]), t.const(bt)])
    a = t.op("MatMul", [nrm, t.const(w1)])
    b = t.op("MatMul", [nrm, t.const(w2)])
    hgt = t.op("Mul", [a, t.op("Sigmoid", [b])])
    t.op("Add", ["x", t.op("MatMul", [hgt, t.const(w3)])])
    t.nodes[-1].output[0] = "y"
    m = t.model([vi("x", [2, 5, d])], [vi("y", [2, 5, d])])
    x = rand(2, 5, d)
    xd = x - x.mean(-1, keepdims=True)
    n = xd / np.sqrt((xd * xd).mean(-1, keepdims=True) + 1e-5) * g + bt
    av, bv = n @ w1, n @ w2
    ref = x + (av / (1 + np.exp(-bv))) @ w3
    return m, "gated_mlp(in[0], out[0])", [([], [x], [ref])]


def bn_runtime():
    t = Net()
    w = rand(4, 3, 3, 3, scale=0.2)
    s, b = 1 + 0.1 * rand(4), 0.1 * rand(4)
    s2, b2, m2, v2 = 1 + 0.1 * rand(4), 0.1 * rand(4), 0.1 * rand(4), 0.5 + rng.random(4)
    h = t.op("Conv", ["x", t.const(w)], pads=[1, 1, 1, 1])
    h = t.op("Relu", [t.op("BatchNormalization", [h, t.const(s), t.const(b), "mean", "var"],
                           epsilon=1e-3)])
    h = t.op("BatchNormalization", [h, t.const(s2), t.const(b2), t.const(m2),
                                    t.const(v2.astype(np.float32))])
    wg, bg = rand(4, 2, 3, 3, scale=0.3), rand(4, scale=0.1)
    s3, b3, m3, v3 = 1 + 0.1 * rand(4), 0.1 * rand(4), 0.1 * rand(4), 0.5 + rng.random(4)
    h = t.op("Conv", [h, t.const(wg), t.const(bg)], pads=[1, 1, 1, 1], group=2)
    t.op("BatchNormalization", [h, t.const(s3), t.const(b3), t.const(m3),
                                t.const(v3.astype(np.float32))], epsilon=1e-4)
    t.nodes[-1].output[0] = "y"
    m = t.model([vi("x", [2, 3, 6, 6]), vi("mean", [4]), vi("var", [4])], [vi("y", [2, 4, 6, 6])])
    x, mean, var = rand(2, 3, 6, 6), 0.1 * rand(4), (0.5 + rng.random(4)).astype(np.float32)
    r = relu(np_bn(np_conv(x, w, pad=1), s, b, mean, var, eps=1e-3))
    r = np_bn(r, s2, b2, m2, v2)
    r = np.concatenate([np_conv(r[:, 2 * i:2 * i + 2], wg[2 * i:2 * i + 2], bg[2 * i:2 * i + 2],
                                pad=1) for i in range(2)], axis=1)
    r = np_bn(r, s3, b3, m3, v3, eps=1e-4)
    return m, "bn_runtime(in[0], in[1], in[2], out[0])", [([], [x, mean, var], [r])]


def outputs():
    t = Net()
    c = np.array([[1.5, -2.0, 0.25]], np.float32)
    t.nodes.append(helper.make_node("Constant", [], ["c"], value=numpy_helper.from_array(c)))
    t.op("Relu", ["x"])
    t.nodes[-1].output[0] = "y"
    m = t.model([vi("x", [2, 3])], [vi("y", [2, 3]), vi("c", [1, 3]), vi("x", [2, 3])])
    x = rand(2, 3)
    return m, "outputs(in[0], out[0], out[1], out[2])", [([], [x], [relu(x), c, x])]


def dynamic():
    t = Net()
    w, b = rand(4, 3, 3, 3, scale=0.2), rand(4, scale=0.1)
    fw, fb = rand(5, 4, scale=0.5), rand(5)
    h = t.op("Relu", [t.op("Conv", ["x", t.const(w), t.const(b)], pads=[1, 1, 1, 1])])
    h = t.op("Flatten", [t.op("GlobalAveragePool", [h])])
    t.op("Gemm", [h, t.const(fw), t.const(fb)], transB=1)
    t.nodes[-1].output[0] = "y"
    m = t.model([vi("x", ["N", 3, "H", 8])], [vi("y", ["N", 5])])
    runs = []
    for n, hh in ((2, 6), (3, 11)):
        x = rand(n, 3, hh, 8)
        r = relu(np_conv(x, w, b, pad=1)).mean(axis=(2, 3)) @ fw.T + fb
        runs.append(([n, hh], [x], [r]))
    return m, "dynamic(s[0], s[1], in[0], out[0])", runs


MODELS = {"mlp": mlp, "lenet": lenet, "resnet_tiny": resnet_tiny, "gated-mlp": gated_mlp,
          "bn_runtime": bn_runtime, "outputs": outputs, "dynamic": dynamic}


def write(out, name):
    m, call, runs = MODELS[name]()
    onnx.save(m, os.path.join(out, name + ".onnx"))
    meta = ["call " + call]
    for i, (sizes, ins, outs) in enumerate(runs):
        meta.append("sizes %d %s" % (len(sizes), " ".join(map(str, sizes))))
        for kind, arrs in (("in", ins), ("out", outs)):
            for j, a in enumerate(arrs):
                f = "%s.%d.%s%d.bin" % (name, i, kind, j)
                np.asarray(a, np.float32).tofile(os.path.join(out, f))
                meta.append("%s %d %d %s" % (kind, j, a.size, f))
        meta.append("run")
    with open(os.path.join(out, name + ".meta"), "w") as f:
        f.write("\n".join(meta) + "\n")


if __name__ == "__main__":
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for name in sys.argv[2:] or MODELS:
        write(out, name)
