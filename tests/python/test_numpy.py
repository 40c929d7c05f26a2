"""test_numpy.py: the txc Python package (python/txc) on numpy arrays.

Run by tests/unit/python_numpy.sh with PYTHONPATH naming python/, TXC the
txc binary and TXC_CACHE_DIR a fresh directory; TXC_COUNT_LOG is the log
of a wrapper around txc that records each command line, so the tests see
when a load compiled.  Covers loads from a path and from a string, the
cache (and its invalidation when an import changes), results against
numpy at odd sizes, scalars by keyword, outputs omitted and given,
strided views, sizes inferred through extents such as N + 2, the errors
(wrong dtype, shapes, output shape, dimensions, keywords, compile errors
with file:line:col, the entry point's own refusals), that a refused call
writes nothing, DLPack objects that are not numpy arrays (a capsule made
here, claiming a CUDA device, or strided), and target="cuda" in libtxrt's
emulator.
"""

import ctypes
import os
import sys
import tempfile
import unittest

import numpy as np

import txc

FUSED = """
// a fused operator: y = relu(x * w + b) * scale, rows in parallel
kernel fused(M, N, scale: f32) {
  in  x: f32[M, N];
  in  w: f32[N];
  in  b: f32[N];
  out y: f32[M, N];
  y[i, j] = max(x[i, j] * w[j] + b[j], 0.0) * scale;
}
schedule fused for cpu {
  y.split(j, 8) -> (jo, ji);
  y.vectorize(ji);
  y.parallel(i);
}
"""


def compiles():
    """The compile commands the txc wrapper saw so far."""
    with open(os.environ["TXC_COUNT_LOG"]) as f:
        return [l for l in f if "--version" not in l]


class Base(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="txc-py-")

    def write(self, name, text):
        p = os.path.join(self.dir, name)
        with open(p, "w") as f:
            f.write(text)
        return p

    def assertRaisesMsg(self, exc, pieces, fn, *args, **kw):
        with self.assertRaises(exc) as cm:
            fn(*args, **kw)
        for p in pieces:
            self.assertIn(p, str(cm.exception))
        return cm.exception


