"""From tensor descriptions to one libtgemm call: pure functions, testable without a GPU.

libtgemm stores every matrix row-major: X[i, j] at X[i * ld + j] with ld >= its columns
(include/tgemm/tgemm_c.h). A 2-D tensor maps onto that directly when its last stride is 1
(op N), and as the transpose of a row-major matrix when its first stride is 1 (op T, a
transposed view). Anything else (broadcast, negative or doubly strided) has no layout.
"""

from typing import NamedTuple, Optional, Tuple

from ._library import TgemmError

INT_MAX = 2**31 - 1
ELEMENT_BYTES = {"f32": 4, "f16": 2, "bf16": 2}


class TensorDesc(NamedTuple):
    """What a GEMM needs of one operand; strides are in elements, as torch gives them."""

    shape: Tuple[int, ...]
    strides: Tuple[int, ...]
    dtype: str  # "f32", "f16", "bf16", or the foreign name of any other type
    device: str  # "cuda:0" or "cpu" ...
    ptr: int = 0


class MatrixLayout(NamedTuple):
    """One operand as libtgemm takes it: op(X) is the logical matrix, X stored row-major."""

    op: str  # "N" or "T"
    ld: int


class GemmPlan(NamedTuple):
    """The arguments of one tgemmGemmEx call for C = alpha op(A) op(B) + beta C."""

    op_a: str
    op_b: str
    m: int
    n: int
    k: int
    a_ptr: int
    lda: int
    b_ptr: int
    ldb: int
    c_ptr: int
    ldc: int
    a_type: str
    c_type: str
    compute: str


def matrix_layout(desc: TensorDesc, name: str) -> Optional[MatrixLayout]:
    """The layout of a 2-D operand, or None when its strides have none (copy it first)."""
    rows, cols = desc.shape
    row_stride, col_stride = desc.strides
    # A dimension of extent 1 has no meaningful stride: either order fits it.
    if col_stride == 1 or cols == 1:
        ld = row_stride if rows > 1 else max(cols, 1)
        if ld >= max(cols, 1):
            return _checked(MatrixLayout("N", ld), name)
    if row_stride == 1 or rows == 1:
        ld = col_stride if cols > 1 else max(rows, 1)
        if ld >= max(rows, 1):
            return _checked(MatrixLayout("T", ld), name)
    return None


def _checked(layout: MatrixLayout, name: str) -> MatrixLayout:
    if layout.ld > INT_MAX:
        raise TgemmError(f"{name}: leading dimension {layout.ld} exceeds 2^31 - 1")
    return layout


def result_type(a_type: str, out_type: Optional[str]) -> str:
    """C's element type: `out`'s when given, else the inputs'."""
    return out_type if out_type is not None else a_type


def check_operands(a: TensorDesc, b: TensorDesc, out: Optional[TensorDesc],
                   compute: Optional[str]) -> str:
    """Checks what a call may take; returns the compute type. Raises TgemmError naming the
    argument: devices, ranks, shapes, types and the type combinations tgemm computes."""
    operands = [("a", a), ("b", b)] + ([("out", out)] if out is not None else [])
    for name, desc in operands:
        if not desc.device.startswith("cuda"):
            raise TgemmError(f"{name} is on {desc.device}; tgemm.matmul needs CUDA tensors")
        if len(desc.shape) != 2:
            raise TgemmError(f"{name} must be 2-D (a matrix), got shape {tuple(desc.shape)}")
        if desc.dtype not in ELEMENT_BYTES:
            raise TgemmError(f"{name} has dtype {desc.dtype}; tgemm computes float32, "
                             "float16 and bfloat16")
        if any(extent > INT_MAX for extent in desc.shape):
            raise TgemmError(f"{name}: shape {tuple(desc.shape)} exceeds 2^31 - 1")
    devices = {desc.device for _, desc in operands}
    if len(devices) > 1:
        raise TgemmError(f"operands are on different devices: {sorted(devices)}")
    if a.shape[1] != b.shape[0]:
        raise TgemmError(f"a is {a.shape[0]}x{a.shape[1]} and b is {b.shape[0]}x{b.shape[1]}: "
                         "a's columns must equal b's rows")
    if out is not None and tuple(out.shape) != (a.shape[0], b.shape[1]):
        raise TgemmError(f"out must be {a.shape[0]}x{b.shape[1]}, got "
                         f"{out.shape[0]}x{out.shape[1]}")
    if a.dtype != b.dtype:
        raise TgemmError(f"a is {a.dtype} and b is {b.dtype}; they must have one dtype")
    c_type = result_type(a.dtype, out.dtype if out is not None else None)
    if c_type != a.dtype and c_type != "f32":
        raise TgemmError(f"out is {c_type} for {a.dtype} inputs; it must be {a.dtype} or f32")
    if compute is None:
        return "f32"
    if compute not in ("f32", "tf32", "f32x3"):
        raise TgemmError(f"compute must be 'f32', 'tf32' or 'f32x3', got {compute!r}")
    if compute != "f32" and a.dtype != "f32":
        raise TgemmError(f"compute={compute!r} needs float32 inputs, got {a.dtype}")
    return compute


def plan_gemm(a: TensorDesc, b: TensorDesc, out: TensorDesc,
              compute: Optional[str] = None) -> GemmPlan:
    """The libtgemm call computing out = a @ b. Every operand must have a layout (see
    matrix_layout; the caller copies the others first). A column-major `out` is computed as
    out^T = b^T a^T, so C's layout is never a restriction."""
    compute = check_operands(a, b, out, compute)
    la, lb, lc = matrix_layout(a, "a"), matrix_layout(b, "b"), matrix_layout(out, "out")
    for name, layout in (("a", la), ("b", lb), ("out", lc)):
        if layout is None:
            raise TgemmError(f"{name} has strides no GEMM layout matches; copy it first")
    m, k, n = a.shape[0], a.shape[1], b.shape[1]
    if lc.op == "N":
        return GemmPlan(la.op, lb.op, m, n, k, a.ptr, la.ld, b.ptr, lb.ld, out.ptr, lc.ld,
                        a.dtype, out.dtype, compute)
    # out^T (n x m, row-major with ld) = op(B)^T op(A)^T: swap the operands, flip each op.
    flip = {"N": "T", "T": "N"}
    return GemmPlan(flip[lb.op], flip[la.op], n, m, k, b.ptr, lb.ld, a.ptr, la.ld, out.ptr,
                    lc.ld, a.dtype, out.dtype, compute)
