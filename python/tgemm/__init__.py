"""tgemm: autotuned CUDA GEMM for torch tensors and CuPy arrays, over libtgemm's C API.

    import tgemm
    c = tgemm.matmul(a, b)                       # a, b: CUDA matrices (torch or CuPy)

Record what a program runs, tune it, serve it:

    with tgemm.record("shapes.yaml"):
        model(x)                                 # tgemm-backed layers (tgemm.replace_linear)
    tgemm.tune("shapes.yaml", db="tgemm.db")     # runs tgemm-tune
"""

from ._database import Database
from ._layout import GemmPlan, MatrixLayout, TensorDesc, matrix_layout, plan_gemm
from ._library import LibraryNotFound, TgemmError, set_database
from ._matmul import matmul
from ._record import record, recording
from ._tools import tune

__all__ = ["Database", "GemmPlan", "LibraryNotFound", "MatrixLayout", "TensorDesc",
           "TgemmError", "matmul", "matrix_layout", "plan_gemm", "record", "recording",
           "set_database", "tune"]

try:  # the torch pieces exist only where torch imports
    import torch as _torch_module  # noqa: F401
except ImportError:
    pass
else:
    from ._torch import Linear, replace_linear  # registers the tgemm::mm custom op
    __all__ += ["Linear", "replace_linear"]