class TestLoad(Base):
    def test_path_and_cache(self):
        p = self.write("fused.tx", FUSED)
        n0 = len(compiles())
        mod = txc.load(p)
        self.assertFalse(mod.cached)
        self.assertEqual(len(compiles()), n0 + 1)
        again = txc.load(p)
        self.assertTrue(again.cached)
        self.assertEqual(len(compiles()), n0 + 1, "a second load recompiled")
        # other options are another entry
        other = txc.load(p, options=["-O1"])
        self.assertFalse(other.cached)
        self.assertEqual(len(compiles()), n0 + 2)
        # the cache lives where TXC_CACHE_DIR says
        self.assertTrue(mod.path.startswith(os.environ["TXC_CACHE_DIR"]))

    def test_source_string(self):
        src = FUSED.replace("fused", "fused_s")
        mod = txc.load(source=src)
        x = np.random.rand(3, 5).astype(np.float32)
        w, b = np.ones(5, np.float32), np.zeros(5, np.float32)
        np.testing.assert_allclose(mod.fused_s(x, w, b, scale=2.0), 2 * x, rtol=1e-6)
        self.assertTrue(txc.load(source=src).cached)

    def test_import_change_recompiles(self):
        self.write("helper.tx", "kernel helper(N) { in a: f32[N]; out c: f32[N]; c[i] = a[i] + 1.0; }\n")
        p = self.write("main.tx", 'import "helper.tx";\n'
                       "kernel twice(N) { in a: f32[N]; out c: f32[N]; c[i] = a[i] * 2.0; }\n")
        txc.load(p, options=["-k", "helper"])
        self.assertTrue(txc.load(p, options=["-k", "helper"]).cached)
        self.write("helper.tx", "kernel helper(N) { in a: f32[N]; out c: f32[N]; c[i] = a[i] + 5.0; }\n")
        mod = txc.load(p, options=["-k", "helper"])
        self.assertFalse(mod.cached, "a changed import did not recompile")
        np.testing.assert_array_equal(mod.helper(np.zeros(3, np.float32)), [5, 5, 5])

    def test_compile_error(self):
        p = self.write("bad.tx", "kernel bad(N) {\n  in x: f32[N];\n  out y: f32[N];\n"
                       "  y[i] = x[i] * zz;\n}\n")
        e = self.assertRaisesMsg(txc.CompileError, [p + ":4:"], txc.load, p)
        self.assertIsInstance(e, txc.Error)
        self.assertEqual(e.errors[0][:2], (p, 4))
        self.assertIn("zz", e.errors[0][3])
        self.assertIn("^", e.diagnostics)
        e = self.assertRaisesMsg(txc.CompileError, ["<string>:1:"], txc.load,
                                 source="kernel k(N) { out y: f32[N]; y[i] = ; }")
        self.assertEqual(e.errors[0][0], "<string>")
        good = self.write("good.tx", FUSED)
        self.assertRaisesMsg(txc.CompileError, ["no kernel", "nosuch"], txc.load, good,
                             options=["-k", "nosuch"])

    def test_load_arguments(self):
        self.assertRaises(txc.Error, txc.load)
        self.assertRaises(TypeError, txc.load, "a.tx", source="x")
        self.assertRaisesMsg(txc.Error, ["cannot read"], txc.load,
                             os.path.join(self.dir, "missing.tx"))
        self.assertRaisesMsg(txc.ArgumentError, ["not an integer"], txc.load, source=FUSED,
                             defines={"N": 2.5})
        self.assertRaisesMsg(txc.CompileError, ["-D Q"], txc.load, source=FUSED,
                             defines={"Q": 3})

    def test_no_txc(self):
        old = os.environ["TXC"]
        os.environ["TXC"] = "/nonexistent/txc"
        try:
            self.assertRaisesMsg(txc.Error, ["TXC=/nonexistent/txc"], txc.load, source="x")
        finally:
            os.environ["TXC"] = old


