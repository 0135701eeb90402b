"""Stride-to-layout mapping and argument checks, as pure functions (no GPU, torch or numpy).

Each plan is checked by running it: a small interpreter computes C = op(A) op(B) exactly as
include/tgemm/tgemm_c.h defines the call (row-major, X[i * ld + j]) over one flat "memory",
and the result must equal the logical product of the tensors the descriptions name."""

import itertools
import unittest

from tgemm import TensorDesc, TgemmError, matrix_layout, plan_gemm
from tgemm import _matmul as tgemm_matmul
from tgemm._arrays import describe_cuda_array


class Memory:
    """A flat list of numbers; a strided view reads element (i, j) at ptr + i*s0 + j*s1."""

    def __init__(self):
        self.cells = []

    def matrix(self, rows, cols, transposed, pad, dtype="f32", fill=None):
        """A rows x cols view: row-major (ld = cols + pad) or the transpose of such a matrix."""
        ptr = len(self.cells)
        stored_rows, stored_cols = (cols, rows) if transposed else (rows, cols)
        ld = stored_cols + pad
        for index in range(stored_rows * ld):
            self.cells.append(fill if fill is not None else (index * 7 + ptr) % 11 - 5)
        strides = (1, ld) if transposed else (ld, 1)
        return TensorDesc((rows, cols), strides, dtype, "cuda:0", ptr)

    def read(self, desc):
        rows, cols = desc.shape
        s0, s1 = desc.strides
        return [[self.cells[desc.ptr + i * s0 + j * s1] for j in range(cols)]
                for i in range(rows)]


def run_plan_in(memory, plan):
    """C = op(A) op(B) by tgemm_c.h's definition, written into memory."""
    def element(ptr, ld, op, i, j):  # op(X)[i][j]
        return memory.cells[ptr + (i * ld + j if op == "N" else j * ld + i)]
    for i in range(plan.m):
        for j in range(plan.n):
            memory.cells[plan.c_ptr + i * plan.ldc + j] = sum(
                element(plan.a_ptr, plan.lda, plan.op_a, i, p)
                * element(plan.b_ptr, plan.ldb, plan.op_b, p, j) for p in range(plan.k))


def product(a, b):
    return [[sum(a[i][p] * b[p][j] for p in range(len(b))) for j in range(len(b[0]))]
            for i in range(len(a))]


class MatrixLayoutTest(unittest.TestCase):
    def test_row_major_is_op_n_with_its_row_stride(self):
        self.assertEqual(matrix_layout(TensorDesc((3, 5), (5, 1), "f32", "cuda"), "a").op, "N")
        self.assertEqual(matrix_layout(TensorDesc((3, 5), (8, 1), "f32", "cuda"), "a").ld, 8)

    def test_transposed_view_is_op_t_with_its_column_stride(self):
        layout = matrix_layout(TensorDesc((3, 5), (1, 4), "f32", "cuda"), "a")
        self.assertEqual((layout.op, layout.ld), ("T", 4))

    def test_extent_one_dimensions_take_any_stride(self):
        self.assertEqual(matrix_layout(TensorDesc((1, 5), (999, 1), "f32", "cuda"), "a").ld, 5)
        self.assertEqual(matrix_layout(TensorDesc((4, 1), (3, 77), "f32", "cuda"), "a").ld, 3)
        self.assertIsNotNone(matrix_layout(TensorDesc((1, 1), (0, 0), "f32", "cuda"), "a"))

    def test_strides_without_a_layout_are_none(self):
        for strides in [(0, 1), (2, 2), (5, 3), (-5, 1), (1, 0), (3, 1)]:
            with self.subTest(strides=strides):
                self.assertIsNone(matrix_layout(TensorDesc((4, 5), strides, "f32", "cuda"), "a"))

    def test_leading_dimension_beyond_int_is_refused(self):
        with self.assertRaisesRegex(TgemmError, "leading dimension"):
            matrix_layout(TensorDesc((2, 5), (2**31, 1), "f32", "cuda"), "a")


