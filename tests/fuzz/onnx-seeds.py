#!/usr/bin/python3
"""onnx-seeds.py: writes the seed corpus of the ONNX fuzzer (fuzz_onnx.c).

    /usr/bin/python3 onnx-seeds.py DIR

Small models (Debian's python3-onnx, numpy), each a few operators of
the kinds txc's ONNX front end handles: element-wise and broadcast
operators, Gemm/MatMul, Conv, pools, BatchNormalization, reductions,
Softmax, LayerNormalization, Slice, Gather, Expand, Pad, Split, Tile,
Where and the comparisons, If (a condition known at run time, and one
folded from a shape, with nested branches), and the shape computations it folds (Shape,
Gather, Slice, Concat, Unsqueeze, Squeeze, Cast, Equal, Where, Range,
ConstantOfShape, Constant feeding Reshape), of static and of dynamic
dimensions.  Weights
are tiny and seeded, so the files stay under a few hundred bytes.
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(7)
F = TensorProto.FLOAT


def w(name, *shape):
    return numpy_helper.from_array(rng.standard_normal(shape).astype(np.float32), name)


def ints(name, vals):
    return numpy_helper.from_array(np.array(vals, dtype=np.int64), name)


def model(nodes, inputs, outputs, inits=(), opset=13):
    g = helper.make_graph(nodes, "g", inputs, outputs, list(inits))
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])


def vi(name, shape, t=F):
    return helper.make_tensor_value_info(name, t, shape)


def N(op, ins, outs, **kw):
    return helper.make_node(op, ins, outs, **kw)


seeds = {}
x4 = [vi("x", [1, 2, 4, 4])]
y4 = [vi("y", None)]
for op in ["Relu", "Sigmoid", "Tanh", "Exp", "Sqrt", "Abs", "Neg", "Erf", "HardSwish",
           "Floor", "Ceil", "Reciprocal", "Softplus", "Identity", "Dropout", "Softsign",
           "Sign", "Sin", "Cos", "Selu", "Celu", "ThresholdedRelu", "Mish"]:
    seeds["un_" + op] = model([N(op, ["x"], ["y"])], x4, y4)
seeds["leaky"] = model([N("LeakyRelu", ["x"], ["y"], alpha=0.2)], x4, y4)
seeds["hsig"] = model([N("HardSigmoid", ["x"], ["y"], alpha=0.3, beta=0.4)], x4, y4)
seeds["clip"] = model([N("Clip", ["x", "lo", "hi"], ["y"])], x4, y4,
                      [numpy_helper.from_array(np.array(-1, np.float32), "lo"),
                       numpy_helper.from_array(np.array(1, np.float32), "hi")])
seeds["clip6"] = model([N("Clip", ["x"], ["y"], min=-1.0, max=1.0)], x4, y4, opset=6)
for op in ["Add", "Sub", "Mul", "Div", "Pow", "Max", "Min"]:
    seeds["bin_" + op] = model([N(op, ["x", "b"], ["y"])], x4, y4, [w("b", 2, 1, 1)])
seeds["sum3"] = model([N("Sum", ["x", "x", "x"], ["y"])], x4, y4)
seeds["gemm"] = model([N("Gemm", ["a", "b", "c"], ["y"], transB=1, alpha=0.5)],
                      [vi("a", [2, 3])], y4, [w("b", 4, 3), w("c", 4)])
seeds["matmul"] = model([N("MatMul", ["a", "b"], ["y"])], [vi("a", [2, 2, 3])], y4,
                        [w("b", 3, 5)])
seeds["conv"] = model([N("Conv", ["x", "k", "kb"], ["y"], pads=[1, 1, 1, 1],
                         strides=[2, 2], group=2)], x4, y4, [w("k", 4, 1, 3, 3), w("kb", 4)])
seeds["conv_same"] = model([N("Conv", ["x", "k"], ["y"], auto_pad="SAME_UPPER",
                              dilations=[2, 1])], x4, y4, [w("k", 3, 2, 2, 2)])
seeds["conv_bn"] = model([N("Conv", ["x", "k"], ["c"]),
                          N("BatchNormalization", ["c", "s", "b", "m", "v"], ["y"])],
                         x4, y4, [w("k", 3, 2, 1, 1), w("s", 3), w("b", 3), w("m", 3),
                                  numpy_helper.from_array(np.ones(3, np.float32), "v")])
seeds["maxpool"] = model([N("MaxPool", ["x"], ["y"], kernel_shape=[2, 2], strides=[2, 2],
                            ceil_mode=1)], x4, y4)
seeds["avgpool"] = model([N("AveragePool", ["x"], ["y"], kernel_shape=[3, 3],
                            pads=[1, 1, 1, 1], count_include_pad=1)], x4, y4)
seeds["gap"] = model([N("GlobalAveragePool", ["x"], ["y"])], x4, y4)
seeds["gmp"] = model([N("GlobalMaxPool", ["x"], ["y"])], x4, y4)
seeds["rmean"] = model([N("ReduceMean", ["x"], ["y"], axes=[-1, 1], keepdims=0)], x4, y4)
seeds["rsum"] = model([N("ReduceSum", ["x", "ax"], ["y"])], x4, y4, [ints("ax", [2])])
for op in ["ReduceProd", "ReduceL1", "ReduceL2", "ReduceSumSquare", "ReduceLogSum",
           "ReduceLogSumExp"]:
    seeds["r_" + op] = model([N(op, ["x"], ["y"], axes=[2, 3], keepdims=1)], x4, y4)
seeds["inorm"] = model([N("InstanceNormalization", ["x", "s", "b"], ["y"], epsilon=1e-3)],
                       x4, y4, [w("s", 2), w("b", 2)])
seeds["prelu"] = model([N("PRelu", ["x", "s"], ["y"])], x4, y4, [w("s", 2, 1, 1)])
seeds["softmax"] = model([N("Softmax", ["x"], ["y"], axis=-1)], x4, y4)
seeds["logsoftmax"] = model([N("LogSoftmax", ["x"], ["y"], axis=1)], x4, y4, opset=11)
seeds["flatten"] = model([N("Flatten", ["x"], ["y"], axis=2)], x4, y4)
seeds["transpose"] = model([N("Transpose", ["x"], ["y"], perm=[0, 2, 3, 1])], x4, y4)
seeds["concat"] = model([N("Concat", ["x", "x"], ["y"], axis=1)], x4, y4)
seeds["squeeze"] = model([N("Unsqueeze", ["x", "ax"], ["u"]), N("Squeeze", ["u", "ax"], ["y"])],
                         x4, y4, [ints("ax", [0])])
seeds["squeeze11"] = model([N("Unsqueeze", ["x"], ["u"], axes=[4]),
                            N("Squeeze", ["u"], ["y"], axes=[4])], x4, y4, opset=11)
seeds["shape_reshape"] = model([
    N("Shape", ["x"], ["s"]),
    N("Gather", ["s", "i0"], ["n"], axis=0),
    N("Unsqueeze", ["n", "ax"], ["n1"]),
    N("Slice", ["s", "st", "en"], ["hw"]),
    N("Concat", ["n1", "m1"], ["shp"], axis=0),
    N("Reshape", ["x", "shp"], ["y"]),
], x4, y4, [ints("i0", 0), ints("ax", [0]), ints("st", [2]), ints("en", [4]), ints("m1", [-1])])
seeds["const_cast"] = model([
    N("Constant", [], ["c"], value=helper.make_tensor("t", TensorProto.INT64, [2], [1, -1])),
    N("Cast", ["c"], ["c2"], to=TensorProto.INT64),
    N("Sub", ["c2", "z"], ["c3"]),
    N("Reshape", ["x", "c3"], ["y"]),
], x4, y4, [ints("z", [0])])
seeds["const_float"] = model([N("Constant", [], ["c"], value_float=2.0),
                              N("Add", ["x", "c"], ["y"])], x4, y4)
seeds["dynamic"] = model([N("Relu", ["x"], ["r"]), N("ReduceMean", ["r"], ["y"], axes=[1])],
                         [vi("x", ["N", 3, "H"])], y4)
seeds["two_out"] = model([N("Relu", ["x"], ["y"]), N("Neg", ["x"], ["z"])], x4,
                         [vi("y", None), vi("z", None)])
seeds["bn_input_stats"] = model([N("BatchNormalization", ["x", "s", "b", "m", "v"], ["y"])],
                                [vi("x", [1, 2, 4, 4]), vi("m", [2]), vi("v", [2])], y4,
                                [w("s", 2), w("b", 2)])
xd = [vi("x", ["N", 3, "H", "W"])]
seeds["dyn_view"] = model([
    N("Shape", ["x"], ["s"]),
    N("Gather", ["s", "i0"], ["n"], axis=0),
    N("Gather", ["s", "i2"], ["h"], axis=0),
    N("Div", ["h", "two"], ["h2"]),
    N("Unsqueeze", ["n", "ax"], ["n1"]),
    N("Unsqueeze", ["h2", "ax"], ["e"]),
    N("Slice", ["x", "z", "e", "a2"], ["sl"]),
    N("Concat", ["n1", "m1"], ["shp"], axis=0),
    N("Reshape", ["sl", "shp"], ["y"]),
], xd, y4, [ints("i0", 0), ints("i2", 2), ints("two", 2), ints("ax", [0]), ints("z", [0]),
            ints("a2", [2]), ints("m1", [-1])])
seeds["dyn_expand"] = model([
    N("Shape", ["x"], ["s"]),
    N("Equal", ["s", "m4"], ["eq"]),
    N("Where", ["eq", "o4", "s"], ["s2"]),
    N("ConstantOfShape", ["s2"], ["c"], value=numpy_helper.from_array(np.ones(1, np.float32))),
    N("Expand", ["b", "s2"], ["e"]),
    N("Mul", ["c", "e"], ["y"]),
], xd, y4, [ints("m4", [-1] * 4), ints("o4", [1] * 4), w("b", 1, 3, 1, 1)])
seeds["resize_nearest"] = model([N("Resize", ["x", "roi", "sc"], ["y"], mode="nearest",
                                    coordinate_transformation_mode="asymmetric",
                                    nearest_mode="floor")], xd, y4,
                                  [w("roi", 0), numpy_helper.from_array(
                                      np.array([1, 1, 2, 2], np.float32), "sc")])
seeds["resize_linear"] = model([N("Resize", ["x", "", "sc"], ["y"], mode="linear",
                                   coordinate_transformation_mode="align_corners")], x4, y4,
                                 [numpy_helper.from_array(np.array([1, 1, 1.5, 0.5], np.float32),
                                                          "sc")])
seeds["upsample9"] = model([N("Upsample", ["x", "sc"], ["y"], mode="nearest")], x4, y4,
                           [numpy_helper.from_array(np.array([1, 1, 2, 3], np.float32), "sc")],
                           opset=9)
seeds["convtranspose"] = model([N("ConvTranspose", ["x", "k", "kb"], ["y"], strides=[2, 2],
                                  pads=[1, 0, 1, 0], output_padding=[1, 0], group=2)], x4, y4,
                                 [w("k", 2, 2, 3, 3), w("kb", 4)])
seeds["dyn_range"] = model([
    N("Shape", ["x"], ["s"], start=-1),
    N("Squeeze", ["s", "ax"], ["w"]),
    N("Range", ["z", "w", "one"], ["r"]),
    N("Cast", ["r"], ["rf"], to=F),
    N("Add", ["x", "rf"], ["y"]),
], xd, y4, [ints("ax", [0]), ints("z", 0), ints("one", 1)], opset=15)
seeds["pad_split_tile"] = model([
    N("Pad", ["x", "p"], ["pd"], mode="reflect"),
    N("Split", ["pd", "sp"], ["a", "b"], axis=1),
    N("Tile", ["a", "rp"], ["t"]),
    N("Gather", ["t", "gi"], ["y"], axis=3),
], x4, y4, [ints("p", [0, 0, 1, 1, 0, 0, 1, 1]), ints("sp", [1, 1]), ints("rp", [1, 2, 1, 1]),
            ints("gi", [[0, -1]])])
seeds["layernorm"] = model([N("LayerNormalization", ["x", "g", "b"], ["y", "m", "isd"], axis=-2),
                            N("MatMul", ["y", "v"], ["z"])],
                           x4, [vi("z", None), vi("m", None), vi("isd", None)],
                           [w("g", 4, 4), w("b", 4), w("v", 4)], opset=17)
seeds["logic"] = model([N("Greater", ["x", "x2"], ["g"]), N("Not", ["g"], ["ng"]),
                        N("Where", ["ng", "x", "x2"], ["y"])],
                       [vi("x", [1, 2, 4, 4]), vi("x2", [4])], y4)


def branch(nodes, outs, inits=()):
    return helper.make_graph(nodes, "b", [], [vi(o, None) for o in outs], list(inits))


seeds["if"] = model([
    N("ReduceSum", ["x"], ["s"], keepdims=0),
    N("Greater", ["s", "z"], ["c"]),
    N("If", ["c"], ["y"],
      then_branch=branch([N("Relu", ["x"], ["h"]),
                          N("If", ["c"], ["t"], then_branch=branch([N("Neg", ["h"], ["u"])], ["u"]),
                            else_branch=branch([N("Identity", ["h"], ["v"])], ["v"]))], ["t"]),
      else_branch=branch([N("Mul", ["x", "k"], ["h"])], ["h"], [w("k", 4)])),
    N("Shape", ["x"], ["sh"]),
    N("Gather", ["sh", "one"], ["d"], axis=0),
    N("Equal", ["d", "two"], ["e"]),
    N("If", ["e"], ["y2"], then_branch=branch([N("Sigmoid", ["x"], ["q"])], ["q"]),
      else_branch=branch([N("Tanh", ["x"], ["r"])], ["r"])),
], x4, [vi("y", None), vi("y2", None)],
    [numpy_helper.from_array(np.float32(0), "z"), ints("one", 1), ints("two", 2)])

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
for name, m in seeds.items():
    with open(os.path.join(out, name + ".onnx"), "wb") as f:
        f.write(m.SerializeToString())
