#!/usr/bin/env python3
"""The best kernel per (problem, device) of two tuning databases, side by side: how many agree
on the config, and for the others the time ratio (within noise when the same configs were
measured). Usage: compare_bests.py A.db B.db"""
import math
import sqlite3
import sys


def bests(path):
    con = sqlite3.connect(path)
    rows = con.execute("select device, problem_key, kernel, us from best_kernels")
    return {(device, key): (kernel, us) for device, key, kernel, us in rows}


def main():
    a, b = bests(sys.argv[1]), bests(sys.argv[2])
    same = sum(1 for k in a if k in b and a[k][0] == b[k][0])
    print(f"{len(a)} bests in {sys.argv[1]}, {len(b)} in {sys.argv[2]}; "
          f"{len(set(a) & set(b))} problems in both, {same} with the same config")
    both = sorted(set(a) & set(b))
    if both:
        mean = math.exp(sum(math.log(a[k][1] / b[k][1]) for k in both) / len(both))
        print(f"geometric mean of the best times, {sys.argv[1]} over {sys.argv[2]}: {mean:.3f}")
    for k in sorted(set(a) | set(b)):
        if k not in a or k not in b:
            print(f"  only in one: {k[1]}")
        elif a[k][0] != b[k][0]:
            print(f"  {k[1]}: {a[k][0]} {a[k][1]} us vs {b[k][0]} {b[k][1]} us "
                  f"(ratio {a[k][1] / b[k][1]:.3f})")
    return 0 if set(a) == set(b) else 1


if __name__ == "__main__":
    sys.exit(main())