class TestCalls(Base):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.mod = txc.load(source=FUSED)
        cls.more = txc.load(source="""
kernel pad_sum(N) {
  in  a: f32[N + 2];
  out s: f32[N];
  s[i] = a[i] + a[i + 1] + a[i + 2];
}
kernel stats(N) {
  in  a: f64[N];
  out total: f64;
  out sq: f64[N];
  total = sum(k < N) a[k];
  sq[i] = a[i] * a[i];
}
kernel scalars(N, k: i32, f: f64, on: bool, h: f16, u: u8) {
  in  a: i32[N];
  out b: f64[N];
  b[i] = on ? f64(a[i] * k + i32(u)) + f + f64(h) : 0.0;
}
kernel masks(N) {
  in  m: bool[N];
  in  x: f16[N];
  out y: f32[N];
  y[i] = m[i] ? f32(x[i]) : -1.0;
}
kernel window(N, R) {
  in  a: f32[N];
  out y: f32[N];
  y[i] = sum(r < R) a[(i + r) % N];
}
kernel tiles(N) {
  in  a: f32[N];
  out y: f32[N];
  y[i] = a[i] * 3.0;
}
schedule tiles for cpu {
  y.split(i, 4, tail = exact) -> (io, ii);
}
""")

    def ref(self, x, w, b, scale):
        return np.maximum(x * w + b, 0) * scale

    def test_odd_sizes(self):
        rng = np.random.default_rng(1)
        for m, n in [(1, 1), (1, 7), (3, 9), (17, 33), (64, 1001), (0, 5), (5, 0)]:
            x = rng.standard_normal((m, n)).astype(np.float32)
            w = rng.standard_normal(n).astype(np.float32)
            b = rng.standard_normal(n).astype(np.float32)
            y = self.mod.fused(x, w, b, scale=0.5)
            self.assertIsInstance(y, np.ndarray)
            self.assertEqual((y.shape, y.dtype), ((m, n), np.float32))
            np.testing.assert_allclose(y, self.ref(x, w, b, 0.5), rtol=1e-5, atol=1e-6)

    def test_outputs_given_and_by_name(self):
        x = np.random.rand(4, 6).astype(np.float32)
        w, b = np.full(6, 2, np.float32), np.full(6, -0.5, np.float32)
        out = np.empty((4, 6), np.float32)
        r = self.mod.fused(x, w, b, out, scale=1.0)
        self.assertIs(r, out)
        np.testing.assert_allclose(out, self.ref(x, w, b, 1.0), rtol=1e-6)
        out2 = np.empty((4, 6), np.float32)
        self.assertIs(self.mod.fused(x, w=w, b=b, y=out2, scale=3.0), out2)
        np.testing.assert_allclose(out2, self.ref(x, w, b, 3.0), rtol=1e-6)
        r = self.mod.fused(x, w, b, None, scale=1.0)
        np.testing.assert_allclose(r, self.ref(x, w, b, 1.0), rtol=1e-6)

    def test_strided_views(self):
        big = np.random.rand(8, 12).astype(np.float32)
        x = big[::2, 1::2]          # a strided input
        xt = np.random.rand(6, 4).astype(np.float32).T   # transposed
        w, b = np.random.rand(6).astype(np.float32), np.random.rand(6).astype(np.float32)
        np.testing.assert_allclose(self.mod.fused(x, w, b, scale=1.0),
                                   self.ref(x, w, b, 1.0), rtol=1e-6)
        np.testing.assert_allclose(self.mod.fused(xt, w, b, scale=1.0),
                                   self.ref(xt, w, b, 1.0), rtol=1e-6)
        # a strided output: computed, then copied into the view only
        dst = np.full((4, 12), 7.0, np.float32)
        self.mod.fused(x, w, b, dst[:, ::2], scale=2.0)
        np.testing.assert_allclose(dst[:, ::2], self.ref(x, w, b, 2.0), rtol=1e-6)
        self.assertTrue((dst[:, 1::2] == 7).all())
        # reversed (negative strides)
        r = x[::-1]
        np.testing.assert_allclose(self.mod.fused(r, w, b, scale=1.0), self.ref(r, w, b, 1.0),
                                   rtol=1e-6)

    def test_readonly_input(self):
        x = np.ones((2, 3), np.float32)
        x.setflags(write=False)
        y = self.mod.fused(x, np.ones(3, np.float32), np.zeros(3, np.float32), scale=1.0)
        np.testing.assert_array_equal(y, np.ones((2, 3)))
        y.setflags(write=False)
        self.assertRaisesMsg(txc.Error, ["'y'", "read-only"], self.mod.fused, x,
                             np.ones(3, np.float32), np.zeros(3, np.float32), y, scale=1.0)

    def test_lists_as_inputs(self):
        y = self.mod.fused([[1, -2, 3]], [1, 1, 1], [0, 0, 0], scale=1.0)
        np.testing.assert_array_equal(y, [[1, 0, 3]])

    def test_sizes_from_extents(self):
        a = np.arange(9, dtype=np.float32)
        s = self.more.pad_sum(a)
        np.testing.assert_array_equal(s, a[:-2] + a[1:-1] + a[2:])
        self.assertRaisesMsg(txc.Error, ["'s' has shape (3,), want (7,)"],
                             self.more.pad_sum, a, np.empty(3, np.float32))
        # N = 0 from a of 2 elements; a of 1 cannot be N + 2
        self.assertEqual(self.more.pad_sum(np.ones(2, np.float32)).shape, (0,))
        self.assertRaisesMsg(txc.Error, ["pass N="], self.more.pad_sum, np.ones(1, np.float32))

    def test_size_by_keyword(self):
        a = np.arange(5, dtype=np.float32)
        y = self.more.window(a, R=3)
        np.testing.assert_allclose(y, [a[[(i + r) % 5 for r in range(3)]].sum() for i in range(5)])
        self.assertRaisesMsg(txc.ArgumentError, ["window", "R"], self.more.window, a)
        self.assertRaisesMsg(txc.Error, ["'a' has shape (5,), want (4,)", "N = 4 given"],
                             self.more.window, a, R=1, N=4)
        self.assertRaisesMsg(txc.Error, ["negative"], self.more.window, a, R=-1)

    def test_zero_d_and_tuples(self):
        a = np.array([1.0, 2.0, 3.5])
        total, sq = self.more.stats(a)
        self.assertEqual(total.shape, ())
        self.assertEqual(float(total), 6.5)
        np.testing.assert_array_equal(sq, a * a)

    def test_scalar_types(self):
        a = np.arange(4, dtype=np.int32)
        b = self.more.scalars(a, k=3, f=0.25, on=True, h=0.5, u=2)
        np.testing.assert_array_equal(b, a * 3 + 2 + 0.75)
        np.testing.assert_array_equal(self.more.scalars(a, k=3, f=0.25, on=False, h=0.5, u=2), 0)
        self.assertRaisesMsg(txc.Error, ["scalar 'u' = 300 is out of range for u8"],
                             self.more.scalars, a, k=1, f=0, on=True, h=0, u=300)
        self.assertRaisesMsg(txc.Error, ["scalar 'k'", "i32"],
                             self.more.scalars, a, k=1.5, f=0, on=True, h=0, u=0)
        self.assertRaisesMsg(txc.Error, ["scalar 'f'"],
                             self.more.scalars, a, k=1, f="x", on=True, h=0, u=0)
        self.assertRaisesMsg(txc.ArgumentError, ["f, on, h, u", "keyword"],
                             self.more.scalars, a, k=1)

    def test_bool_and_f16(self):
        m = np.array([True, False, True])
        x = np.array([1.5, 2.5, -3.0], np.float16)
        np.testing.assert_array_equal(self.more.masks(m, x), [1.5, -1.0, -3.0])

    def test_errors(self):
        x = np.ones((3, 4), np.float32)
        w, b = np.ones(4, np.float32), np.ones(4, np.float32)
        f = self.mod.fused
        self.assertRaisesMsg(txc.Error, ["fused: tensor 'x' has dtype float64, want float32 (f32)"],
                             f, x.astype(np.float64), w, b, scale=1.0)
        self.assertRaisesMsg(txc.Error, ["tensor 'w' has shape (5,), want (4,)",
                                         "N = 4 from dimension 1 of 'x'"],
                             f, x, np.ones(5, np.float32), b, scale=1.0)
        self.assertRaisesMsg(txc.Error, ["tensor 'y' has shape (3, 5), want (3, 4)"],
                             f, x, w, b, np.empty((3, 5), np.float32), scale=1.0)
        self.assertRaisesMsg(txc.Error, ["tensor 'x' has 1 dimension (12,), want 2"],
                             f, x.ravel(), w, b, scale=1.0)
        self.assertRaisesMsg(txc.Error, ["tensor 'y' has dtype float64"],
                             f, x, w, b, np.empty((3, 4)), scale=1.0)
        self.assertRaisesMsg(txc.ArgumentError, ["takes 4 tensors"], f, x, w, b, x, x, scale=1.0)
        self.assertRaisesMsg(txc.ArgumentError, ["no parameter or tensor 'scal'"], f, x, w, b, scal=1.0)
        self.assertRaisesMsg(txc.ArgumentError, ["input 'b' is missing"], f, x, w, scale=1.0)
        self.assertRaisesMsg(txc.ArgumentError, ["'w' given twice"], f, x, w, b, w=w, scale=1.0)
        self.assertRaisesMsg(txc.Error, ["is a str, not a tensor"], f, x, w, "b", scale=1.0)
        self.assertRaisesMsg(txc.Error, ["scale must be given by keyword"], f, x, w, b, 2.0)
        self.assertRaisesMsg(txc.Error, ["'y' is a float", "scalar parameters go by keyword: scale="],
                             f, x, w, b, 2.0, scale=1.0)
        self.assertRaisesMsg(AttributeError, ["no kernel 'nosuch'", "fused"], getattr, self.mod, "nosuch")

    def test_refused_call_writes_nothing(self):
        x = np.ones((3, 4), np.float32)
        out = np.full((3, 4), 42.0, np.float32)
        with self.assertRaises(txc.Error):
            self.mod.fused(x, np.ones(4, np.float32), np.ones(5, np.float32), out, scale=1.0)
        self.assertTrue((out == 42).all())
        # the entry point's own refusal: an exact split needs N % 4 == 0
        y = np.full(6, 42.0, np.float32)
        e = self.assertRaisesMsg(txc.Error, ["tiles"], self.more.tiles, np.ones(6, np.float32), y)
        self.assertEqual(e.code, 3)
        self.assertTrue((y == 42).all())
        np.testing.assert_array_equal(self.more.tiles(np.ones(8, np.float32)), 3)

    def test_fork(self):
        # a forked child (multiprocessing, data loaders) runs a parallel
        # kernel after the parent has: libtxrt's pool starts afresh there
        x = np.ones((64, 40), np.float32)
        w, b = np.ones(40, np.float32), np.zeros(40, np.float32)
        self.mod.fused(x, w, b, scale=1.0)
        pid = os.fork()
        if pid == 0:
            import signal
            signal.alarm(20)
            ok = (self.mod.fused(x, w, b, scale=2.0) == 2).all()
            os._exit(0 if ok else 1)
        _, st = os.waitpid(pid, 0)
        self.assertTrue(os.WIFEXITED(st) and os.WEXITSTATUS(st) == 0,
                        "the forked child failed or hung (status %d)" % st)
        np.testing.assert_array_equal(self.mod.fused(x, w, b, scale=3.0), 3)

    def test_defines(self):
        mod = txc.load(source=FUSED, defines={"N": 4})
        x = np.ones((2, 4), np.float32)
        np.testing.assert_array_equal(mod.fused(x, np.ones(4, np.float32), np.zeros(4, np.float32),
                                                scale=1.0), x)
        e = self.assertRaisesMsg(txc.Error, ["fused"], mod.fused, np.ones((2, 5), np.float32),
                                 np.ones(5, np.float32), np.zeros(5, np.float32), scale=1.0)
        self.assertNotIn("Traceback", str(e))


