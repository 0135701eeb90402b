"""torch integration: the tgemm::mm custom op (with a fake implementation, so torch.compile
traces it and CUDA graphs capture it) and nn.Linear layers backed by it. Imported by the
package only when torch imports."""

import torch

from ._matmul import matmul


@torch.library.custom_op("tgemm::mm", mutates_args=())
def mm(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """a @ b through tgemm (a fresh output of a's dtype)."""
    return matmul(a, b)


@mm.register_fake
def _mm_fake(a, b):
    torch._check(a.dim() == 2 and b.dim() == 2, lambda: "tgemm::mm takes two matrices")
    torch._check(a.shape[1] == b.shape[0], lambda: "tgemm::mm: a's columns must equal b's rows")
    return a.new_empty((a.shape[0], b.shape[1]))


def _mm_setup(ctx, inputs, output):
    ctx.save_for_backward(*inputs)


def _mm_backward(ctx, grad):
    a, b = ctx.saved_tensors
    grad_a = mm(grad, b.t()) if ctx.needs_input_grad[0] else None
    grad_b = mm(a.t(), grad) if ctx.needs_input_grad[1] else None
    return grad_a, grad_b


mm.register_autograd(_mm_backward, setup_context=_mm_setup)


def _needs_the_op(*tensors):
    """Whether a call must go through tgemm::mm: while torch.compile traces (the op is what it
    sees) or when autograd records (the op carries the backward). Otherwise, in inference and
    in CUDA graph capture, tgemm.matmul is called directly, without the custom op's dispatch,
    which costs more host time than the GEMM call itself."""
    if torch.compiler.is_compiling():
        return True
    return torch.is_grad_enabled() and any(t.requires_grad for t in tensors)


class Linear(torch.nn.Module):
    """nn.Linear's forward through tgemm::mm; shares the weight and bias it is made from."""

    def __init__(self, linear: torch.nn.Linear):
        super().__init__()
        self.in_features = linear.in_features
        self.out_features = linear.out_features
        self.weight = linear.weight
        self.bias = linear.bias

    def forward(self, x):
        rows = x.reshape(-1, self.in_features)
        # weight is out x in, row-major: its transposed view is op T, no copy.
        if _needs_the_op(rows, self.weight):
            y = torch.ops.tgemm.mm(rows, self.weight.t())
        else:
            y = matmul(rows, self.weight.t())
        if self.bias is not None:
            y = y + self.bias
        return y.reshape(*x.shape[:-1], self.out_features)

    def extra_repr(self):
        return f"in_features={self.in_features}, out_features={self.out_features}, " \
               f"bias={self.bias is not None}"


def replace_linear(model: torch.nn.Module, predicate=None) -> int:
    """Swaps every nn.Linear of `model` (those for which predicate(name, layer) is true) for a
    tgemm Linear sharing its parameters; returns how many were swapped."""
    swapped = 0
    for parent_name, parent in list(model.named_modules()):
        for name, child in list(parent.named_children()):
            full = f"{parent_name}.{name}" if parent_name else name
            if type(child) is torch.nn.Linear and (predicate is None or predicate(full, child)):
                setattr(parent, name, Linear(child))
                swapped += 1
    return swapped
