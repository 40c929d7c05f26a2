"""test_cuda_mock.py: target="cuda" in device mode, against the pretend
CUDA driver of tests/unit/cuda_rt_mock.c (tests/unit/python_cuda_mock.sh
puts it on the loader path as libcuda.so.1 and sets TXRT_CUDA=device).

Its "device memory" is host memory and its launches do nothing, so this
checks the package's side of CUDA calls, not the results: tensors that
say kDLCUDA (or kDLCUDAManaged) are accepted and exported for the legacy
default stream (__dlpack__(stream=1)); the entry point takes them and
launches; host arrays are refused in device mode, CUDA tensors by a cpu
module; an output of a library the package cannot allocate with must be
given; shape checks hold as on the host, and a refused call writes
nothing.
"""

import unittest

import numpy as np

import txc
from test_numpy import Exported

SRC = """
kernel scale(N, a: f32) {
  in  x: f32[N];
  out y: f32[N];
  y[i] = a * x[i];
}
schedule scale for cuda {
  y.split(i, 32) -> (b, t);
  y.bind(b, blockIdx.x);
  y.bind(t, threadIdx.x);
}
"""


class TestCudaDevice(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.mod = txc.load(source=SRC, target="cuda")

    def test_device_tensors(self):
        x = np.ones(100, np.float32)
        y = np.full(100, 7.0, np.float32)
        ex, ey = Exported(x, device=(2, 0)), Exported(y, device=(13, 0))
        self.assertIs(self.mod.scale(ex, ey, a=2.0), ey)
        self.assertEqual(ex.calls, [1])
        self.assertEqual(ey.calls, [1])

    def test_refusals(self):
        x = np.ones(100, np.float32)
        with self.assertRaisesRegex(txc.Error, r"'x' is on cpu:0; a module loaded with "
                                    r"target='cuda' takes CUDA tensors"):
            self.mod.scale(x, a=1.0)
        with self.assertRaisesRegex(txc.Error, r"cannot allocate output 'y' on cuda:0"):
            self.mod.scale(Exported(x, device=(2, 0)), a=1.0)
        y = np.full(99, 7.0, np.float32)
        with self.assertRaisesRegex(txc.Error, r"'y' has shape \(99,\), want \(100,\)"):
            self.mod.scale(Exported(x, device=(2, 0)), Exported(y, device=(2, 0)), a=1.0)
        self.assertTrue((y == 7).all())
        cpu = txc.load(source=SRC.split("schedule")[0])
        with self.assertRaisesRegex(txc.Error, r"'x' is on cuda:0; this module was compiled "
                                    r"for the cpu target"):
            cpu.scale(Exported(x, device=(2, 0)), a=1.0)


if __name__ == "__main__":
    unittest.main(verbosity=2)
