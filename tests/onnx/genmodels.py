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

Models shaped like exporters' output, each run at two sizes of its
dynamic dimensions (references checked against onnxruntime 1.30 too):

    ocr_cls      a mobile OCR direction classifier, input [N, 3, H, W]:
                 Conv + BatchNormalization + HardSwish (stride 2), a
                 depthwise Conv, squeeze-and-excitation (GlobalAveragePool,
                 Conv, Relu, HardSigmoid, Mul), MaxPool, then PyTorch's
                 x.reshape(b, c, h * w).sum(2) / (h * w) (Shape, Gather,
                 Mul, Unsqueeze, Concat, Reshape, ReduceSum, Cast, Div),
                 Gemm, Softmax; opset 17
    audio_cnn    an audio embedding CNN, input [B, 8, T]: Conv1d +
                 BatchNormalization + Relu, MaxPool over time, a Slice
                 whose end is Shape - 1, AveragePool, ReduceMean over time,
                 Gemm, an L2 norm of Mul, ReduceSum, Sqrt, Div
    logmel_cnn   an audio embedding CNN on a waveform [B, T]: a log-mel
                 front end (the STFT as a Conv1d of stride 16 with a DFT
                 basis, Slice, Pow, Add, Transpose, MatMul, Log), Conv,
                 Relu, MaxPool, ReduceMean, Gemm, ReduceL2, Div
    mlp_dyn      x.view(x.size(0), -1) of [batch, 4, 5], MatMul + Add,
                 Relu twice, Gemm, Softmax
    mobilenet_v2 input [N, 3, H, W]: inverted residual blocks (1x1 Conv,
                 depthwise 3x3, ReLU6 as Clip with bounds as inputs, a
                 stride 2 one), GlobalAveragePool, Flatten, Gemm
    gated_norm   input [B, T, 16]: an RMS norm and a layer norm of
                 ReduceMean, Pow, Add, Sqrt, Div, Mul, Sub; a SiLU-gated
                 MLP (MatMul, Sigmoid, Mul); LayerNormalization; the last
                 step (Gather -1 on axis 1); MatMul by a vector; opset 17
    shape_ops    input [N, L, 8]: Range, Cast, Unsqueeze, ConstantOfShape
                 of Shape, Expand to a shape from Concat, Equal and Where
                 (PyTorch's expand), Gelu of Erf, Pad, Slices, Split,
                 Transpose, Softmax over L
    resnet_nchwc ResNet-18's shapes at small size, with channels in blocks
                 of 16 (onnx/layout.c's NCHW16c): a 7x7/2 Conv of the plain
                 image, a 3x3/2 MaxPool, a basic block, a strided one with a
                 1x1/2 projection, GlobalAveragePool, Flatten, Gemm; the
                 last block's output is an output too (never blocked); its
                 8 x 8 and 4 x 4 layers flat (rows and columns one axis),
                 a residual Add of a flat and a plain blocked value
    d2s_lrn      input [batch, 8, 3, 3]: DepthToSpace (DCR, blocksize 2),
                 LRN, ArgMax over the rows cast to float; run at two batch
                 sizes
    upsample     input [N, 4, H, W]: Resize nearest (asymmetric floor x2,
                 half_pixel round_prefer_floor x3 by x2, a x0.5
                 downscale), Resize linear (half_pixel, align_corners),
                 ConvTranspose (3x3 stride 2 with pads and
                 output_padding and a bias, 2x2 stride 2 of 2 groups, 3x3
                 dilation 2): eight outputs
"""
import json
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

    def ops(self, op, ins, nout, **attrs):
        outs = [self.name(op.lower()) for _ in range(nout)]
        self.nodes.append(helper.make_node(op, ins, outs, name=outs[0], **attrs))
        return outs

    def ints(self, v, hint="c"):
        return self.const(np.array(v, np.int64), hint)

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


def np_maxpool(x, k, s, p):
    n, c, h, w = x.shape
    xp = np.pad(x, ((0, 0), (0, 0), (p, p), (p, p)), constant_values=-np.inf)
    ho, wo = (h + 2 * p - k) // s + 1, (w + 2 * p - k) // s + 1
    out = np.full((n, c, ho, wo), -np.inf)
    for i in range(k):
        for j in range(k):
            out = np.maximum(out, xp[:, :, i:i + s * ho:s, j:j + s * wo:s])
    return out


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


def resnet_nchwc():
    t = Net()

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

    x = rand(1, 3, 30, 30)
    h, r = conv_bn("x", x, 3, 16, 7, 2, True)
    h, r = t.op("MaxPool", [h], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]), \
        np_maxpool(r, 3, 2, 1)
    a, ar = conv_bn(h, r, 16, 16, 3, 1, True)
    a, ar = conv_bn(a, ar, 16, 16, 3, 1, False)
    h, r = t.op("Relu", [t.op("Add", [a, h])]), relu(ar + r)
    a, ar = conv_bn(h, r, 16, 32, 3, 2, True)
    a, ar = conv_bn(a, ar, 32, 32, 3, 1, False)
    p, pr = conv_bn(h, r, 16, 32, 1, 2, False)
    h, r = t.op("Relu", [t.op("Add", [a, p])]), relu(ar + pr)
    t.nodes[-1].output[0] = "z"
    h, r2 = t.op("GlobalAveragePool", ["z"]), r.mean(axis=(2, 3), keepdims=True)
    h, r2 = t.op("Flatten", [h]), r2.reshape(1, -1)
    fw, fb = rand(10, 32, scale=0.25), rand(10)
    t.op("Gemm", [h, t.const(fw), t.const(fb)], transB=1)
    t.nodes[-1].output[0] = "y"
    m = t.model([vi("x", [1, 3, 30, 30])], [vi("y", [1, 10]), vi("z", [1, 32, 4, 4])])
    return m, "resnet_nchwc(in[0], out[0], out[1])", [([], [x], [r2 @ fw.T + fb, r])]


def conv_out():
    # convolutions whose input is blocked (NCHW16c, a convolution's result)
    # and whose output is a graph output: K = 6 (no whole block: the
    # stdlib's call, which reads NCHW, must not be given the blocked
    # tensor), a 1 x 1 with K = 16 and a 7 x 7 image (flat rows)
    t = Net()
    w1, b1 = rand(16, 5, 3, 3, scale=0.2), rand(16, scale=0.1)
    w2, b2 = rand(6, 16, 3, 3, scale=0.1), rand(6, scale=0.1)
    w3 = rand(16, 16, 1, 1, scale=0.25)
    h = t.op("Relu", [t.op("Conv", ["x", t.const(w1), t.const(b1)], pads=[1, 1, 1, 1])])
    t.op("Conv", [h, t.const(w2), t.const(b2)], pads=[1, 1, 1, 1])
    t.nodes[-1].output[0] = "y"
    t.op("Conv", [h, t.const(w3)])
    t.nodes[-1].output[0] = "z"
    m = t.model([vi("x", [2, 5, 7, 7])], [vi("y", [2, 6, 7, 7]), vi("z", [2, 16, 7, 7])])
    x = rand(2, 5, 7, 7)
    r = relu(np_conv(x, w1, b1, pad=1))
    return m, "conv_out(in[0], out[0], out[1])", [([], [x], [np_conv(r, w2, b2, pad=1),
                                                            np_conv(r, w3)])]


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


# ---- models shaped like exporters' output (PyTorch, tf2onnx): dynamic
# dimensions given at run time, shape arithmetic folded by txc ------------------

def np_convg(x, w, b=None, stride=1, pad=0, group=1, dil=1):
    """Conv of any group count, 1-D (x [N, C, L]) or 2-D."""
    one = x.ndim == 3
    if one:
        x, w = x[:, :, None, :], w[:, :, None, :]
    n, c, h, wd = x.shape
    k, cg, kh, kw = w.shape
    ph = 0 if one else pad
    xp = np.pad(x, ((0, 0), (0, 0), (ph, ph), (pad, pad)))
    sh = 1 if one else stride
    ho = (h + 2 * ph - dil * (kh - 1) - 1) // sh + 1
    wo = (wd + 2 * pad - dil * (kw - 1) - 1) // stride + 1
    out = np.zeros((n, k, ho, wo))
    kg = k // group
    for gi in range(group):
        xs, ws = xp[:, gi * cg:(gi + 1) * cg], w[gi * kg:(gi + 1) * kg]
        for i in range(kh):
            for j in range(kw):
                patch = xs[:, :, dil * i:dil * i + sh * ho:sh, dil * j:dil * j + stride * wo:stride]
                out[:, gi * kg:(gi + 1) * kg] += np.einsum("nchw,kc->nkhw", patch, ws[:, :, i, j])
    if b is not None:
        out += b[None, :, None, None]
    return out[:, :, 0, :] if one else out


def np_bnr(x, s, b, m, v, eps=1e-5):
    sh = (1, -1) + (1,) * (x.ndim - 2)
    return (x - m.reshape(sh)) / np.sqrt(v.reshape(sh) + eps) * s.reshape(sh) + b.reshape(sh)


def hswish(x):
    return x * np.clip(x / 6 + 0.5, 0, 1)


def conv_bn(t, x, xr, cin, cout, k, stride=1, group=1, act=None, one=False):
    """Conv (no bias) + BatchNormalization (+ an activation), as PyTorch
    exports an nn.Conv + nn.BatchNorm pair in eval mode."""
    shape = (cout, cin // group, k) if one else (cout, cin // group, k, k)
    w = rand(*shape, scale=1.0 / np.sqrt(cin // group * k * k))
    s, b = 1 + 0.1 * rand(cout), 0.1 * rand(cout)
    mu, var = 0.1 * rand(cout), (0.5 + rng.random(cout)).astype(np.float32)
    nsp = 1 if one else 2
    h = t.op("Conv", [x, t.const(w)], pads=[k // 2] * 2 * nsp, strides=[stride] * nsp,
             group=group, kernel_shape=[k] * nsp)
    h = t.op("BatchNormalization", [h, t.const(s), t.const(b), t.const(mu), t.const(var)])
    r = np_bnr(np_convg(xr, w, stride=stride, pad=k // 2, group=group), s, b, mu, var)
    if act == "relu":
        return t.op("Relu", [h]), relu(r)
    if act == "relu6":
        return t.op("Clip", [h, t.const(np.float32(0), "lo"), t.const(np.float32(6), "hi")]), \
            np.clip(r, 0, 6)
    if act == "hswish":
        return t.op("HardSwish", [h]), hswish(r)
    return h, r


def dim(t, x, i):
    """Shape(x)[i] as PyTorch writes x.size(i): a scalar int64."""
    return t.op("Gather", [t.op("Shape", [x]), t.const(np.int64(i), "i")], axis=0)


def unsq(t, s):
    return t.op("Unsqueeze", [s, t.ints([0], "axes")])


def ocr_cls():
    t = Net()
    runs_x = [rand(1, 3, 13, 30), rand(2, 3, 16, 21)]
    # one graph, built again for each run's reference from the same seed
    saved = rng.bit_generator.state
    def build(xr):
        rng.bit_generator.state = saved
        t.nodes, t.inits, t.k = [], [], 0
        h, r = conv_bn(t, "x", xr, 3, 8, 3, stride=2, act="hswish")
        h, r = conv_bn(t, h, r, 8, 8, 3, group=8, act="relu")
        # squeeze and excitation
        sw1, sb1 = rand(4, 8, 1, 1, scale=0.35), rand(4, scale=0.1)
        sw2, sb2 = rand(8, 4, 1, 1, scale=0.5), rand(8, scale=0.1)
        se = t.op("GlobalAveragePool", [h])
        se = t.op("Relu", [t.op("Conv", [se, t.const(sw1), t.const(sb1)])])
        se = t.op("HardSigmoid", [t.op("Conv", [se, t.const(sw2), t.const(sb2)])],
                  alpha=1.0 / 6, beta=0.5)
        h = t.op("Mul", [h, se])
        ser = relu(np_convg(r.mean(axis=(2, 3), keepdims=True), sw1, sb1))
        ser = np.clip(np_convg(ser, sw2, sb2) / 6 + 0.5, 0, 1)
        r = r * ser
        h, r = conv_bn(t, h, r, 8, 16, 1, act="hswish")
        h = t.op("MaxPool", [h], kernel_shape=[2, 2], strides=[2, 2])
        n, c, hh, ww = r.shape
        r = r[:, :, :hh // 2 * 2, :ww // 2 * 2].reshape(n, c, hh // 2, 2, ww // 2, 2).max(axis=(3, 5))
        # b, c, h, w = x.shape; x.reshape(b, c, h * w).sum(2) / (h * w)
        hw = t.op("Mul", [dim(t, h, 2), dim(t, h, 3)])
        shp = t.op("Concat", [unsq(t, dim(t, h, 0)), unsq(t, dim(t, h, 1)), unsq(t, hw)], axis=0)
        h = t.op("ReduceSum", [t.op("Reshape", [h, shp]), t.ints([2], "axes")], keepdims=0)
        h = t.op("Div", [h, t.op("Cast", [hw], to=F)])
        r = r.reshape(n, c, -1).mean(axis=2)
        fw, fb = rand(2, 16, scale=0.5), rand(2, scale=0.1)
        h = t.op("Gemm", [h, t.const(fw), t.const(fb)], transB=1)
        t.op("Softmax", [h], axis=-1)
        t.nodes[-1].output[0] = "y"
        return softmax(r @ fw.T + fb)
    runs = []
    for xr in runs_x:
        ref = build(xr)
        runs.append((list(xr.shape[:1]) + list(xr.shape[2:]), [xr], [ref]))
    m = t.model([vi("x", ["N", 3, "H", "W"])], [vi("y", ["N", 2])], opset=17)
    return m, "ocr_cls(s[0], s[1], s[2], in[0], out[0])", runs


def audio_cnn():
    t = Net()
    runs_x = [rand(1, 8, 20), rand(2, 8, 33)]
    saved = rng.bit_generator.state
    def build(xr):
        rng.bit_generator.state = saved
        t.nodes, t.inits, t.k = [], [], 0
        h, r = conv_bn(t, "x", xr, 8, 16, 3, act="relu", one=True)
        h = t.op("MaxPool", [h], kernel_shape=[2], strides=[2])
        L = r.shape[2] // 2
        r = r[:, :, :2 * L].reshape(r.shape[0], 16, L, 2).max(axis=3)
        h, r = conv_bn(t, h, r, 16, 16, 3, act="relu", one=True)
        # x[:, :, :x.size(2) - 1]
        end = unsq(t, t.op("Sub", [dim(t, h, 2), t.const(np.int64(1), "one")]))
        h = t.op("Slice", [h, t.ints([0], "starts"), end, t.ints([2], "axes")])
        r = r[:, :, :-1]
        h = t.op("AveragePool", [h], kernel_shape=[2], strides=[2])
        L = r.shape[2] // 2
        r = r[:, :, :2 * L].reshape(r.shape[0], 16, L, 2).mean(axis=3)
        h = t.op("ReduceMean", [h], axes=[2], keepdims=0)
        r = r.mean(axis=2)
        fw, fb = rand(8, 16, scale=0.25), rand(8, scale=0.1)
        e = t.op("Gemm", [h, t.const(fw), t.const(fb)], transB=1)
        r = r @ fw.T + fb
        nrm = t.op("Sqrt", [t.op("ReduceSum", [t.op("Mul", [e, e]), t.ints([1], "axes")],
                                 keepdims=1)])
        t.op("Div", [e, nrm])
        t.nodes[-1].output[0] = "emb"
        return r / np.sqrt((r * r).sum(axis=1, keepdims=True))
    runs = []
    for xr in runs_x:
        ref = build(xr)
        runs.append(([xr.shape[0], xr.shape[2]], [xr], [ref]))
    m = t.model([vi("x", ["B", 8, "T"])], [vi("emb", ["B", 8])])
    return m, "audio_cnn(s[0], s[1], in[0], out[0])", runs


def logmel_cnn():
    """An audio embedding CNN on a raw waveform, as PyTorch exports a
    log-mel front end: the STFT as a strided Conv1d of a windowed DFT basis,
    the power spectrum of Slice, Pow, Add, a mel MatMul after a Transpose,
    Log; then a 2-D CNN, a global mean and an L2-normalised embedding."""
    t = Net()
    nfft, hop, nmel = 64, 16, 8
    F = nfft // 2 + 1
    k = np.arange(nfft)
    win = 0.5 - 0.5 * np.cos(2 * np.pi * k / nfft)
    f = np.arange(F)[:, None]
    basis = np.concatenate([np.cos(2 * np.pi * f * k / nfft) * win,
                            -np.sin(2 * np.pi * f * k / nfft) * win]).astype(np.float32)
    mel = np.abs(rand(F, nmel, scale=0.2))
    w1, b1 = rand(8, 1, 3, 3, scale=0.4), rand(8, scale=0.1)
    fw, fb = rand(6, 8, scale=0.3), rand(6, scale=0.1)
    runs_x = [rand(1, 300, scale=0.5), rand(2, 237, scale=0.5)]
    h = t.op("Unsqueeze", ["x", t.ints([1], "ax")])
    h = t.op("Conv", [h, t.const(basis[:, None, :])], strides=[hop])
    re = t.op("Slice", [h, t.ints([0]), t.ints([F]), t.ints([1])])
    im = t.op("Slice", [h, t.ints([F]), t.ints([2 * F]), t.ints([1])])
    two = t.const(np.float32(2.0), "two")
    h = t.op("Add", [t.op("Pow", [re, two]), t.op("Pow", [im, two])])
    h = t.op("MatMul", [t.op("Transpose", [h], perm=[0, 2, 1]), t.const(mel)])
    h = t.op("Log", [t.op("Add", [h, t.const(np.float32(1e-6), "eps")])])
    h = t.op("Unsqueeze", [h, t.ints([1], "ax")])
    h = t.op("Relu", [t.op("Conv", [h, t.const(w1), t.const(b1)], pads=[1, 1, 1, 1])])
    h = t.op("MaxPool", [h], kernel_shape=[2, 2], strides=[2, 2])
    h = t.op("ReduceMean", [h], axes=[2, 3], keepdims=0)
    e = t.op("Gemm", [h, t.const(fw), t.const(fb)], transB=1)
    t.op("Div", [e, t.op("ReduceL2", [e], axes=[1], keepdims=1)])
    t.nodes[-1].output[0] = "emb"
    runs = []
    for xr in runs_x:
        x = xr.astype(np.float64)
        s = np_convg(x[:, None, :], basis[:, None, :].astype(np.float64), None, stride=hop)
        pw = s[:, :F] ** 2 + s[:, F:] ** 2
        lm = np.log(pw.transpose(0, 2, 1) @ mel + 1e-6)[:, None]
        r = np_maxpool(relu(np_convg(lm, w1, b1, pad=1)), 2, 2, 0).mean(axis=(2, 3))
        r = r @ fw.T + fb
        ref = r / np.sqrt((r * r).sum(axis=1, keepdims=True))
        runs.append((list(xr.shape), [xr], [ref]))
    m = t.model([vi("x", ["B", "T"])], [vi("emb", ["B", 6])])
    return m, "logmel_cnn(s[0], s[1], in[0], out[0])", runs


def mlp_dyn():
    t = Net()
    w1, b1 = rand(20, 32, scale=0.22), rand(32, scale=0.1)
    w2, b2 = rand(32, 16, scale=0.18), rand(16, scale=0.1)
    w3, b3 = rand(10, 16, scale=0.25), rand(10, scale=0.1)
    # x.view(x.size(0), -1)
    shp = t.op("Concat", [unsq(t, dim(t, "x", 0)), t.ints([-1], "m1")], axis=0)
    h = t.op("Reshape", ["x", shp])
    h = t.op("Relu", [t.op("Add", [t.op("MatMul", [h, t.const(w1)]), t.const(b1)])])
    h = t.op("Relu", [t.op("Add", [t.op("MatMul", [h, t.const(w2)]), t.const(b2)])])
    t.op("Softmax", [t.op("Gemm", [h, t.const(w3), t.const(b3)], transB=1)], axis=-1)
    t.nodes[-1].output[0] = "y"
    m = t.model([vi("x", ["batch", 4, 5])], [vi("y", ["batch", 10])])
    runs = []
    for bsz in (1, 3):
        x = rand(bsz, 4, 5)
        r = relu(relu(x.reshape(bsz, -1) @ w1 + b1) @ w2 + b2) @ w3.T + b3
        runs.append(([bsz], [x], [softmax(r)]))
    return m, "mlp_dyn(s[0], in[0], out[0])", runs


def np_lrn(x, size, alpha, beta, bias):
    sq = np.zeros_like(x)
    for c in range(x.shape[1]):
        lo, hi = max(0, c - (size - 1) // 2), min(x.shape[1] - 1, c + size // 2)
        sq[:, c] = (x[:, lo:hi + 1] ** 2).sum(axis=1)
    return x / (bias + alpha / size * sq) ** beta


def d2s_lrn():
    t = Net()
    d = t.op("DepthToSpace", ["x"], blocksize=2, mode="DCR")
    t.op("LRN", [d], size=3, alpha=0.02, beta=0.75, bias=1.0)
    t.nodes[-1].output[0] = "y1"
    t.op("Cast", [t.op("ArgMax", ["y1"], axis=3, keepdims=0)], to=F)
    t.nodes[-1].output[0] = "y2"
    m = t.model([vi("x", ["batch", 8, 3, 3])], [vi("y1", ["batch", 2, 6, 6]), vi("y2", ["batch", 2, 6])])
    runs = []
    for bsz in (1, 3):
        x = rand(bsz, 8, 3, 3)
        # DCR: channels as (row in the block, column in the block, c)
        dx = x.reshape(bsz, 2, 2, 2, 3, 3).transpose(0, 3, 4, 1, 5, 2).reshape(bsz, 2, 6, 6)
        y1 = np_lrn(dx.astype(np.float64), 3, 0.02, 0.75, 1.0)
        runs.append(([bsz], [x], [y1, y1.argmax(axis=3).astype(np.float32)]))
    return m, "d2s_lrn(s[0], in[0], out[0], out[1])", runs


def mobilenet_v2():
    t = Net()
    runs_x = [rand(1, 3, 17, 23), rand(2, 3, 16, 16)]
    saved = rng.bit_generator.state
    def build(xr):
        rng.bit_generator.state = saved
        t.nodes, t.inits, t.k = [], [], 0
        h, r = conv_bn(t, "x", xr, 3, 8, 3, stride=2, act="relu6")
        for cin, cout, stride in ((8, 8, 1), (8, 12, 2), (12, 12, 1)):
            e, er = conv_bn(t, h, r, cin, 2 * cin, 1, act="relu6")
            e, er = conv_bn(t, e, er, 2 * cin, 2 * cin, 3, stride=stride, group=2 * cin,
                            act="relu6")
            e, er = conv_bn(t, e, er, 2 * cin, cout, 1)
            if stride == 1 and cin == cout:
                h, r = t.op("Add", [h, e]), r + er
            else:
                h, r = e, er
        h, r = conv_bn(t, h, r, 12, 32, 1, act="relu6")
        h = t.op("Flatten", [t.op("GlobalAveragePool", [h])], axis=1)
        r = r.mean(axis=(2, 3))
        fw, fb = rand(10, 32, scale=0.2), rand(10, scale=0.1)
        t.op("Gemm", [h, t.const(fw), t.const(fb)], transB=1)
        t.nodes[-1].output[0] = "logits"
        return r @ fw.T + fb
    runs = []
    for xr in runs_x:
        ref = build(xr)
        runs.append(([xr.shape[0], xr.shape[2], xr.shape[3]], [xr], [ref]))
    m = t.model([vi("x", ["N", 3, "H", "W"])], [vi("logits", ["N", 10])])
    return m, "mobilenet_v2(s[0], s[1], s[2], in[0], out[0])", runs


def gated_norm():
    t = Net()
    d, hd, eps = 16, 32, 1e-5
    g1 = 1 + 0.1 * rand(d)
    w1, w2, w3 = rand(d, hd, scale=0.25), rand(d, hd, scale=0.25), rand(hd, d, scale=0.18)
    g2, b2, g3, b3 = 1 + 0.1 * rand(d), 0.1 * rand(d), 1 + 0.1 * rand(d), 0.1 * rand(d)
    v = rand(d, scale=0.25)
    two = t.const(np.float32(2), "two")
    epsc = t.const(np.float32(eps), "eps")
    # RMS norm
    ms = t.op("ReduceMean", [t.op("Pow", ["x", two])], axes=[-1], keepdims=1)
    n = t.op("Mul", [t.op("Div", ["x", t.op("Sqrt", [t.op("Add", [ms, epsc])])]), t.const(g1)])
    a = t.op("MatMul", [n, t.const(w1)])
    b = t.op("MatMul", [n, t.const(w2)])
    h = t.op("Mul", [t.op("Mul", [a, t.op("Sigmoid", [a])]), b])
    x2 = t.op("Add", ["x", t.op("MatMul", [h, t.const(w3)])])
    # layer norm from primitives
    mu = t.op("ReduceMean", [x2], axes=[-1], keepdims=1)
    dv = t.op("Sub", [x2, mu])
    var = t.op("ReduceMean", [t.op("Pow", [dv, two])], axes=[-1], keepdims=1)
    y = t.op("Div", [dv, t.op("Sqrt", [t.op("Add", [var, epsc])])])
    y = t.op("Add", [t.op("Mul", [y, t.const(g2)]), t.const(b2)])
    # and the operator (opset 17)
    t.op("LayerNormalization", [y, t.const(g3), t.const(b3)], axis=-1, epsilon=eps)
    t.nodes[-1].output[0] = "z"
    last = t.op("Gather", ["z", t.const(np.int64(-1), "last")], axis=1)
    t.op("MatMul", [last, t.const(v)])
    t.nodes[-1].output[0] = "score"
    m = t.model([vi("x", ["B", "T", d])], [vi("z", ["B", "T", d]), vi("score", ["B"])],
                opset=17)

    def ln(x, g, b):
        xd = x - x.mean(-1, keepdims=True)
        return xd / np.sqrt((xd * xd).mean(-1, keepdims=True) + eps) * g + b
    runs = []
    for bsz, tl in ((2, 5), (1, 7)):
        x = rand(bsz, tl, d)
        nr = x / np.sqrt((x * x).mean(-1, keepdims=True) + eps) * g1
        av, bv = nr @ w1, nr @ w2
        x2r = x + (av / (1 + np.exp(-av)) * bv) @ w3
        z = ln(ln(x2r, g2, b2), g3, b3)
        runs.append(([bsz, tl], [x], [z, z[:, -1] @ v]))
    return m, "gated_norm(s[0], s[1], in[0], out[0], out[1])", runs


def shape_ops():
    t = Net()
    bias = rand(1, 1, 8)
    # positions: Range(0, L) / 10, added along L
    L = dim(t, "x", 1)
    pos = t.op("Cast", [t.op("Range", [t.const(np.int64(0), "z"), L,
                                       t.const(np.int64(1), "one")])], to=F)
    pos = t.op("Div", [pos, t.const(np.float32(10), "ten")])
    h = t.op("Add", ["x", t.op("Unsqueeze", [pos, t.ints([0, 2], "axes")])])
    # ones of x's shape; bias expanded to [N, L, 8] the way PyTorch writes expand
    ones = t.op("ConstantOfShape", [t.op("Shape", ["x"])],
                value=numpy_helper.from_array(np.array([1.0], np.float32)))
    shp = t.op("Concat", [unsq(t, dim(t, "x", 0)), unsq(t, L), t.ints([8], "c8")], axis=0)
    shp = t.op("Where", [t.op("Equal", [shp, t.ints([-1, -1, -1], "m1")]), t.ints([1, 1, 1]), shp])
    h = t.op("Add", [t.op("Mul", [h, ones]), t.op("Expand", [t.const(bias), shp])])
    # Gelu from Erf
    e = t.op("Erf", [t.op("Div", [h, t.const(np.float32(np.sqrt(2)), "r2")])])
    h = t.op("Mul", [t.op("Mul", [h, t.const(np.float32(0.5), "half")]),
                     t.op("Add", [e, t.const(np.float32(1), "one")])])
    # a 3-tap sum along L: Pad, then two Slices and the middle
    p = t.op("Pad", [h, t.ints([0, 1, 0, 0, 1, 0], "pads")])
    lft = t.op("Slice", [p, t.ints([0]), t.ints([-2]), t.ints([1])])
    rgt = t.op("Slice", [p, t.ints([2]), t.ints([2 ** 62]), t.ints([1])])
    h = t.op("Add", [t.op("Add", [lft, rgt]), h])
    # GLU: Split the channels, a * sigmoid(b); Transpose; Softmax over L
    a, b = t.ops("Split", [h, t.ints([4, 4], "split")], 2, axis=2)
    g = t.op("Mul", [a, t.op("Sigmoid", [b])])
    t.op("Softmax", [t.op("Transpose", [g], perm=[0, 2, 1])], axis=-1)
    t.nodes[-1].output[0] = "y"
    m = t.model([vi("x", ["N", "L", 8])], [vi("y", ["N", 4, "L"])])
    from math import erf
    verf = np.vectorize(erf)
    runs = []
    for n, ln in ((2, 5), (1, 9)):
        x = rand(n, ln, 8)
        r = x + (np.arange(ln) / 10.0)[None, :, None] + bias
        r = 0.5 * r * (1 + verf(r / np.sqrt(2)))
        pr = np.pad(r, ((0, 0), (1, 1), (0, 0)))
        r = pr[:, :-2] + pr[:, 2:] + r
        gl = r[:, :, :4] / (1 + np.exp(-r[:, :, 4:]))
        runs.append(([n, ln], [x], [softmax(gl.transpose(0, 2, 1))]))
    return m, "shape_ops(s[0], s[1], in[0], out[0])", runs


def branches():
    """If: a condition known only at run time (the sum of x's signs), whose
    branches both define 'h' and give two outputs, the then branch holding
    an If on a Constant whose other branch txc could not compile (a TopK,
    which it does not take);
    and an If on a shape (known when txc compiles) whose other branch gives
    another shape."""
    t = Net()
    w1, w2 = rand(8, 4, scale=0.3), rand(8, 4, scale=0.3)

    def g(nodes, outs, inits=()):
        return helper.make_graph(nodes, "branch", [], [vi(o, None) for o in outs], list(inits))

    cond = t.op("Greater", [t.op("ReduceSum", ["x"], keepdims=0), t.const(np.float32(0), "zero")])
    true = helper.make_node("Constant", [], ["yes"], value=numpy_helper.from_array(np.array(True)))
    inner = helper.make_node("If", ["yes"], ["g"],
                             then_branch=g([helper.make_node("Identity", ["h"], ["g_then"])], ["g_then"]),
                             else_branch=g([helper.make_node("TopK", ["h", "k4"], ["g_else", "g_idx"],
                                                             axis=1)],
                                           ["g_else"], [numpy_helper.from_array(np.array([4], np.int64), "k4")]))
    then = g([helper.make_node("MatMul", ["x", "w1"], ["h"]),
              helper.make_node("Relu", ["h"], ["a_then"]), true, inner,
              helper.make_node("Mul", ["g", "half"], ["b_then"])], ["a_then", "b_then"],
             [numpy_helper.from_array(np.float32(0.5), "half")])
    other = g([helper.make_node("MatMul", ["x", t.const(w2)], ["h"]),
               helper.make_node("Tanh", ["h"], ["a_else"]),
               helper.make_node("Sub", ["h", "one"], ["b_else"])], ["a_else", "b_else"],
              [numpy_helper.from_array(np.float32(1), "one")])
    t.inits.append(numpy_helper.from_array(w1, "w1"))
    t.nodes.append(helper.make_node("If", [cond], ["y1", "y2"], name="if_sum",
                                    then_branch=then, else_branch=other))
    eight = t.op("Equal", [t.op("Gather", [t.op("Shape", ["x"]), t.ints(1, "one")], axis=0),
                           t.ints(8, "eight")])
    t.nodes.append(helper.make_node(
        "If", [eight], ["y3"], name="if_shape",
        then_branch=g([helper.make_node("Add", ["x", "x"], ["y3_then"])], ["y3_then"]),
        else_branch=g([helper.make_node("Reshape", ["x", "flat"], ["y3_else"])], ["y3_else"],
                      [numpy_helper.from_array(np.array([-1], np.int64), "flat")])))
    m = t.model([vi("x", ["batch", 8])],
                [vi("y1", ["batch", 4]), vi("y2", ["batch", 4]), vi("y3", ["batch", 8])])
    runs = []
    for bsz, shift in ((2, 1.0), (3, -1.0)):
        x = rand(bsz, 8) + np.float32(shift)
        if x.sum() > 0:
            h = x @ w1
            y1, y2 = relu(h), h * 0.5
        else:
            h = x @ w2
            y1, y2 = np.tanh(h), h - 1
        runs.append(([bsz], [x], [y1, y2, x + x]))
    return m, "branches(s[0], in[0], out[0], out[1], out[2])", runs


def np_resize(a, scales, mode, ctm, how="floor"):
    """ONNX Resize of a by per-axis scales, as onnxruntime computes it."""
    for ax, s in enumerate(scales):
        if s == 1:
            continue
        n_in = a.shape[ax]
        n_out = int(np.floor(n_in * s))
        o = np.arange(n_out, dtype=np.float64)
        if ctm == "asymmetric":
            x = o / s
        elif ctm == "half_pixel":
            x = (o + 0.5) / s - 0.5
        else:    # align_corners
            x = o * (n_in - 1) / (n_out - 1) if n_out > 1 else o * 0
        if mode == "nearest":
            f = {"floor": np.floor, "ceil": np.ceil,
                 "round_prefer_floor": lambda v: np.ceil(v - 0.5),
                 "round_prefer_ceil": lambda v: np.floor(v + 0.5)}[how]
            i = np.clip(f(x), 0, n_in - 1).astype(np.int64)
            a = np.take(a, i, axis=ax)
        else:
            x = np.clip(x, 0, n_in - 1)
            lo = np.floor(x).astype(np.int64)
            hi = np.minimum(lo + 1, n_in - 1)
            shp = [1] * a.ndim
            shp[ax] = n_out
            w = (x - lo).reshape(shp)
            a = np.take(a, lo, axis=ax) * (1 - w) + np.take(a, hi, axis=ax) * w
    return a.astype(np.float32)


def np_convtranspose(x, w, b=None, stride=1, pad=(0, 0), opad=0, dil=1, group=1):
    """ONNX ConvTranspose of NCHW x by [C, K / group, R, S] weights."""
    n, c, h, wd = x.shape
    _, kg, r, q = w.shape
    cg = c // group
    fh = (h - 1) * stride + (r - 1) * dil + 1 + opad
    fw = (wd - 1) * stride + (q - 1) * dil + 1 + opad
    full = np.zeros((n, kg * group, fh, fw))
    for g in range(group):
        xs = x[:, g * cg:(g + 1) * cg]
        for i in range(r):
            for j in range(q):
                t = np.einsum("nchw,ck->nkhw", xs, w[g * cg:(g + 1) * cg, :, i, j])
                full[:, g * kg:(g + 1) * kg, i * dil:i * dil + (h - 1) * stride + 1:stride,
                     j * dil:j * dil + (wd - 1) * stride + 1:stride] += t
    y = full[:, :, pad[0]:fh - pad[1], pad[0]:fw - pad[1]]
    if b is not None:
        y = y + b[None, :, None, None]
    return y.astype(np.float32)


def upsample():
    t = Net()
    sc = lambda v, hint: t.const(np.array(v, np.float32), hint)
    roi = t.const(np.array([], np.float32), "roi")
    outs = []

    def resize(scales, **attrs):
        outs.append(t.op("Resize", ["x", roi, sc(scales, "scales")], **attrs))

    resize([1, 1, 2, 2], mode="nearest", coordinate_transformation_mode="asymmetric",
           nearest_mode="floor")
    resize([1, 1, 3, 2], mode="nearest")        # half_pixel, round_prefer_floor
    resize([1, 1, 0.5, 0.5], mode="nearest", coordinate_transformation_mode="asymmetric",
           nearest_mode="floor")
    resize([1, 1, 2, 2], mode="linear")         # half_pixel
    resize([1, 1, 2, 3], mode="linear", coordinate_transformation_mode="align_corners")
    w1, b1 = rand(4, 3, 3, 3, scale=0.3), rand(3)
    outs.append(t.op("ConvTranspose", ["x", t.const(w1), t.const(b1)], strides=[2, 2],
                     pads=[1, 1, 1, 1], output_padding=[1, 1]))
    w2 = rand(4, 2, 2, 2, scale=0.3)
    outs.append(t.op("ConvTranspose", ["x", t.const(w2)], strides=[2, 2], group=2))
    w3 = rand(4, 2, 3, 3, scale=0.3)
    outs.append(t.op("ConvTranspose", ["x", t.const(w3)], dilations=[2, 2], pads=[2, 2, 2, 2]))
    names = ["y%d" % i for i in range(len(outs))]
    for o, nm in zip(outs, names):
        for node in t.nodes:
            if node.output[0] == o:
                node.output[0] = nm
    m = t.model([vi("x", ["N", 4, "H", "W"])],
                [vi(nm, ["N", None, None, None]) for nm in names])
    runs = []
    for n, h, w in ((1, 5, 7), (2, 4, 3)):
        x = rand(n, 4, h, w)
        ys = [np_resize(x, [1, 1, 2, 2], "nearest", "asymmetric", "floor"),
              np_resize(x, [1, 1, 3, 2], "nearest", "half_pixel", "round_prefer_floor"),
              np_resize(x, [1, 1, 0.5, 0.5], "nearest", "asymmetric", "floor"),
              np_resize(x, [1, 1, 2, 2], "linear", "half_pixel"),
              np_resize(x, [1, 1, 2, 3], "linear", "align_corners"),
              np_convtranspose(x, w1, b1, stride=2, pad=(1, 1), opad=1),
              np_convtranspose(x, w2, stride=2, group=2),
              np_convtranspose(x, w3, dil=2, pad=(2, 2))]
        runs.append(([n, h, w], [x], ys))
    call = "upsample(s[0], s[1], s[2], in[0], %s)" % ", ".join(
        "out[%d]" % i for i in range(len(outs)))
    return m, call, runs


MODELS = {"mlp": mlp, "lenet": lenet, "resnet_tiny": resnet_tiny, "gated-mlp": gated_mlp,
          "bn_runtime": bn_runtime, "outputs": outputs, "dynamic": dynamic,
          "ocr_cls": ocr_cls, "audio_cnn": audio_cnn, "mlp_dyn": mlp_dyn,
          "mobilenet_v2": mobilenet_v2, "gated_norm": gated_norm, "shape_ops": shape_ops,
          "resnet_nchwc": resnet_nchwc, "conv_out": conv_out, "upsample": upsample, "logmel_cnn": logmel_cnn,
          "branches": branches, "d2s_lrn": d2s_lrn}


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
    # for tests/onnx/ort.sh: the runs' inputs by graph name and shape
    inits = {t.name for t in m.graph.initializer}
    names = [i.name for i in m.graph.input if i.name not in inits]
    ort = []
    for i, (sizes, ins, outs) in enumerate(runs):
        ort.append({"inputs": [{"name": n, "shape": list(np.shape(a)),
                                "file": "%s.%d.in%d.bin" % (name, i, j)}
                               for j, (n, a) in enumerate(zip(names, ins))],
                    "outputs": ["%s.%d.out%d.bin" % (name, i, j) for j in range(len(outs))]})
    with open(os.path.join(out, name + ".ort.json"), "w") as f:
        json.dump(ort, f)


if __name__ == "__main__":
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for name in sys.argv[2:] or MODELS:
        write(out, name)
