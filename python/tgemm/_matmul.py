"""tgemm.matmul: one libtgemm call on torch tensors or CUDA-array-interface objects."""

import ctypes

from . import _arrays
from ._layout import TensorDesc, check_operands, matrix_layout, plan_gemm
from ._library import (COMPUTE_TYPES, DATA_TYPES, OPS, TgemmError, check, fast_gemm, handle,
                       library, raw_gemm)


# Plans by everything of the operands but their addresses (shape, strides, dtype, device), for
# calls that need no copy: a repeated call skips the checks and the layout mapping.
_plans = {}
_MAX_PLANS = 4096


def matmul(a, b, out=None, *, alpha=1.0, beta=0.0, c=None, compute=None, copy=True, db=None):
    """out = alpha * a @ b + beta * c, on a's device and its current stream.

    a (m x k) and b (k x n): float32, float16 or bfloat16 CUDA matrices of one dtype, row-major
    or transposed views (other strides are copied when `copy`, else refused). out: m x n, the
    inputs' dtype or float32; allocated when None. c: the addend (default: out's contents, as
    cuBLAS's C, when beta != 0). compute: "f32" (FP32 accuracy, the default), "tf32" (one TF32
    pass) or "f32x3" (FP32-accurate on tensor cores), for float32 inputs. db: the tuning
    database (default $TGEMM_DB, else tgemm.db). Raises TgemmError with the library's status.
    """
    key = None
    if c is None or beta == 0:
        key, a_ptr, b_ptr, out_ptr, index = _arrays.plan_key(a, b, out, compute)
        cached = _plans.get(key) if key is not None else None
        if cached is not None:
            plan, swapped, args = cached
            if out is None:
                out = _arrays.empty_like_result(a, plan.n if swapped else plan.m,
                                                plan.m if swapped else plan.n, plan.c_type)
                out_ptr = _arrays.data_ptr(out)
            if swapped:
                a_ptr, b_ptr = b_ptr, a_ptr
            stream, here = _arrays.launch_target(a, index)
            if here:
                _run_cached(plan, args, alpha, beta, stream, db, a_ptr, b_ptr, out_ptr)
            else:
                with _arrays.on_device(a):
                    _run_cached(plan, args, alpha, beta, stream, db, a_ptr, b_ptr, out_ptr)
            return out
    da, db_ = _arrays.describe(a, "a"), _arrays.describe(b, "b")
    dout = _arrays.describe(out, "out") if out is not None else None
    return _matmul_checked(a, b, out, da, db_, dout, key, alpha, beta, c, compute, copy, db)


def _matmul_checked(a, b, out, da, db_, dout, key, alpha, beta, c, compute, copy, db):
    """The first call of a signature, and calls that copy: every check, then the plan."""
    compute = check_operands(da, db_, dout, compute)
    m, n = da.shape[0], db_.shape[1]
    if beta != 0 and c is None and out is None:
        raise TgemmError("beta != 0 needs c (or out holding C)")
    if c is not None and beta != 0:
        dc = _arrays.describe(c, "c")
        if tuple(dc.shape) != (m, n) or dc.device != da.device:
            raise TgemmError(f"c must be {m}x{n} on {da.device}, got {tuple(dc.shape)} on "
                             f"{dc.device}")
    a_direct, b_direct = a, b
    a = _with_layout(a, da, "a", copy)
    b = _with_layout(b, db_, "b", copy)
    c_type = dout.dtype if dout is not None else da.dtype
    target = out if out is not None else _arrays.empty_like_result(a, m, n, c_type)
    work = target
    if dout is not None and matrix_layout(dout, "out") is None:
        if not copy:
            raise TgemmError("out has strides no GEMM layout matches (copy=False)")
        work = _arrays.contiguous_copy(target, "out") if beta != 0 else \
            _arrays.empty_like_result(a, m, n, c_type)
    if c is not None and beta != 0 and c is not target:
        _arrays.copy_into(work, c)
    dwork = _arrays.describe(work, "out")
    plan = plan_gemm(_arrays.describe(a, "a"), _arrays.describe(b, "b"), dwork, compute)
    with _arrays.on_device(a):
        run_plan(plan, alpha, beta, _arrays.current_stream(a), db)
    if work is not target:
        _arrays.copy_into(target, work)
    elif key is not None and a is a_direct and b is b_direct:
        if len(_plans) >= _MAX_PLANS:
            _plans.clear()
        _plans[key] = (plan, matrix_layout(dwork, "out").op == "T", _converted_args(plan))
    return target


def _with_layout(x, desc: TensorDesc, name, copy):
    if matrix_layout(desc, name) is not None:
        return x
    if not copy:
        raise TgemmError(f"{name} has strides {desc.strides} for shape {desc.shape}: neither "
                         "row-major nor a transposed view (copy=False)")
    return _arrays.contiguous_copy(x, name)


def _converted_args(plan):
    """A plan's arguments but the handle, pointers, scalars and stream, as tgemmGemmEx takes
    them: op_a, op_b, m, n, k, a type, lda, b type, ldb, c type, ldc, compute."""
    return (OPS[plan.op_a], OPS[plan.op_b], plan.m, plan.n, plan.k, DATA_TYPES[plan.a_type],
            plan.lda, DATA_TYPES[plan.a_type], plan.ldb, DATA_TYPES[plan.c_type], plan.ldc,
            COMPUTE_TYPES[plan.compute])


def _run_cached(plan, args, alpha, beta, stream, db, a_ptr, b_ptr, c_ptr):
    """run_plan for a cached plan on new addresses, with its arguments converted once (unpacked
    into names: a call with every argument in place is cheaper than one built with *)."""
    op_a, op_b, m, n, k, a_type, lda, b_type, ldb, c_type, ldc, compute = args
    fast = fast_gemm()
    if fast is not None:
        status = fast(handle(db), op_a, op_b, m, n, k, alpha, a_ptr, a_type, lda, b_ptr, b_type,
                      ldb, beta, c_ptr, c_type, ldc, compute, stream)
    else:
        void_p, float_ref = ctypes.c_void_p, ctypes.byref
        status = raw_gemm()(void_p(handle(db)), op_a, op_b, m, n, k,
                            float_ref(ctypes.c_float(alpha)), void_p(a_ptr), a_type, lda,
                            void_p(b_ptr), b_type, ldb, float_ref(ctypes.c_float(beta)),
                            void_p(c_ptr), c_type, ldc, compute, void_p(stream))
    if status:
        _check_status(status, plan)


def run_plan(plan, alpha, beta, stream, db=None):
    """Calls tgemmGemmEx with `plan`'s arguments on `stream` (a cudaStream_t as int)."""
    lib = library()
    alpha_f, beta_f = ctypes.c_float(alpha), ctypes.c_float(beta)
    status = lib.tgemmGemmEx(
        handle(db), OPS[plan.op_a], OPS[plan.op_b], plan.m, plan.n, plan.k,
        ctypes.byref(alpha_f), plan.a_ptr, DATA_TYPES[plan.a_type], plan.lda, plan.b_ptr,
        DATA_TYPES[plan.a_type], plan.ldb, ctypes.byref(beta_f), plan.c_ptr,
        DATA_TYPES[plan.c_type], plan.ldc, COMPUTE_TYPES[plan.compute], stream)
    _check_status(status, plan)


def _check_status(status, plan):
    if status:
        check(status, f"tgemm.matmul {plan.a_type} {plan.op_a}{plan.op_b} "
                      f"m={plan.m} n={plan.n} k={plan.k}")
