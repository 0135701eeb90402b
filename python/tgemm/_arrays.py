"""torch tensors and __cuda_array_interface__ objects (CuPy) as TensorDescs, plus what a call
needs from their framework: a result buffer, a copy, the current stream and device."""

import contextlib
import sys

from ._layout import TensorDesc
from ._library import TgemmError

_TORCH_TYPES = {"torch.float32": "f32", "torch.float16": "f16", "torch.bfloat16": "bf16"}
# __cuda_array_interface__ typestr (numpy's array-interface codes).
_CAI_TYPES = {"<f4": "f32", "<f2": "f16"}


def _torch():
    return sys.modules.get("torch")


def is_torch(x):
    torch = _torch()
    return torch is not None and isinstance(x, torch.Tensor)


_tensor_type = None  # torch.Tensor once torch is imported


def plan_key(a, b, out, compute):
    """(the plan cache's key, a's, b's and out's addresses, a's device index where a and b are
    torch tensors, else None): the key holds everything of the operands a plan depends on but
    their addresses (shape, strides, dtype, device), and `compute`; None where a or b is not an
    array. torch tensors are read in one flat tuple, with the cheapest calls torch offers: a
    cached call's host cost is mostly these reads."""
    global _tensor_type
    if _tensor_type is None:
        torch = _torch()
        _tensor_type = torch.Tensor if torch is not None else None
    tensor = _tensor_type
    if tensor is not None and isinstance(a, tensor) and isinstance(b, tensor):
        index = a.get_device()
        if out is None:
            return ((compute, a.shape, a.stride(), a.dtype, index, b.shape, b.stride(), b.dtype,
                     b.get_device()), a.data_ptr(), b.data_ptr(), 0, index)
        if isinstance(out, tensor):  # one tuple built at once: the cached call's common case
            return ((compute, a.shape, a.stride(), a.dtype, index, b.shape, b.stride(), b.dtype,
                     b.get_device(), out.shape, out.stride(), out.dtype, out.get_device()),
                    a.data_ptr(), b.data_ptr(), out.data_ptr(), index)
    (sig_a, a_ptr), (sig_b, b_ptr) = signature(a), signature(b)
    sig_out, out_ptr = signature(out) if out is not None else (None, 0)
    if sig_a is None or sig_b is None:
        return None, 0, 0, 0, None
    return (compute, sig_a, sig_b, sig_out), a_ptr, b_ptr, out_ptr, None


def signature(x):
    """(everything a plan depends on but the address, the address) of an operand, read as
    cheaply as the framework allows; (None, 0) for objects that are not arrays."""
    if is_torch(x):  # get_device(): an int, cheaper than the torch.device of x.device
        return (x.shape, x.stride(), x.dtype, x.get_device()), x.data_ptr()
    cai = getattr(x, "__cuda_array_interface__", None)
    if cai is None:
        return None, 0
    strides = cai.get("strides")
    return ((tuple(cai["shape"]), cai["typestr"], tuple(strides) if strides else None,
             _cai_device(x)), int(cai["data"][0]))


def describe(x, name):
    """The TensorDesc of a torch tensor or an object with __cuda_array_interface__."""
    if is_torch(x):
        dtype = _TORCH_TYPES.get(str(x.dtype), str(x.dtype))
        return TensorDesc(tuple(x.shape), tuple(x.stride()), dtype, str(x.device),
                          x.data_ptr() if x.is_cuda else 0)
    cai = getattr(x, "__cuda_array_interface__", None)
    if cai is None:
        raise TgemmError(f"{name} must be a torch tensor or have __cuda_array_interface__ "
                         f"(CuPy), got {type(x).__name__}")
    return describe_cuda_array(cai, name, _cai_device(x))


