"""The GPU time of a call, as both bench scripts measure it: CUDA events around each call
after a warm-up, the median of the repeats."""

import statistics

import torch


def median_ms(call, repeats=30, warmup=3):
    for _ in range(warmup):
        call()
    torch.cuda.synchronize()
    times = []
    for _ in range(repeats):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        call()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)
