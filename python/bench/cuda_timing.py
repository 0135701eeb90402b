"""The GPU time of a call, as tgemm-bench measures it: after a warm-up, every repeat enqueued
without waiting (so the host's cost of one call hides behind the GPU work of the one before,
as in a running program), CUDA events around each, `before_each` (an L2 flush) outside them;
the median of the repeats."""

import statistics

import torch


def median_ms(call, repeats=30, warmup=3, before_each=None):
    for _ in range(warmup):
        call()
    torch.cuda.synchronize()
    events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
              for _ in range(repeats)]
    for start, end in events:
        if before_each is not None:
            before_each()
        start.record()
        call()
        end.record()
    torch.cuda.synchronize()
    return statistics.median(start.elapsed_time(end) for start, end in events)


class L2Flush:
    """Reads a buffer twice the L2's size, as tgemm-bench's flush does (a read leaves the L2
    holding clean lines of the buffer, none of the operands'). `needed(bytes)`: whether a
    problem touching that many bytes is flushed there (at most four L2s)."""

    def __init__(self):
        self.l2_bytes = torch.cuda.get_device_properties(torch.cuda.current_device()).L2_cache_size
        self.buffer = torch.ones(max(self.l2_bytes, 1 << 20) * 2 // 4, device="cuda")

    def needed(self, touched_bytes):
        return touched_bytes <= 4 * self.l2_bytes

    def __call__(self):
        self.buffer.sum()