# ---- DLPack objects that are not numpy arrays ------------------------------------

class _DLManaged(ctypes.Structure):
    _fields_ = [("dl_tensor", txc._dlpack.DLTensor), ("manager_ctx", ctypes.c_void_p),
                ("deleter", ctypes.c_void_p)]


_capsule_new = ctypes.pythonapi.PyCapsule_New
_capsule_new.restype = ctypes.py_object
_capsule_new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]


class Exported:
    """A tensor of another library: only __dlpack__ and __dlpack_device__,
    over a numpy array's memory, claiming the device it is given."""

    def __init__(self, arr, device=(1, 0), strides=None):
        self.arr = arr
        self.device = device
        self.shape = (ctypes.c_int64 * max(arr.ndim, 1))(*arr.shape)
        self.strides = None
        if strides is not None:
            self.strides = (ctypes.c_int64 * max(arr.ndim, 1))(*strides)
        self.calls = []

    def __dlpack_device__(self):
        return self.device

    def __dlpack__(self, stream=None):
        self.calls.append(stream)
        m = _DLManaged()
        t = m.dl_tensor
        t.data = self.arr.ctypes.data
        t.device = txc._dlpack.DLDevice(*self.device)
        t.ndim = self.arr.ndim
        code = {"f": 2, "i": 0, "u": 1, "b": 6}[self.arr.dtype.kind]
        t.dtype = txc._dlpack.DLDataType(code, 8 * self.arr.dtype.itemsize, 1)
        t.shape = ctypes.cast(self.shape, ctypes.POINTER(ctypes.c_int64))
        if self.strides is not None:
            t.strides = ctypes.cast(self.strides, ctypes.POINTER(ctypes.c_int64))
        self._m = m     # no deleter: this object owns the memory
        return _capsule_new(ctypes.addressof(m), b"dltensor", None)