def describe_cuda_array(cai, name, device="cuda"):
    """A TensorDesc from a __cuda_array_interface__ dict (strides in bytes, or None for
    C-contiguous); a bfloat16 array reports typestr '<V2', which is not taken as bf16."""
    shape = tuple(cai["shape"])
    typestr = cai["typestr"]
    dtype = _CAI_TYPES.get(typestr, typestr)
    itemsize = int(typestr[2:]) if typestr[2:].isdigit() else 1
    if cai.get("strides") is None:
        strides, step = [], 1
        for extent in reversed(shape):
            strides.append(step)
            step *= max(extent, 1)
        strides = tuple(reversed(strides))
    else:
        byte_strides = tuple(cai["strides"])
        if any(s % itemsize for s in byte_strides):
            raise TgemmError(f"{name}: strides {byte_strides} are not whole elements")
        strides = tuple(s // itemsize for s in byte_strides)
    if cai.get("mask") is not None:
        raise TgemmError(f"{name}: masked arrays are not supported")
    return TensorDesc(shape, strides, dtype, device, int(cai["data"][0]))


def _cai_device(x):
    device = getattr(x, "device", None)
    ident = getattr(device, "id", None)
    return f"cuda:{ident}" if ident is not None else "cuda"


def data_ptr(x):
    """The device address of a torch tensor or __cuda_array_interface__ object."""
    if is_torch(x):
        return x.data_ptr()
    return int(x.__cuda_array_interface__["data"][0])


def cai_stream(x):
    """The stream a __cuda_array_interface__ object's work runs on: CuPy's current stream,
    else the interface's own `stream` (1 and 2 are CUDA's legacy and per-thread defaults,
    passed through as cudaStream_t values), else the default stream."""
    cupy = sys.modules.get("cupy")
    if cupy is not None and isinstance(x, cupy.ndarray):
        return cupy.cuda.get_current_stream().ptr
    stream = x.__cuda_array_interface__.get("stream")
    return int(stream) if stream else 0


def current_stream(x):
    if is_torch(x):
        return _torch().cuda.current_stream(x.device).cuda_stream
    return cai_stream(x)


_torch_launch_reads = None  # torch._C's raw current stream and current device, once looked up


def launch_target(x, torch_index=None):
    """(the stream a call on x runs on, whether x's device is already the current one): the
    cheapest reads each framework offers, for a cached plan's calls. A False asks the caller to
    enter on_device(x). `torch_index`: x's device index, where x is a torch tensor and its
    caller has read it."""
    global _torch_launch_reads
    if torch_index is not None or is_torch(x):
        if _torch_launch_reads is None:
            cuda = _torch()._C
            _torch_launch_reads = (getattr(cuda, "_cuda_getCurrentRawStream", None),
                                   getattr(cuda, "_cuda_getDevice", None))
        raw_stream, current_device = _torch_launch_reads
        if raw_stream is None or current_device is None:  # a torch without these internals
            return current_stream(x), False
        index = x.get_device() if torch_index is None else torch_index
        return raw_stream(index), current_device() == index
    return cai_stream(x), False


def on_device(x):
    """A context in which x's device is the current CUDA device (libtgemm runs there)."""
    if is_torch(x):
        return _torch().cuda.device(x.device)
    cupy = sys.modules.get("cupy")
    if cupy is not None and isinstance(x, cupy.ndarray):
        return x.device
    return contextlib.nullcontext()


def empty_like_result(a, rows, cols, dtype):
    """A new rows x cols row-major matrix of `dtype` ("f32"...) in a's framework."""
    if is_torch(a):
        torch = _torch()
        types = {v: getattr(torch, k.split(".")[1]) for k, v in _TORCH_TYPES.items()}
        return torch.empty((rows, cols), dtype=types[dtype], device=a.device)
    cupy = sys.modules.get("cupy")
    if cupy is not None and isinstance(a, cupy.ndarray) and dtype in ("f32", "f16"):
        with a.device:
            return cupy.empty((rows, cols), dtype={"f32": "float32", "f16": "float16"}[dtype])
    raise TgemmError("pass `out`: tgemm allocates results only for torch tensors and CuPy "
                     f"arrays of float32/float16, got {type(a).__name__}")


def contiguous_copy(x, name):
    """A row-major copy of x (for strides no layout matches)."""
    if is_torch(x):
        return x.contiguous()
    cupy = sys.modules.get("cupy")
    if cupy is not None and isinstance(x, cupy.ndarray):
        return cupy.ascontiguousarray(x)
    raise TgemmError(f"{name} has strides no GEMM layout matches, and tgemm copies only torch "
                     "tensors and CuPy arrays; pass a row-major or transposed matrix")


def copy_into(dst, src):
    """dst[...] = src, in dst's framework."""
    if is_torch(dst):
        dst.copy_(src)
    else:
        dst[...] = src
