"""_dlpack.py: arrays and tensors as DLPack DLTensors, with ctypes.

A kernel's DLPack entry point (txc --dlpack) takes `DLTensor *`s.  This
module turns what the caller passed into one:

  - a numpy array is described directly (its data pointer, shape and
    strides): numpy's own __dlpack__ refuses read-only arrays;
  - any other object with __dlpack__ (PyTorch, CuPy, JAX...) is exported
    through it; the capsule stays alive until the call is over and is not
    consumed, so its destructor frees the tensor as the protocol says.
    A CUDA tensor is exported for the legacy default stream (stream=1):
    the producer orders its pending work before that stream, which is the
    one libtxrt launches on before it waits for the kernels to finish.

View holds the DLTensor, what keeps it valid, and the facts the checks
read (shape, element strides, dtype, device).  The type tables map the
kernel's element types (tx(5) TYPES) to DLPack's codes and to numpy's and
PyTorch's dtypes.
"""

import ctypes
import sys

from ._errors import Error

# DLPack's device types and type codes (dlpack.h)
CPU, CUDA, CUDA_HOST, CUDA_MANAGED = 1, 2, 3, 13
INT, UINT, FLOAT, BFLOAT, BOOL = 0, 1, 2, 4, 6

DEVICE_NAMES = {1: "cpu", 2: "cuda", 3: "cuda_host", 4: "opencl", 7: "vulkan",
                8: "metal", 9: "vpi", 10: "rocm", 13: "cuda_managed", 14: "oneapi"}


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8),
                ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice),
                ("ndim", ctypes.c_int32), ("dtype", DLDataType),
                ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)),
                ("byte_offset", ctypes.c_uint64)]


# A kernel's element type: (DLPack code, bits, numpy name, torch name).
TYPES = {
    "bool": (BOOL, 8, "bool", "bool"),
    "i8": (INT, 8, "int8", "int8"),
    "i16": (INT, 16, "int16", "int16"),
    "i32": (INT, 32, "int32", "int32"),
    "i64": (INT, 64, "int64", "int64"),
    "u8": (UINT, 8, "uint8", "uint8"),
    "u16": (UINT, 16, "uint16", "uint16"),
    "u32": (UINT, 32, "uint32", "uint32"),
    "u64": (UINT, 64, "uint64", "uint64"),
    "f16": (FLOAT, 16, "float16", "float16"),
    "bf16": (BFLOAT, 16, None, "bfloat16"),
    "f32": (FLOAT, 32, "float32", "float32"),
    "f64": (FLOAT, 64, "float64", "float64"),
}

_CODE_NAMES = {INT: "int", UINT: "uint", FLOAT: "float", BFLOAT: "bfloat", BOOL: "bool",
               5: "complex"}


def dtype_name(code, bits, lanes=1):
    """DLPack's type as numpy would name it: "float32", "bool"."""
    name = _CODE_NAMES.get(code, "type code %d " % code)
    name = "bool" if code == BOOL else "%s%d" % (name, bits)
    return name if lanes == 1 else "%sx%d" % (name, lanes)


def type_matches(txtype, code, bits, lanes):
    """Whether a tensor of DLPack type (code, bits, lanes) holds txtype."""
    want_code, want_bits = TYPES[txtype][:2]
    if lanes != 1 or bits != want_bits:
        return False
    if txtype == "bool":
        return code in (BOOL, UINT)
    return code == want_code


def device_str(dev):
    t, i = dev
    return "%s:%d" % (DEVICE_NAMES.get(t, "device type %d" % t), i)


_capsule_get = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_get.restype = ctypes.c_void_p
_capsule_get.argtypes = [ctypes.py_object, ctypes.c_char_p]
_capsule_valid = ctypes.pythonapi.PyCapsule_IsValid
_capsule_valid.restype = ctypes.c_int
_capsule_valid.argtypes = [ctypes.py_object, ctypes.c_char_p]


def framework(obj):
    """'numpy', 'torch', 'cupy' or None: who made obj."""
    np = sys.modules.get("numpy")
    if np is not None and isinstance(obj, np.ndarray):
        return "numpy"
    mod = type(obj).__module__ or ""
    top = mod.split(".")[0]
    if top in ("torch", "cupy"):
        return top
    return None


