"""test_torch.py: the txc Python package on PyTorch tensors.

Run by tests/unit/python_torch.sh (which skips where PyTorch is missing).
CPU tensors: results against torch at odd sizes, outputs allocated as
torch tensors, given outputs written in place, strided views (a
transpose, a slice with a step; inputs copied, outputs copied back),
tensors that require grad, 0-d and empty tensors, bf16 and bool, the
errors (dtype, shapes, output shape).  CUDA tensors when torch sees a GPU
(target="cuda"), including a tensor made on another stream.
"""

import os
import unittest

import torch

import txc

SRC = """
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
schedule fused for cuda {
  y.split(j, 32) -> (jo, ji);
  y.bind(i, blockIdx.x);
  y.bind(ji, threadIdx.x);
}
kernel brain(N) {
  in  x: bf16[N];
  in  m: bool[N];
  out y: bf16[N];
  out total: f64;
  y[i] = m[i] ? x[i] * 2.0 : x[i];
  total = sum(k < N) f64(x[k]);
}
"""


def ref(x, w, b, scale):
    return torch.clamp(x * w + b, min=0) * scale


class TestTorch(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.mod = txc.load(source=SRC)

    def test_odd_sizes(self):
        torch.manual_seed(0)
        for m, n in [(1, 1), (3, 7), (17, 33), (5, 0)]:
            x, w, b = torch.randn(m, n), torch.randn(n), torch.randn(n)
            y = self.mod.fused(x, w, b, scale=1.5)
            self.assertIsInstance(y, torch.Tensor)
            self.assertEqual((tuple(y.shape), y.dtype), ((m, n), torch.float32))
            torch.testing.assert_close(y, ref(x, w, b, 1.5))

    def test_given_and_strided(self):
        x, w, b = torch.randn(6, 4).t(), torch.randn(6), torch.randn(6)   # x: a transpose
        out = torch.full((4, 12), 9.0)
        r = self.mod.fused(x, w, b, out[:, ::2], scale=2.0)
        torch.testing.assert_close(out[:, ::2], ref(x, w, b, 2.0))
        self.assertTrue(bool((out[:, 1::2] == 9).all()))
        self.assertEqual(r.data_ptr(), out.data_ptr())
        dst = torch.empty(4, 6)
        self.assertIs(self.mod.fused(x, w, b, dst, scale=1.0), dst)
        torch.testing.assert_close(dst, ref(x, w, b, 1.0))

    def test_requires_grad(self):
        x = torch.randn(3, 4, requires_grad=True)
        y = self.mod.fused(x, torch.ones(4), torch.zeros(4), scale=1.0)
        torch.testing.assert_close(y, torch.clamp(x.detach(), min=0))

    def test_bf16_bool_0d(self):
        x = torch.tensor([1.0, -2.0, 3.5], dtype=torch.bfloat16)
        m = torch.tensor([True, False, True])
        y, total = self.mod.brain(x, m)
        self.assertEqual(y.dtype, torch.bfloat16)
        torch.testing.assert_close(y, torch.where(m, x * 2, x))
        self.assertEqual(total.shape, ())
        self.assertEqual(float(total), 2.5)

    def test_errors(self):
        x, w, b = torch.ones(3, 4), torch.ones(4), torch.ones(4)
        f = self.mod.fused
        with self.assertRaisesRegex(txc.Error, "'x' has dtype float64, want float32"):
            f(x.double(), w, b, scale=1.0)
        with self.assertRaisesRegex(txc.Error, r"'b' has shape \(5,\), want \(4,\)"):
            f(x, w, torch.ones(5), scale=1.0)
        out = torch.full((3, 5), 7.0)
        with self.assertRaisesRegex(txc.Error, r"'y' has shape \(3, 5\), want \(3, 4\)"):
            f(x, w, b, out, scale=1.0)
        self.assertTrue(bool((out == 7).all()))

    @unittest.skipUnless(torch.cuda.is_available(), "no GPU")
    def test_cuda(self):
        mod = txc.load(source=SRC, target="cuda")
        s = torch.cuda.Stream()
        with torch.cuda.stream(s):
            x = torch.randn(9, 70, device="cuda")
            w, b = torch.randn(70, device="cuda"), torch.randn(70, device="cuda")
            y = mod.fused(x, w, b, scale=0.5)
        torch.cuda.synchronize()
        self.assertEqual(y.device.type, "cuda")
        torch.testing.assert_close(y, ref(x, w, b, 0.5))
        with self.assertRaisesRegex(txc.Error, "is on cpu:0"):
            mod.fused(x.cpu(), w.cpu(), b.cpu(), scale=1.0)
        with self.assertRaisesRegex(txc.Error, "is on cuda:0"):
            self.mod.fused(x, w, b, scale=1.0)


if __name__ == "__main__":
    unittest.main(verbosity=2)
