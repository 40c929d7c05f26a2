"""txc: call kernels written in tx from Python.

    import numpy as np, txc
    mod = txc.load("saxpy.tx")                  # or txc.load(source="kernel ...")
    z = mod.saxpy(x, y, alpha=2.0)              # z allocated and returned

txc.load compiles a .tx program with the txc command into a shared
library (txc --shared --dlpack), caches it, and returns a Module whose
attributes are its kernels.  A kernel takes numpy arrays, PyTorch tensors
or any object with __dlpack__, through the DLPack entry point txc writes
for it.  Pure Python over ctypes: nothing to build but the kernels.
txc-python(7) is the manual.
"""

import ctypes
import operator

from . import _dlpack as dl
from ._build import cache_dir, compile_cached, find_txc, txc_version
from ._errors import ArgumentError, CompileError, Error
from ._kernel import Kernel

__all__ = ["load", "Module", "Kernel", "Error", "CompileError", "ArgumentError",
           "cache_dir", "find_txc", "version"]


def version():
    """The version of the txc binary the package uses."""
    return txc_version(find_txc())


def load(path=None, *, source=None, target="cpu", schedule=None, defines=None, options=()):
    """Compiles a tx program (cached) and returns its Module.

    path: the .tx file; or source: its text (relative imports are then
    found from the current directory).  target: "cpu", "cuda" (kernels
    take CUDA tensors) or what txc --target takes.  schedule: the schedule
    name (txc -s).  defines: {size: value} fixed at compile time (txc -D;
    calls then use those values).  options: more txc options, as strings.
    Raises CompileError with txc's diagnostics, or Error (no txc, an
    unreadable file)."""
    if (path is None) == (source is None):
        raise ArgumentError("txc.load takes a path or source=..., %s" %
                            ("not both" if path is not None else "and got neither"))
    if isinstance(options, str):
        raise ArgumentError("txc.load: options is a list of strings, e.g. ['-O2']")
    defines = dict(defines or {})
    opts = ["--target=" + str(target)]
    if schedule is not None:
        opts += ["-s", str(schedule)]
    for k, v in sorted(defines.items()):
        try:
            v = operator.index(v)
        except TypeError:
            raise ArgumentError("txc.load: defines[%r] = %r is not an integer size" % (k, v)) from None
        defines[k] = v
        opts += ["-D", "%s=%d" % (k, v)]
    opts += [str(o) for o in options]
    so, sig, cached = compile_cached(path, source, opts)
    return Module(so, sig, target=str(target), defines=defines, cached=cached)


class Module:
    """A compiled program: its kernels are attributes (and mod["name"]).

    path: the shared library; target: the target it was compiled for;
    cached: whether load found it in the cache (False: txc ran);
    kernels: {name: Kernel}; signature: txc --signature's record;
    defines: load's defines.  A kernel named like one of these hides it
    (mod.kernels and mod["name"] still reach every kernel)."""

    def __init__(self, path, signature, target="cpu", defines=None, cached=False):
        self.path = path
        self.target = target
        self.cached = cached
        self.signature = signature
        self.defines = dict(defines or {})
        # what the calls read, out of the way of kernels named like the above
        self._target = self.target
        self._defines = dict(self.defines)
        try:
            self._lib = ctypes.CDLL(path, mode=ctypes.RTLD_LOCAL)
        except OSError as e:
            raise Error("cannot load %s: %s" % (path, e)) from None
        self._lib.txrt_last_error.restype = ctypes.c_char_p
        self._lib.txrt_last_error.argtypes = []
        self._cuda_mode = None
        self.kernels = {}
        for s in signature["kernels"]:
            k = Kernel(self, s)
            self.kernels[k.name] = k
        self._kernels = dict(self.kernels)
        for name, k in self._kernels.items():
            setattr(self, name, k)

    def __getitem__(self, name):
        return self._kernels[name]

    def __getattr__(self, name):
        # only called when normal lookup fails: not a kernel
        if name.startswith("__"):
            raise AttributeError(name)
        raise AttributeError("the module has no kernel '%s' (it has %s)" % (
            name, ", ".join(sorted(self.__dict__.get("_kernels", {}))) or "none"))

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(self._kernels))

    def __repr__(self):
        return "<txc module %s (%s): %s>" % (self._lib._name, self._target,
                                             ", ".join(self.__dict__.get("_kernels", {})))

    def _last_error(self):
        msg = self._lib.txrt_last_error()
        return msg.decode("utf-8", "replace") if msg else ""

    def _emulating(self):
        if self._cuda_mode is None:
            f = self._lib.txrt_cuda_mode
            f.restype = ctypes.c_int
            self._cuda_mode = f()
        return self._cuda_mode == 2

    def _check_device(self, kernel, name, dev):
        if self._target == "cuda":
            if dev[0] in (dl.CUDA, dl.CUDA_MANAGED) or (dev[0] == dl.CPU and self._emulating()):
                return
            raise Error("%s: tensor '%s' is on %s; a module loaded with target='cuda' takes "
                        "CUDA tensors (host memory only while libtxrt emulates the GPU, "
                        "TXRT_CUDA=emulate)" % (kernel.name, name, dl.device_str(dev)))
        if dev[0] != dl.CPU:
            raise Error("%s: tensor '%s' is on %s; this module was compiled for the %s target, "
                        "which takes host memory: load it with target='cuda' for CUDA "
                        "tensors" % (kernel.name, name, dl.device_str(dev), self._target))

    def _allocate(self, kernel, t, shape, like, device):
        """A new tensor for t of the given shape, of like's library."""
        fw = dl.framework(like) if like is not None else None
        np_name, torch_name = dl.TYPES[t["type"]][2:]
        if fw == "torch":
            import torch
            dtype = getattr(torch, torch_name, None)
            if dtype is None:
                raise Error("%s: this PyTorch has no %s for '%s': pass the output" % (
                    kernel.name, torch_name, t["name"]))
            return torch.empty(shape, dtype=dtype, device=like.device)
        if fw == "cupy":
            import cupy
            if np_name is None:
                raise Error("%s: CuPy has no %s for '%s': pass the output" % (
                    kernel.name, t["type"], t["name"]))
            return cupy.empty(shape, dtype=np_name)
        if device is not None and device[0] != dl.CPU:
            raise Error("%s: cannot allocate output '%s' on %s for a %s: pass it" % (
                kernel.name, t["name"], dl.device_str(device), type(like).__name__))
        if self._target == "cuda" and not self._emulating():
            raise Error("%s: no CUDA tensor to allocate output '%s' like: pass it, or pass "
                        "PyTorch tensors" % (kernel.name, t["name"]))
        from ._kernel import _numpy
        np = _numpy(kernel.name)
        if np_name is None:
            raise Error("%s: numpy has no %s for output '%s': pass one (a PyTorch tensor)" % (
                kernel.name, t["type"], t["name"]))
        return np.empty(shape, dtype=np_name)