class View:
    """One tensor argument as a DLTensor.

    tensor: the DLTensor (ctypes), ptr: its address for the call,
    shape: a tuple, strides: element strides (a tuple; C order when
    the producer gave none), code/bits/lanes: its type, device:
    (device_type, device_id), writable: whether it may be an output."""

    def __init__(self, obj, tensor, keep, writable=True, facts=None):
        self.obj = obj
        if not isinstance(tensor, DLTensor):
            # a copy of the producer's DLTensor, which stays as it gave it
            tensor = DLTensor.from_buffer_copy(DLTensor.from_address(tensor))
        t = self.tensor = tensor
        self.ptr = ctypes.addressof(tensor)
        self._keep = keep
        self.writable = writable
        if facts is not None:   # what the caller already knows (numpy)
            self.shape, self.strides, self.code, self.bits = facts
            self.lanes, self.device = 1, (CPU, 0)
            return
        n = t.ndim
        self.shape = tuple(t.shape[k] for k in range(n))
        if t.strides:
            self.strides = tuple(t.strides[k] for k in range(n))
        else:
            self.strides = c_strides(self.shape)
        self.code, self.bits, self.lanes = t.dtype.code, t.dtype.bits, t.dtype.lanes
        self.device = (t.device.device_type, t.device.device_id)
        if 0 in self.shape:
            # no elements: every layout is compact, as NULL strides say
            t.strides = None

    def compact(self):
        """Whether the elements are compact and in row-major order (a
        dimension of extent 1 may have any stride), as the entry point
        wants."""
        if 0 in self.shape:
            return True
        want = 1
        for extent, stride in zip(reversed(self.shape), reversed(self.strides)):
            if extent != 1 and stride != want:
                return False
            want *= extent
        return True


def c_strides(shape):
    strides, s = [], 1
    for extent in reversed(shape):
        strides.append(s)
        s *= extent
    return tuple(reversed(strides))


_NUMPY_CODES = {"b": BOOL, "i": INT, "u": UINT, "f": FLOAT, "c": 5}
_I64P = ctypes.POINTER(ctypes.c_int64)


def _from_numpy(arr):
    dt = arr.dtype
    code = _NUMPY_CODES.get(dt.kind)
    if code is None:
        raise Error("has numpy dtype %s, which no kernel takes" % dt)
    if not dt.isnative:
        raise Error("has byte order %r, not the machine's: convert it with "
                    "arr.astype(arr.dtype.newbyteorder('='))" % dt.byteorder)
    size = dt.itemsize
    shape = arr.shape
    if arr.size == 0:
        elems = None    # no elements: NULL strides
    else:
        if any(s % size for s in arr.strides):
            raise Error("has strides %s that are not a multiple of its element size %d"
                        % (arr.strides, size))
        elems = tuple(s // size for s in arr.strides)
    n = len(shape)
    cshape = (ctypes.c_int64 * max(n, 1))(*shape)
    t = DLTensor(arr.ctypes.data, DLDevice(CPU, 0), n, DLDataType(code, 8 * size, 1),
                 ctypes.cast(cshape, _I64P))
    cstrides = None
    if elems is not None:
        cstrides = (ctypes.c_int64 * max(n, 1))(*elems)
        t.strides = ctypes.cast(cstrides, _I64P)
    return View(arr, t, (arr, cshape, cstrides), arr.flags.writeable,
                (shape, elems if elems is not None else c_strides(shape), code, 8 * size))


def _from_capsule(obj):
    dev = None
    if hasattr(obj, "__dlpack_device__"):
        dev = tuple(int(x) for x in obj.__dlpack_device__())
    try:
        if dev is not None and dev[0] in (CUDA, CUDA_MANAGED):
            capsule = obj.__dlpack__(stream=1)
        else:
            capsule = obj.__dlpack__()
    except (BufferError, RuntimeError, TypeError, ValueError) as e:
        raise Error("cannot be exported through DLPack: %s" % e) from None
    if not _capsule_valid(capsule, b"dltensor"):
        raise Error("gave a DLPack capsule that is not an unused 'dltensor'")
    # a DLManagedTensor starts with its DLTensor
    ptr = _capsule_get(capsule, b"dltensor")
    return View(obj, ptr, capsule)


def view(obj):
    """obj as a View; raises Error (without the tensor's name) if it
    cannot be one."""
    if framework(obj) == "numpy":
        return _from_numpy(obj)
    if hasattr(obj, "__dlpack__"):
        if framework(obj) == "torch":
            if getattr(obj, "requires_grad", False):
                obj = obj.detach()   # the kernel is no autograd function
            if str(obj.dtype) == "torch.bool":
                # older PyTorch exports no bool: the same bytes as uint8
                import torch
                v = _from_capsule(obj.view(torch.uint8))
                v.code = BOOL
                return v
        return _from_capsule(obj)
    raise Error("is a %s, not a tensor: pass a numpy array or an object with "
                "__dlpack__ (PyTorch, CuPy)" % type(obj).__name__)
