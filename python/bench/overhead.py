"""Host cost of one tgemm call from Python, against the same call from C, and Python-side
GPU times against tgemm-bench's on a shape set.

    python python/bench/overhead.py --db tgemm.db                      # per-call overhead
    python python/bench/overhead.py --db tgemm.db --shapes configs/shapes/llm.yaml

Per-call: tgemm-dispatch-bench's `c_api_gemm` (a cached f32 64x64x64 NN tgemmGemmEx call
from C on a created stream, the direct C call) and `c_api_gemm_default_stream` (the same on the
legacy default stream; its `gemm`, the C++ dispatcher without the C API, for scale; all Google
Benchmark's wall time, as the Python rows are) against, from Python on the same problem and
database, each on the same kind of stream as the C call it is compared with,
  matmul        tgemm.matmul(a, b, out): the whole Python path,
  run_plan      a prepared plan's call alone (no tensor inspection): tgemmGemmEx through the
                _fastcall module, or ctypes where the package was built without it,
  torch.matmul  torch.matmul(a, b, out=out), for scale.
Host time per call: batches of calls timed on the host clock, the GPU drained between
batches, so the launch queue never fills and blocks. Target: matmul at most 3 us above the C
call.

With --shapes: tgemm-bench times each shape (CSV), then the same shapes through
tgemm.matmul are timed as tgemm-bench times them (cuda_timing.py: the same operand values'
range, launches enqueued with events around each, the same L2 flush); the ratio should be
within 5 %.
Needs torch, a GPU, and TGEMM_TOOLS_DIR (or the tools on PATH).
"""

import argparse
import csv
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import torch
from cuda_timing import L2Flush, median_ms

import tgemm
from tgemm import _arrays
from tgemm._matmul import run_plan
from tgemm._tools import tool_path

TORCH_TYPES = {"f32": torch.float32, "tf32": torch.float32, "f32x3": torch.float32,
               "f16": torch.float16, "bf16": torch.bfloat16}


def host_us_per_call(call, batch=200, batches=50):
    for _ in range(batch):  # warm: resolve, load, compile once
        call()
    torch.cuda.synchronize()
    samples = []
    for _ in range(batches):
        start = time.perf_counter()
        for _ in range(batch):
            call()
        samples.append((time.perf_counter() - start) / batch * 1e6)
        torch.cuda.synchronize()
    return statistics.median(samples)


def native_us(db):
    """Wall time per call of dispatch-bench's C calls on a created stream (`c_api_gemm`) and on
    the legacy default stream (`c_api_gemm_default_stream`), and its C++ (`gemm`) call."""
    names = ("c_api_gemm", "c_api_gemm_default_stream", "gemm")
    output = subprocess.run(
        [tool_path("tgemm-dispatch-bench"), "--db", db,
         f"--benchmark_filter=^({'|'.join(names)})$", "--benchmark_format=json"],
        check=True, stdout=subprocess.PIPE, text=True).stdout
    times = {}
    for run in json.loads(output)["benchmarks"]:
        unit = {"ns": 1e-3, "us": 1.0, "ms": 1e3}[run.get("time_unit", "ns")]
        times[run["name"]] = run["real_time"] * unit
    return [times[name] for name in names]


def per_call(db):
    """Each Python row against the C call on the same kind of stream: torch's current stream
    is the legacy default one unless a program picks another, and a launch there costs the
    runtime more than on a created stream."""
    a = torch.randn(64, 64, device="cuda")
    b = torch.randn(64, 64, device="cuda")
    out = torch.empty(64, 64, device="cuda")
    plan = tgemm.plan_gemm(_arrays.describe(a, "a"), _arrays.describe(b, "b"),
                           _arrays.describe(out, "out"))
    stream = torch.cuda.current_stream().cuda_stream
    c_created, c_default, cpp_call = native_us(db)
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        matmul_side = host_us_per_call(lambda: tgemm.matmul(a, b, out))
        torch_side = host_us_per_call(lambda: torch.matmul(a, b, out=out))
    rows = [
        ("C, created stream (dispatch-bench c_api_gemm)", c_created, c_created),
        ("C, default stream (c_api_gemm_default_stream)", c_default, c_default),
        ("C++ (Dispatcher::gemm), created stream", cpp_call, c_created),
        ("tgemm.matmul, default stream", host_us_per_call(lambda: tgemm.matmul(a, b, out)),
         c_default),
        ("tgemm.matmul, a torch.cuda.Stream", matmul_side, c_created),
        ("run_plan (the call alone), default stream",
         host_us_per_call(lambda: run_plan(plan, 1.0, 0.0, stream)), c_default),
        ("torch.matmul, default stream", host_us_per_call(lambda: torch.matmul(a, b, out=out)),
         c_default),
        ("torch.matmul, a torch.cuda.Stream", torch_side, c_created),
    ]
    print(f"{'f32 64x64x64 NN, host us per call':46s} {'us':>8s} {'vs C on its kind of stream':>27s}")
    for name, us, c_call in rows:
        print(f"{name:46s} {us:8.2f} {us - c_call:+27.2f}")
    pieces(a, b, out, stream)