class TestDLPack(Base):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.mod = txc.load(source=FUSED)

    def test_other_library(self):
        x = np.random.rand(3, 4).astype(np.float32)
        w, b = np.ones(4, np.float32), np.zeros(4, np.float32)
        out = np.zeros((3, 4), np.float32)
        ex, eo = Exported(x), Exported(out)
        r = self.mod.fused(ex, Exported(w), Exported(b), eo, scale=2.0)
        self.assertIs(r, eo)
        np.testing.assert_allclose(out, 2 * x, rtol=1e-6)
        self.assertEqual(ex.calls, [None])
        # numpy's own __dlpack__ objects work as well (a capsule consumer)
        x2 = np.random.rand(2, 4).astype(np.float32)
        r = self.mod.fused(Exported(x2), w, b, scale=1.0)
        self.assertIsInstance(r, np.ndarray)   # allocated for a host tensor
        np.testing.assert_allclose(r, x2, rtol=1e-6)

    def test_device_and_strides(self):
        x = np.ones((3, 4), np.float32)
        w, b = np.ones(4, np.float32), np.zeros(4, np.float32)
        self.assertRaisesMsg(txc.Error, ["tensor 'x' is on cuda:0", "target='cuda'"],
                             self.mod.fused, Exported(x, device=(2, 0)), w, b, scale=1.0)
        big = np.zeros((3, 8), np.float32)
        view = Exported(big[:, ::2], strides=(8, 2))
        self.assertRaisesMsg(txc.Error, ["tensor 'y' is a strided view", "(8, 2)", "contiguous"],
                             self.mod.fused, x, w, b, view, scale=1.0)
        self.assertTrue((big == 0).all())
        # a dimension of extent 1 may have any stride
        one = np.ones((1, 4), np.float32)
        np.testing.assert_array_equal(
            self.mod.fused(Exported(one, strides=(99, 1)), w, b, scale=1.0), one)

    def test_entry_point_checks_too(self):
        # a DLTensor that claims a shape the data does not have is refused by
        # the Python checks; NAME_dlpack's own messages come through Error
        x = np.ones((3, 4), np.float32)
        bad = Exported(x)
        bad.shape = (ctypes.c_int64 * 2)(3, 5)
        self.assertRaisesMsg(txc.Error, ["'w' has shape (4,), want (5,)"], self.mod.fused,
                             bad, np.ones(4, np.float32), np.zeros(4, np.float32), scale=1.0)


class TestCuda(Base):
    """target='cuda' in libtxrt's emulator (TXRT_CUDA=emulate): host arrays."""

    def test_emulated(self):
        src = FUSED + """
schedule fused for cuda {
  y.split(j, 32) -> (jo, ji);
  y.bind(i, blockIdx.x);
  y.bind(ji, threadIdx.x);
}
"""
        mod = txc.load(source=src, target="cuda")
        self.assertEqual(mod.target, "cuda")
        x = np.random.rand(5, 70).astype(np.float32) - 0.5
        w, b = np.random.rand(70).astype(np.float32), np.random.rand(70).astype(np.float32) - 0.5
        np.testing.assert_allclose(mod.fused(x, w, b, scale=3.0),
                                   np.maximum(x * w + b, 0) * 3.0, rtol=1e-5, atol=1e-6)
        # a device that is neither CUDA nor the host
        self.assertRaisesMsg(txc.Error, ["is on opencl:0", "CUDA tensors"], lambda: mod.fused(
            Exported(x, device=(4, 0)), w, b, scale=1.0))


if __name__ == "__main__":
    unittest.main(verbosity=2)
