#!/usr/bin/env python3
"""torch_example.py: the fused operator of gelu_bias.tx on PyTorch tensors.

    PYTHONPATH=python TXC=./txc python3 examples/python/torch_example.py

Tensors go to the kernel through DLPack, without a copy; an omitted output
comes back as a torch tensor.  On a machine with a GPU the same file is
loaded with target="cuda" and called on CUDA tensors (the kernels run on
the current device's legacy default stream, after the work PyTorch has
queued for them, and the call returns when they are done).
"""

import os
import sys

import txc

try:
    import torch
except ImportError:
    print("PyTorch is not installed (Debian: python3-torch)")
    sys.exit(0)

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(HERE, "gelu_bias.tx")


def reference(x, w, b, scale):
    return scale * torch.nn.functional.gelu(x @ w + b, approximate="tanh")


def check(mod, device):
    torch.manual_seed(0)
    x = torch.randn(33, 20, device=device)
    w = torch.randn(20, 70, device=device)
    b = torch.randn(70, device=device)
    y = mod.dense_gelu(x, w, b, scale=0.5)
    assert isinstance(y, torch.Tensor) and y.device == x.device
    err = (y - reference(x, w, b, 0.5)).abs().max().item()
    print("%s: max error %.2g" % (device, err))
    assert err < 1e-3
    # a transposed (strided) input is copied to a contiguous one first
    wt = torch.randn(70, 20, device=device).t()
    err = (mod.dense_gelu(x, wt, b, scale=1.0) - reference(x, wt, b, 1.0)).abs().max().item()
    assert err < 1e-3


def main():
    check(txc.load(SRC), "cpu")
    if torch.cuda.is_available():
        check(txc.load(SRC, target="cuda"), "cuda")


if __name__ == "__main__":
    main()
