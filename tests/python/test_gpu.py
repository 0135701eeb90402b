"""tgemm from torch (and CuPy) on a GPU: equal to torch.matmul within each type's bound on
f32, tf32, f16 and bf16 over every layout (transposed views), the custom op under
torch.compile and CUDA graph capture, nn.Linear swapping, record mode and the errors.
Skipped without torch or a CUDA device (the CPU suite runs it as skips)."""

import copy
import itertools
import math
import os
import tempfile
import unittest

try:
    import torch
except ImportError:
    torch = None

import tgemm

HAVE_GPU = torch is not None and torch.cuda.is_available()

# Norm-wise relative error bounds against an FP64 product of the same (rounded) inputs:
# f32 is FFMA-accurate (~sqrt(k) 2^-24), tf32 rounds inputs to 10 mantissa bits, f16/bf16
# outputs round to 11 / 8 bits.
BOUNDS = {"f32": lambda k: 8 * math.sqrt(k) * 2**-24, "tf32": lambda k: 2**-9,
          "f16": lambda k: 2**-9, "bf16": lambda k: 2**-6}
SHAPES = [(256, 128, 512), (257, 130, 301), (1, 4096, 1024), (33, 1, 17)]


def relative_error(got, reference):
    return ((got.double() - reference).norm() / reference.norm()).item()


def operand(rows, cols, dtype, transposed):
    """A rows x cols CUDA matrix, stored row-major or as a transposed view."""
    if transposed:
        return torch.randn(cols, rows, device="cuda", dtype=torch.float32).to(dtype).t()
    return torch.randn(rows, cols, device="cuda", dtype=torch.float32).to(dtype)


@unittest.skipUnless(HAVE_GPU, "needs torch and a CUDA device")
class MatmulGpuTest(unittest.TestCase):
    def check_type(self, name, dtype, compute=None):
        for (m, n, k), ta, tb in itertools.product(SHAPES, [False, True], [False, True]):
            with self.subTest(type=name, m=m, n=n, k=k, a_transposed=ta, b_transposed=tb):
                a, b = operand(m, k, dtype, ta), operand(k, n, dtype, tb)
                reference = a.double() @ b.double()
                got = tgemm.matmul(a, b, compute=compute)
                self.assertEqual(got.dtype, dtype)
                self.assertEqual(tuple(got.shape), (m, n))
                bound = BOUNDS[name](k)
                self.assertLess(relative_error(got, reference), bound)
                # torch.matmul meets the same bound on the same inputs.
                self.assertLess(relative_error(torch.matmul(a, b), reference), 4 * bound)

    def test_f32_equals_torch(self):
        self.check_type("f32", torch.float32)

    def test_tf32_equals_torch(self):
        self.check_type("tf32", torch.float32, compute="tf32")

    def test_f16_equals_torch(self):
        self.check_type("f16", torch.float16)

    def test_bf16_equals_torch(self):
        self.check_type("bf16", torch.bfloat16)

    def test_column_major_out_alpha_beta_and_c(self):
        a, b = operand(65, 40, torch.float32, False), operand(40, 33, torch.float32, True)
        c = torch.randn(65, 33, device="cuda")
        out = torch.empty(33, 65, device="cuda").t()  # column-major
        result = tgemm.matmul(a, b, out, alpha=2.0, beta=-0.5, c=c)
        self.assertIs(result, out)
        reference = 2.0 * (a.double() @ b.double()) - 0.5 * c.double()
        self.assertLess(relative_error(out, reference), 1e-5)

    def test_f16_inputs_with_an_f32_out(self):
        a, b = operand(64, 96, torch.float16, False), operand(96, 80, torch.float16, True)
        out = torch.empty(64, 80, device="cuda", dtype=torch.float32)
        tgemm.matmul(a, b, out)
        self.assertLess(relative_error(out, a.double() @ b.double()), 1e-5)

    def test_strided_operands_are_copied_or_refused(self):
        a = torch.randn(64, 128, device="cuda")[:, ::2]  # column stride 2: no layout
        b = torch.randn(64, 32, device="cuda")
        self.assertLess(relative_error(tgemm.matmul(a, b), a.double() @ b.double()), 1e-5)
        with self.assertRaisesRegex(tgemm.TgemmError, "strides"):
            tgemm.matmul(a, b, copy=False)

    def test_runs_on_the_current_stream(self):
        a, b = operand(512, 512, torch.float32, False), operand(512, 512, torch.float32, False)
        stream = torch.cuda.Stream()
        with torch.cuda.stream(stream):
            got = tgemm.matmul(a, b)
        stream.synchronize()
        self.assertLess(relative_error(got, a.double() @ b.double()), 1e-5)

    def test_errors_are_python_exceptions(self):
        cuda = torch.randn(4, 4, device="cuda")
        cases = [
            ((torch.randn(4, 4), cuda), "a is on cpu"),
            ((cuda.double(), cuda.double()), "dtype torch.float64"),
            ((cuda, torch.randn(5, 4, device="cuda")), "a's columns must equal b's rows"),
            ((cuda.half(), cuda), "a is f16 and b is f32"),
        ]
        for args, pattern in cases:
            with self.subTest(pattern=pattern):
                with self.assertRaisesRegex(tgemm.TgemmError, pattern):
                    tgemm.matmul(*args)