class PlanGemmTest(unittest.TestCase):
    def test_every_layout_of_a_b_and_out_computes_the_product(self):
        m, n, k = 3, 4, 5
        for ta, tb, tc, pad in itertools.product([False, True], [False, True], [False, True],
                                                 [0, 2]):
            with self.subTest(a_transposed=ta, b_transposed=tb, out_transposed=tc, pad=pad):
                memory = Memory()
                a = memory.matrix(m, k, ta, pad)
                b = memory.matrix(k, n, tb, pad)
                out = memory.matrix(m, n, tc, pad, fill=0)
                plan = plan_gemm(a, b, out)
                run_plan_in(memory, plan)
                self.assertEqual(memory.read(out), product(memory.read(a), memory.read(b)))

    def test_vectors_and_single_rows_compute_the_product(self):
        for m, n, k in [(1, 4, 3), (4, 1, 3), (3, 4, 1), (1, 1, 1)]:
            for ta, tb in itertools.product([False, True], repeat=2):
                with self.subTest(m=m, n=n, k=k, a_transposed=ta, b_transposed=tb):
                    memory = Memory()
                    a, b = memory.matrix(m, k, ta, 1), memory.matrix(k, n, tb, 1)
                    out = memory.matrix(m, n, False, 0, fill=0)
                    run_plan_in(memory, plan_gemm(a, b, out))
                    self.assertEqual(memory.read(out), product(memory.read(a), memory.read(b)))

    def test_types_and_compute_pass_through(self):
        a = TensorDesc((2, 3), (3, 1), "f16", "cuda:0", 16)
        b = TensorDesc((3, 4), (4, 1), "f16", "cuda:0", 32)
        out = TensorDesc((2, 4), (4, 1), "f32", "cuda:0", 64)
        plan = plan_gemm(a, b, out)
        self.assertEqual((plan.a_type, plan.c_type, plan.compute), ("f16", "f32", "f32"))
        a32 = TensorDesc((2, 3), (3, 1), "f32", "cuda:0", 16)
        b32 = TensorDesc((3, 4), (4, 1), "f32", "cuda:0", 32)
        c32 = TensorDesc((2, 4), (4, 1), "f32", "cuda:0", 64)
        self.assertEqual(plan_gemm(a32, b32, c32, "tf32").compute, "tf32")


class ArgumentCheckTest(unittest.TestCase):
    def desc(self, shape, dtype="f32", device="cuda:0"):
        return TensorDesc(shape, (shape[1], 1), dtype, device, 256)

    def assertRefused(self, pattern, a, b, out=None, compute=None):
        out = out or self.desc((a.shape[0], b.shape[1]), a.dtype, a.device)
        with self.assertRaisesRegex(TgemmError, pattern):
            plan_gemm(a, b, out, compute)

    def test_cpu_tensors_are_refused_naming_the_argument(self):
        self.assertRefused("a is on cpu", self.desc((2, 3), device="cpu"), self.desc((3, 4)))
        self.assertRefused("b is on cpu", self.desc((2, 3)), self.desc((3, 4), device="cpu"))

    def test_mismatched_shapes_are_refused(self):
        self.assertRefused("a's columns must equal b's rows", self.desc((2, 3)),
                           self.desc((4, 4)))
        self.assertRefused("out must be 2x4", self.desc((2, 3)), self.desc((3, 4)),
                           self.desc((4, 2)))

    def test_other_ranks_are_refused(self):
        a = TensorDesc((2, 3, 4), (12, 4, 1), "f32", "cuda:0")
        self.assertRefused("a must be 2-D", a, self.desc((4, 4)), self.desc((2, 4)))

    def test_unsupported_and_mixed_dtypes_are_refused(self):
        self.assertRefused("dtype torch.float64", self.desc((2, 3), "torch.float64"),
                           self.desc((3, 4), "torch.float64"), self.desc((2, 4)))
        self.assertRefused("a is f16 and b is bf16", self.desc((2, 3), "f16"),
                           self.desc((3, 4), "bf16"))
        self.assertRefused("out is bf16 for f16 inputs", self.desc((2, 3), "f16"),
                           self.desc((3, 4), "f16"), self.desc((2, 4), "bf16"))

    def test_tensor_core_compute_types_need_float32(self):
        self.assertRefused("needs float32", self.desc((2, 3), "f16"), self.desc((3, 4), "f16"),
                           compute="tf32")
        self.assertRefused("compute must be", self.desc((2, 3)), self.desc((3, 4)),
                           compute="fp8")

    def test_operands_on_two_devices_are_refused(self):
        self.assertRefused("different devices", self.desc((2, 3)),
                           self.desc((3, 4), device="cuda:1"))

    def test_strides_without_a_layout_are_refused_by_the_plan(self):
        a = TensorDesc((4, 5), (2, 2), "f32", "cuda:0", 256)
        self.assertRefused("a has strides no GEMM layout matches", a, self.desc((5, 3)))


class CudaArrayInterfaceTest(unittest.TestCase):
    def test_contiguous_arrays_get_row_major_strides(self):
        desc = describe_cuda_array({"shape": (3, 5), "typestr": "<f4", "data": (4096, False),
                                    "strides": None, "version": 3}, "a")
        self.assertEqual((desc.strides, desc.dtype, desc.ptr), ((5, 1), "f32", 4096))

    def test_byte_strides_become_element_strides(self):
        desc = describe_cuda_array({"shape": (3, 5), "typestr": "<f2", "data": (4096, False),
                                    "strides": (2, 6), "version": 3}, "a")
        self.assertEqual((desc.strides, desc.dtype), ((1, 3), "f16"))
        self.assertEqual(matrix_layout(desc, "a").op, "T")

    def test_other_types_keep_their_name_and_are_refused(self):
        desc = describe_cuda_array({"shape": (2, 2), "typestr": "<f8", "data": (0, False),
                                    "version": 3}, "a")
        with self.assertRaisesRegex(TgemmError, "dtype <f8"):
            plan_gemm(desc, desc, desc)