def pieces(a, b, out, stream):
    """Host cost of each step of tgemm.matmul's cached path, apart: where its time goes (the
    first rows: each torch read plan_key makes of an operand, as a lambda's call). The last row
    makes the library call with a null handle, so it measures the binding alone."""
    fast = tgemm._library.fast_gemm()
    key = _arrays.plan_key(a, b, out, None)[0]
    steps = {
        "an empty lambda (every row's floor)": lambda: None,
        "a.shape": lambda: a.shape,  # the reads plan_key makes of each operand
        "a.stride()": lambda: a.stride(),
        "a.dtype": lambda: a.dtype,
        "a.get_device()": lambda: a.get_device(),
        "a.data_ptr()": lambda: a.data_ptr(),
        "plan_key of a, b and out": lambda: _arrays.plan_key(a, b, out, None),
        "the plan cache's lookup": lambda: tgemm._matmul._plans.get(key),
        "launch_target (stream, device)": lambda: _arrays.launch_target(a),
        "handle(None)": lambda: tgemm._library.handle(None),
    }
    if fast is not None:
        args = (0, 0, 0, 64, 64, 64, 1.0, a.data_ptr(), 0, 64, b.data_ptr(), 0, 64, 0.0,
                out.data_ptr(), 0, 64, 0, stream)
        steps["_fastcall.gemm, null handle (binding only)"] = lambda: fast(*args)
    print(f"{'a step of the cached path alone':44s} {'us':>8s}")
    for name, step in steps.items():
        print(f"{name:44s} {host_us_per_call(step, batch=2000, batches=20):8.3f}")


def operands(row):
    """A, B and out of a tgemm-bench CSV row, A and B uniform in [-1, 1) as tgemm-bench's."""
    m, n, k = int(row["m"]), int(row["n"]), int(row["k"])
    dtype = row["dtype"].split("_out_")[0]
    t = TORCH_TYPES[dtype]

    def uniform(rows, cols):
        return (2 * torch.rand(rows, cols, device="cuda") - 1).to(t)

    a = uniform(m, k) if row["layout"][0] == "N" else uniform(k, m).t()
    b = uniform(k, n) if row["layout"][1] == "N" else uniform(n, k).t()
    out_type = torch.float32 if "_out_f32" in row["dtype"] else t
    out = torch.empty(m, n, device="cuda", dtype=out_type)
    compute = dtype if dtype in ("tf32", "f32x3") else None
    return a, b, out, compute


def shape_set(db, shapes):
    with tempfile.TemporaryDirectory() as folder:
        table = os.path.join(folder, "bench.csv")
        subprocess.run([tool_path("tgemm-bench"), "--db", db, "--shapes", shapes, "--csv",
                        table], check=True)
        with open(table) as rows:
            rows = list(csv.DictReader(rows))
    flush = L2Flush()
    print(f"{'shape':36s} {'tgemm-bench us':>15s} {'python us':>10s} {'ratio':>7s}")
    ratios = []
    for row in rows:
        a, b, out, compute = operands(row)
        touched = sum(x.numel() * x.element_size() for x in (a, b, out))
        us = 1e3 * median_ms(lambda: tgemm.matmul(a, b, out, compute=compute), repeats=50,
                             warmup=5, before_each=flush if flush.needed(touched) else None)
        ratio = us / float(row["tgemm_us"])
        ratios.append(ratio)
        label = f"{row['name']} {row['dtype']} {row['layout']}"
        print(f"{label:36s} {float(row['tgemm_us']):15.2f} {us:10.2f} {ratio:7.3f}")
    geomean = statistics.geometric_mean(ratios)
    print(f"geometric mean python / tgemm-bench: {geomean:.3f} (target within 1.05)")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--db", default=os.environ.get("TGEMM_DB", "tgemm.db"))
    parser.add_argument("--shapes", help="a shape file to time against tgemm-bench")
    args = parser.parse_args()
    if not torch.cuda.is_available():
        sys.exit("overhead.py needs a CUDA device")
    tgemm.set_database(args.db)
    per_call(args.db)
    if args.shapes:
        shape_set(args.db, args.shapes)


if __name__ == "__main__":
    main()
