"""_kernel.py: one kernel of a loaded library, callable from Python.

    y = mod.saxpy(x, y, alpha=2.0)          # outputs omitted: allocated
    mod.saxpy(x, y, out, alpha=2.0)         # or given

Tensors are positional in declaration order (inputs, then outputs; an
output left out or given as None is allocated and returned), or by their
names as keywords; scalar parameters are keywords; size parameters come
from the shapes (or keywords, which are then checked).  Before anything
runs, every tensor's type, device and number of dimensions is checked and
the sizes are inferred and checked against every shape, so a refused call
writes nothing.  Then the DLPack entry point NAME_dlpack runs; its
refusal (it checks again) raises Error with its message.

A tensor whose elements are not compact row-major (a strided view) is
handled: an input is copied to a contiguous tensor by its own library
(numpy, PyTorch, CuPy), an output is computed into one and copied back
into the view once the kernel has succeeded.  An object of another
library is refused with a message.
"""

import ctypes
import operator
import struct
import sys

from . import _dlpack as dl
from . import _shapes
from ._errors import ArgumentError, Error

_CTYPES = {
    "bool": ctypes.c_uint8, "i8": ctypes.c_int8, "i16": ctypes.c_int16,
    "i32": ctypes.c_int32, "i64": ctypes.c_int64, "u8": ctypes.c_uint8,
    "u16": ctypes.c_uint16, "u32": ctypes.c_uint32, "u64": ctypes.c_uint64,
    "f16": ctypes.c_uint16, "bf16": ctypes.c_uint16, "f32": ctypes.c_float,
    "f64": ctypes.c_double,
}


def _scalar(name, txtype, value):
    """value as the C argument of a scalar parameter of type txtype."""
    try:
        if txtype == "bool":
            return 1 if value else 0
        if txtype in ("f32", "f64"):
            return float(value)
        if txtype == "f16":
            return struct.unpack("<H", struct.pack("<e", float(value)))[0]
        if txtype == "bf16":
            bits = struct.unpack("<I", struct.pack("<f", float(value)))[0]
            if (bits & 0x7f800000) == 0x7f800000 and bits & 0x7fffff:
                return (bits >> 16) | 0x40   # a NaN stays one
            return ((bits + 0x7fff + ((bits >> 16) & 1)) >> 16) & 0xffff
        v = operator.index(value)
    except OverflowError:
        raise Error("scalar '%s' = %r does not fit %s" % (name, value, txtype)) from None
    except (TypeError, ValueError):
        raise Error("scalar '%s' must be a number (%s), not %r" % (name, txtype, value)) from None
    bits = dl.TYPES[txtype][1]
    lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if txtype[0] == "i" else (0, (1 << bits) - 1)
    if not lo <= v <= hi:
        raise Error("scalar '%s' = %d is out of range for %s [%d, %d]" % (name, v, txtype, lo, hi))
    return v


def _contiguous(obj, fw):
    if fw == "numpy":
        return sys.modules["numpy"].ascontiguousarray(obj)
    return obj.contiguous() if fw == "torch" else sys.modules["cupy"].ascontiguousarray(obj)


def _copy_into(dst, src, fw):
    if fw == "torch":
        dst.copy_(src)
    else:
        dst[...] = src


