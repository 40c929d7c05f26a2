#!/usr/bin/python3
"""onnx_resnet.py: a ResNet-18-shaped ONNX model for bench/onnx.sh.

    /usr/bin/python3 onnx_resnet.py OUT.onnx [SIZE]

ResNet-18's layers (a 7x7/2 Conv + BatchNormalization + Relu, a 3x3/2
MaxPool, four stages of two basic blocks of 64, 128, 256 and 512
channels, strided 1x1 projections, GlobalAveragePool, Flatten, a 1000-way
Gemm) at 1x3xSIZExSIZE (224), opset 13, with seeded random weights
(Debian's python3-onnx and numpy): for timing, not for classifying.
"""
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(18)
nodes, inits = [], []


def name(hint):
    return "%s%d" % (hint, len(nodes) + len(inits))


def const(a):
    n = name("w")
    inits.append(numpy_helper.from_array(np.asarray(a, np.float32), n))
    return n


def op(kind, ins, **attrs):
    out = name(kind.lower())
    nodes.append(helper.make_node(kind, ins, [out], name=out, **attrs))
    return out


def conv_bn(x, cin, cout, k, stride, relu):
    w = rng.standard_normal((cout, cin, k, k)) * np.sqrt(2.0 / (cin * k * k))
    h = op("Conv", [x, const(w)], pads=[k // 2] * 4, strides=[stride] * 2,
           kernel_shape=[k, k])
    h = op("BatchNormalization", [h, const(1 + 0.1 * rng.standard_normal(cout)),
                                  const(0.1 * rng.standard_normal(cout)),
                                  const(0.1 * rng.standard_normal(cout)),
                                  const(0.5 + rng.random(cout))])
    return op("Relu", [h]) if relu else h


def block(x, cin, cout, stride):
    h = conv_bn(x, cin, cout, 3, stride, True)
    h = conv_bn(h, cout, cout, 3, 1, False)
    skip = x if stride == 1 and cin == cout else conv_bn(x, cin, cout, 1, stride, False)
    return op("Relu", [op("Add", [h, skip])])


size = int(sys.argv[2]) if len(sys.argv) > 2 else 224
h = conv_bn("x", 3, 64, 7, 2, True)
h = op("MaxPool", [h], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
cin = 64
for cout, stride in ((64, 1), (128, 2), (256, 2), (512, 2)):
    h = block(h, cin, cout, stride)
    h = block(h, cout, cout, 1)
    cin = cout
h = op("Flatten", [op("GlobalAveragePool", [h])])
fc = const(rng.standard_normal((1000, 512)) * 0.05)
nodes.append(helper.make_node("Gemm", [h, fc, const(np.zeros(1000))], ["y"], transB=1))
graph = helper.make_graph(
    nodes, "resnet18", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, size, size])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 1000])], inits)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
with open(sys.argv[1], "wb") as fp:
    fp.write(model.SerializeToString())
