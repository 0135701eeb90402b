"""A 7B-class transformer block (random bf16 weights) with its linear layers on tgemm: record
its GEMMs, tune them, then serve them eagerly, under torch.compile and in a CUDA graph,
each timed against the same block on cuBLAS (torch's own nn.Linear).

    TGEMM_TOOLS_DIR=build python python/bench/transformer_block.py --db block.db
    ... --tokens 1 16 128 2048 --budget 60 --skip-tune     (reuse block.db as tuned)

Steps: (1) the cuBLAS block timed in each mode; (2) its nn.Linear layers swapped for
tgemm.Linear (tgemm::mm); (3) under tgemm.record, one forward per token count writes every
GEMM the block runs to <db>.shapes.yaml; (4) tgemm.tune tunes that file into --db;
(5) the tuned database opened afresh and the tgemm block timed in each mode. Prints one row
per (tokens, mode): cuBLAS ms, tgemm ms, cuBLAS / tgemm (above 1: tgemm is faster), and
the largest relative difference between the two blocks' outputs.
"""

import argparse
import copy
import os
import sys

import torch
import torch.nn.functional as F
from cuda_timing import median_ms

import tgemm


class Block(torch.nn.Module):
    """Pre-norm attention + SwiGLU MLP, Llama-7B widths by default."""

    def __init__(self, hidden=4096, heads=32, ffn=11008):
        super().__init__()
        self.heads = heads
        self.norm1 = torch.nn.RMSNorm(hidden)
        self.norm2 = torch.nn.RMSNorm(hidden)
        self.q, self.k, self.v, self.o = (torch.nn.Linear(hidden, hidden, bias=False)
                                          for _ in range(4))
        self.gate = torch.nn.Linear(hidden, ffn, bias=False)
        self.up = torch.nn.Linear(hidden, ffn, bias=False)
        self.down = torch.nn.Linear(ffn, hidden, bias=False)

    def forward(self, x):
        batch, tokens, hidden = x.shape
        h = self.norm1(x)
        split = (batch, tokens, self.heads, hidden // self.heads)
        q, k, v = (p(h).view(split).transpose(1, 2) for p in (self.q, self.k, self.v))
        attention = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.o(attention.transpose(1, 2).reshape(batch, tokens, hidden))
        h = self.norm2(x)
        return x + self.down(F.silu(self.gate(h)) * self.up(h))


def graphed(block, x):
    """The block captured into a CUDA graph on a static input (kernels loaded beforehand)."""
    static_x = x.clone()
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            block(static_x)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        static_y = block(static_x)

    def run():  # holds static_x: its memory, freed, would be reused under the graph's reads
        graph.replay()
        assert static_x.data_ptr()
        return static_y
    return run


def modes(block, x):
    compiled = torch.compile(block, dynamic=False)
    return {"eager": lambda: block(x), "compile": lambda: compiled(x), "graph": graphed(block, x)}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--db", default="block.db", help="the tuning database to tune and use")
    parser.add_argument("--tokens", type=int, nargs="+", default=[1, 16, 128, 512, 2048])
    parser.add_argument("--budget", default="40", help="tgemm-tune --budget per family")
    parser.add_argument("--skip-tune", action="store_true", help="serve --db as it is")
    parser.add_argument("--hidden", type=int, default=4096)
    parser.add_argument("--heads", type=int, default=32)
    parser.add_argument("--ffn", type=int, default=11008)
    args = parser.parse_args()
    if not torch.cuda.is_available():
        sys.exit("transformer_block.py needs a CUDA device")
    torch.manual_seed(0)
    reference = Block(args.hidden, args.heads, args.ffn).cuda().to(torch.bfloat16).eval()
    block = copy.deepcopy(reference)
    print(f"tgemm layers: {tgemm.replace_linear(block)}")
    inputs = {t: torch.randn(1, t, args.hidden, device="cuda", dtype=torch.bfloat16)
              for t in args.tokens}

    shapes = args.db + ".shapes.yaml"
    with torch.no_grad():
        if not args.skip_tune:
            if os.path.exists(shapes):
                os.remove(shapes)
            with tgemm.record(shapes):
                for x in inputs.values():
                    block(x)
                torch.cuda.synchronize()
            print(f"recorded {shapes}:\n{open(shapes).read()}")
            print(tgemm.tune(shapes, db=args.db, args=["--budget", args.budget]))
        tgemm.set_database(args.db)  # a fresh handle reads the tuned rows

        print(f"{'tokens':>6s} {'mode':8s} {'cuBLAS ms':>10s} {'tgemm ms':>9s} "
              f"{'cuBLAS/tgemm':>13s} {'max rel diff':>13s}")
        for tokens, x in inputs.items():
            theirs, ours = modes(reference, x), modes(block, x)
            for mode in theirs:
                a_ms, b_ms = median_ms(theirs[mode]), median_ms(ours[mode])
                expected, got = theirs[mode]().float(), ours[mode]().float()
                diff = ((got - expected).abs().max() / expected.abs().max()).item()
                print(f"{tokens:6d} {mode:8s} {a_ms:10.3f} {b_ms:9.3f} {a_ms / b_ms:13.3f} "
                      f"{diff:13.2e}")


if __name__ == "__main__":
    main()