@unittest.skipUnless(HAVE_GPU, "needs torch and a CUDA device")
class TorchIntegrationGpuTest(unittest.TestCase):
    def test_custom_op_under_torch_compile(self):
        a, b = operand(128, 256, torch.float16, False), operand(256, 64, torch.float16, True)

        def f(x, y):
            return torch.ops.tgemm.mm(x, y).relu()

        compiled = torch.compile(f, fullgraph=True)
        self.assertLess(relative_error(compiled(a, b), (a.double() @ b.double()).relu()), 2**-9)

    def test_custom_op_in_a_cuda_graph(self):
        a, b = operand(128, 256, torch.bfloat16, False), operand(256, 64, torch.bfloat16, True)
        torch.ops.tgemm.mm(a, b)  # resolves and loads the kernel outside the capture
        torch.cuda.synchronize()
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            captured = torch.ops.tgemm.mm(a, b)
        a.copy_(torch.randn_like(a))
        graph.replay()
        torch.cuda.synchronize()
        self.assertLess(relative_error(captured, a.double() @ b.double()), 2**-6)

    def test_custom_op_gradients(self):
        a = torch.randn(32, 48, device="cuda", requires_grad=True)
        b = torch.randn(48, 16, device="cuda", requires_grad=True)
        torch.ops.tgemm.mm(a, b).sum().backward()
        ones = torch.ones(32, 16, device="cuda")
        self.assertLess(relative_error(a.grad, ones.double() @ b.detach().double().t()), 1e-5)
        self.assertLess(relative_error(b.grad, a.detach().double().t() @ ones.double()), 1e-5)

    def test_replace_linear_keeps_the_models_output(self):
        model = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.GELU(),
                                    torch.nn.Linear(128, 32, bias=False)).cuda()
        x = torch.randn(3, 5, 64, device="cuda")
        with torch.no_grad():
            expected = model(x)
            self.assertEqual(tgemm.replace_linear(model), 2)
            self.assertIsInstance(model[0], tgemm.Linear)
            got = model(x)
        self.assertLess(relative_error(got, expected.double()), 1e-5)

    def test_replaced_linear_trains_through_the_op_and_compiles_whole(self):
        torch.manual_seed(0)
        reference = torch.nn.Sequential(torch.nn.Linear(64, 32)).cuda()
        model = copy.deepcopy(reference)
        self.assertEqual(tgemm.replace_linear(model), 1)
        x = torch.randn(8, 64, device="cuda")
        reference(x).square().sum().backward()
        model(x).square().sum().backward()  # autograd records: the op, with its backward
        self.assertLess(relative_error(model[0].weight.grad, reference[0].weight.grad.double()),
                        1e-5)
        compiled = torch.compile(model, fullgraph=True)  # a direct ctypes call would break it
        with torch.no_grad():
            self.assertLess(relative_error(compiled(x), reference(x).double()), 1e-5)
            self.assertLess(relative_error(model(x), reference(x).double()), 1e-5)

    def test_record_lists_the_untuned_calls(self):
        with tempfile.TemporaryDirectory() as folder:
            path = os.path.join(folder, "recorded.yaml")
            a, b = operand(37, 53, torch.float32, False), operand(53, 29, torch.float32, True)
            with tgemm.record(path):
                for _ in range(3):
                    tgemm.matmul(a, b)
            with open(path) as recorded:
                text = recorded.read()
            self.assertIn("{m: 37, n: 29, k: 53, dtype: f32, layout: NT, calls: 3}", text)


@unittest.skipUnless(HAVE_GPU, "needs torch and a CUDA device")
class CupyGpuTest(unittest.TestCase):
    def test_cupy_arrays_and_transposed_views(self):
        try:
            import cupy
        except ImportError:
            self.skipTest("cupy is not installed")
        a = cupy.random.rand(65, 40, dtype=cupy.float32)
        b = cupy.random.rand(33, 40, dtype=cupy.float32).T
        got = tgemm.matmul(a, b)
        reference = a.astype(cupy.float64) @ b.astype(cupy.float64)
        error = float(cupy.linalg.norm(got - reference) / cupy.linalg.norm(reference))
        self.assertLess(error, 1e-5)


if __name__ == "__main__":
    unittest.main()