class Kernel:
    """A kernel: call it with its tensors (and scalars by keyword).

    name: the kernel's name; params: its size and scalar parameters
    [{"name", "size", "type"}]; tensors: [{"name", "dir", "type", "shape"}]
    (txc --signature's format); module: the Module it belongs to."""

    def __init__(self, module, sig):
        self.module = module
        self.name = sig["kernel"]
        self.entry = sig["name"]
        self.params = sig["params"]
        self.tensors = sig["tensors"]
        self.inputs = [i for i, t in enumerate(self.tensors) if t["dir"] == "in"]
        self.outputs = [i for i, t in enumerate(self.tensors) if t["dir"] == "out"]
        self.dim_names = [[sorted(_shapes.names(e)) for e in t["shape"]] for t in self.tensors]
        self._sizes = {p["name"] for p in self.params if p["size"]}
        lib = module._lib
        try:
            self._fn = getattr(lib, self.entry + "_dlpack")
        except AttributeError:
            raise Error("the library has no %s_dlpack (compiled without --dlpack?)"
                        % self.entry) from None
        self._fn.restype = ctypes.c_int
        self._fn.argtypes = ([ctypes.c_int64 if p["size"] else _CTYPES[p["type"]]
                              for p in self.params] +
                             [ctypes.c_void_p] * len(self.tensors))
        self.__doc__ = self.signature()

    def signature(self):
        """The kernel as tx declares it: "saxpy(N, alpha: f32) x: f32[N] ..."."""
        ps = ", ".join(p["name"] if p["size"] else "%s: %s" % (p["name"], p["type"])
                       for p in self.params)
        ts = "; ".join("%s %s: %s[%s]" % (t["dir"], t["name"], t["type"],
                                          ", ".join(_shapes.show(e) for e in t["shape"]))
                       for t in self.tensors)
        return "%s(%s) { %s }" % (self.name, ps, ts)

    def __repr__(self):
        return "<txc kernel %s>" % self.signature()

    def _fail(self, tensor, why):
        return Error("%s: tensor '%s' %s" % (self.name, tensor, why))

    def __call__(self, *args, **kwargs):
        nt = len(self.tensors)
        if len(args) > nt:
            raise ArgumentError("%s takes %d tensors (%s), %d given" % (
                self.name, nt, ", ".join(t["name"] for t in self.tensors), len(args)))
        given = list(args) + [None] * (nt - len(args))
        byname = {t["name"]: i for i, t in enumerate(self.tensors)}
        params = {p["name"]: p for p in self.params}
        scalars, sizes = {}, {}
        for k, v in kwargs.items():
            if k in byname:
                if given[byname[k]] is not None:
                    raise ArgumentError("%s: tensor '%s' given twice" % (self.name, k))
                given[byname[k]] = v
            elif k in params:
                (sizes if params[k]["size"] else scalars)[k] = v
            else:
                raise ArgumentError("%s has no parameter or tensor '%s' (it takes %s)" % (
                    self.name, k, self.signature()))
        for i in self.inputs:
            if given[i] is None:
                raise ArgumentError("%s: input '%s' is missing" % (self.name, self.tensors[i]["name"]))
        missing = [p["name"] for p in self.params if not p["size"] and p["name"] not in scalars]
        if missing:
            raise ArgumentError("%s: scalar parameter%s %s must be given by keyword (%s=...)" % (
                self.name, "s" if len(missing) > 1 else "", ", ".join(missing), missing[0]))
        return self._run(given, sizes, scalars)

    def _view(self, i, obj):
        t = self.tensors[i]
        if obj is not None and t["dir"] == "in" and isinstance(obj, (list, tuple, int, float)):
            np = _numpy(self.name)
            name = dl.TYPES[t["type"]][2]
            if name is None:
                raise self._fail(t["name"], "is a Python %s; numpy has no %s" % (
                    type(obj).__name__, t["type"]))
            obj = np.asarray(obj, dtype=name)
        try:
            return dl.view(obj)
        except Error as e:
            hint = ""
            scalars = [p["name"] for p in self.params if not p["size"]]
            if isinstance(obj, (int, float, bool)) and scalars:
                hint = " (scalar parameters go by keyword: %s=...)" % scalars[0]
            raise self._fail(t["name"], str(e) + hint) from None

    def _run(self, given, sizes, scalars):
        mod = self.module
        views = {}
        for i, obj in enumerate(given):
            if obj is not None:
                views[i] = self._view(i, obj)
        # types, devices, dimensions, writability
        device = None
        for i, v in views.items():
            t = self.tensors[i]
            if not dl.type_matches(t["type"], v.code, v.bits, v.lanes):
                raise self._fail(t["name"], "has dtype %s, want %s (%s)" % (
                    dl.dtype_name(v.code, v.bits, v.lanes), _want_name(t["type"]), t["type"]))
            mod._check_device(self, t["name"], v.device)
            if device is None:
                device = v.device
            elif _gpu(v.device) != _gpu(device):
                raise self._fail(t["name"], "is on %s, but '%s' is on %s: all the tensors "
                                 "of a call must be on one device" % (
                                     dl.device_str(v.device), self.tensors[min(views)]["name"],
                                     dl.device_str(device)))
            if len(v.shape) != len(t["shape"]):
                raise self._fail(t["name"], "has %d dimension%s %s, want %d: %s[%s]" % (
                    len(v.shape), "" if len(v.shape) == 1 else "s", _tup(v.shape),
                    len(t["shape"]), t["name"], ", ".join(_shapes.show(e) for e in t["shape"])))
            if t["dir"] == "out" and not v.writable:
                raise self._fail(t["name"], "is an output and is read-only")

        # sizes: keywords and load(defines=...) first, then the shapes
        known, sources = {}, {}
        for k, v in list(mod._defines.items()) + list(sizes.items()):
            if k in self._sizes:
                try:
                    known[k] = operator.index(v)
                except TypeError:
                    raise Error("%s: size '%s' must be an integer, not %r" % (self.name, k, v)) from None
                sources[k] = "given" if k in sizes else "fixed by defines"
        _shapes.infer(self, {i: v.shape for i, v in views.items()}, known, sources)
        unknown = [p["name"] for p in self.params if p["size"] and p["name"] not in known]
        if unknown:
            raise ArgumentError("%s: the shapes do not give size%s %s: pass %s=..." % (
                self.name, "s" if len(unknown) > 1 else "", ", ".join(unknown), unknown[0]))
        for k, v in known.items():
            if v < 0:
                raise Error("%s: size %s = %d is negative (%s)" % (self.name, k, v, sources[k]))
        want = {}
        for i, t in enumerate(self.tensors):
            want[i] = tuple(_shapes.evaluate(e, known) for e in t["shape"])
            v = views.get(i)
            if v is not None and v.shape != want[i]:
                used = sorted(set().union(*[_shapes.names(e) for e in t["shape"]]))
                why = ", ".join("%s = %d %s" % (n, known[n], sources[n]) for n in used)
                raise self._fail(t["name"], "has shape %s, want %s (%s[%s]%s)" % (
                    _tup(v.shape), _tup(want[i]), t["name"],
                    ", ".join(_shapes.show(e) for e in t["shape"]), "; " + why if why else ""))

        args = [known[p["name"]] if p["size"] else _scalar(p["name"], p["type"], scalars[p["name"]])
                for p in self.params]

        # outputs to allocate, strided views to copy
        like = next((given[i] for i in self.inputs + self.outputs if given[i] is not None), None)
        results = {}        # output index -> what the caller gets
        copy_back = []      # (view the caller gave, contiguous tensor, framework)
        for i, t in enumerate(self.tensors):
            v = views.get(i)
            if v is None:
                obj = mod._allocate(self, t, want[i], like, device)
                views[i] = self._view(i, obj)
                results[i] = obj
                continue
            if t["dir"] == "out":
                results[i] = given[i]
            if v.compact():
                continue
            fw = dl.framework(given[i])
            if fw is None:
                raise self._fail(t["name"], "is a strided view (element strides %s for shape "
                                 "%s); txc kernels take compact row-major tensors: pass a "
                                 "contiguous one" % (_tup(v.strides), _tup(v.shape)))
            if t["dir"] == "in":
                views[i] = self._view(i, _contiguous(given[i], fw))
            else:
                tmp = mod._allocate(self, t, want[i], given[i], device)
                views[i] = self._view(i, tmp)
                copy_back.append((given[i], tmp, fw))

        args += [views[i].ptr for i in range(len(self.tensors))]
        rc = self._fn(*args)
        if rc != 0:
            msg = mod._last_error()
            raise Error(msg or "%s failed with error %d" % (self.entry, rc), code=rc)
        for dst, src, fw in copy_back:
            _copy_into(dst, src, fw)
        outs = [results[i] for i in self.outputs]
        if not outs:
            return None
        return outs[0] if len(outs) == 1 else tuple(outs)


def _gpu(dev):
    """The device dev is memory of: managed memory is its GPU's."""
    return (dl.CUDA if dev[0] == dl.CUDA_MANAGED else dev[0], dev[1])


def _tup(t):
    return "(" + ", ".join(str(x) for x in t) + ("," if len(t) == 1 else "") + ")"


def _want_name(txtype):
    code, bits = dl.TYPES[txtype][:2]
    return dl.dtype_name(code, bits)


def _numpy(who):
    try:
        import numpy
    except ImportError:
        raise Error("%s: numpy is needed to allocate outputs or convert Python lists, "
                    "and it is not installed" % who) from None
    return numpy