class FakeCudaArray:
    """A __cuda_array_interface__ object at a made-up address (never dereferenced here)."""

    def __init__(self, shape, address, strides=None, typestr="<f4"):
        self.__cuda_array_interface__ = {"shape": shape, "typestr": typestr,
                                         "data": (address, False), "strides": strides,
                                         "version": 3}


class MatmulPlanCacheTest(unittest.TestCase):
    """A repeated call reuses its plan with the new buffers' addresses: it must pass exactly
    what a fresh plan for those buffers would."""

    def setUp(self):
        self.calls = []
        self.saved = tgemm_matmul.run_plan, tgemm_matmul._run_cached

        def capture(plan, alpha, beta, stream, db=None, a_ptr=None, b_ptr=None, c_ptr=None):
            self.calls.append(plan._replace(
                a_ptr=plan.a_ptr if a_ptr is None else a_ptr,
                b_ptr=plan.b_ptr if b_ptr is None else b_ptr,
                c_ptr=plan.c_ptr if c_ptr is None else c_ptr))

        def capture_cached(plan, args, alpha, beta, stream, db, a_ptr, b_ptr, c_ptr):
            self.assertEqual(args, tgemm_matmul._converted_args(plan))
            capture(plan, alpha, beta, stream, db, a_ptr, b_ptr, c_ptr)
        tgemm_matmul.run_plan, tgemm_matmul._run_cached = capture, capture_cached
        tgemm_matmul._plans.clear()

    def tearDown(self):
        tgemm_matmul.run_plan, tgemm_matmul._run_cached = self.saved
        tgemm_matmul._plans.clear()

    def test_every_layout_called_twice_passes_a_fresh_plans_arguments(self):
        m, n, k = 3, 4, 5
        for ta, tb, tc in itertools.product([False, True], repeat=3):
            with self.subTest(a_transposed=ta, b_transposed=tb, out_transposed=tc):
                def arrays(base):
                    a = FakeCudaArray((m, k), base, (4, 4 * m) if ta else None)
                    b = FakeCudaArray((k, n), base + 4096, (4, 4 * k) if tb else None)
                    out = FakeCudaArray((m, n), base + 8192, (4, 4 * m) if tc else None)
                    return a, b, out
                for base in (1 << 20, 1 << 24):
                    a, b, out = arrays(base)
                    tgemm_matmul.matmul(a, b, out)
                    expected = plan_gemm(*(describe_cuda_array(x.__cuda_array_interface__, n_)
                                           for x, n_ in ((a, "a"), (b, "b"), (out, "out"))))
                    self.assertEqual(self.calls[-1], expected)
        # One plan per layout combination, each reused on the second call.
        self.assertEqual(len(tgemm_matmul._plans), 8)


class CachedCallArgumentsTest(unittest.TestCase):
    """A cached plan's call (the compiled fast call, or raw_gemm with its arguments converted
    once) passes tgemmGemmEx exactly the values the declared call of a fresh plan passes."""

    def cached_and_declared(self, fast):
        calls = {}

        def recorder(name):
            return lambda *args: calls.setdefault(name, args) and 0

        class FakeLibrary:
            tgemmGemmEx = staticmethod(recorder("declared"))

        patched = ("library", "raw_gemm", "fast_gemm", "handle")
        saved = [getattr(tgemm_matmul, name) for name in patched]
        tgemm_matmul.library = lambda: FakeLibrary
        tgemm_matmul.raw_gemm = lambda: recorder("cached")
        tgemm_matmul.fast_gemm = lambda: recorder("cached") if fast else None
        tgemm_matmul.handle = lambda db=None: 0x1234
        try:
            memory = Memory()
            memory.matrix(1, 1, False, 0)  # no operand at address 0 (c_void_p(0) holds None)
            plan = plan_gemm(memory.matrix(3, 5, True, 2, "bf16"),
                             memory.matrix(5, 4, False, 3, "bf16"),
                             memory.matrix(3, 4, False, 0, "f32"))
            tgemm_matmul.run_plan(plan, 0.5, 2.0, 77)
            tgemm_matmul._run_cached(plan, tgemm_matmul._converted_args(plan), 0.5, 2.0, 77,
                                     None, plan.a_ptr, plan.b_ptr, plan.c_ptr)
        finally:
            for name, value in zip(patched, saved):
                setattr(tgemm_matmul, name, value)

        def plain(value):  # ctypes objects as the numbers they hold
            value = getattr(value, "_obj", value)
            return getattr(value, "value", value)
        declared, cached = ([plain(v) for v in calls[k]] for k in ("declared", "cached"))
        self.assertEqual(len(cached), 19)
        self.assertEqual(cached, declared)
        self.assertEqual(cached[:6], [0x1234, 1, 0, 3, 4, 5])  # handle, op_a = T, op_b = N, m, n, k
        self.assertEqual((cached[6], cached[13], cached[18]), (0.5, 2.0, 77))

    def test_the_fast_call_passes_what_the_declared_call_passes(self):
        self.cached_and_declared(fast=True)

    def test_the_ctypes_call_passes_what_the_declared_call_passes(self):
        self.cached_and_declared(fast=False)


if __name__ == "__main__":
    unittest.main()
