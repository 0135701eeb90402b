#!/usr/bin/env bash
# On the GPU machine (the device tool runs this from the repository root): the GPU tests,
# then the stages named on the command line. Logs and databases go under $OUT.
#   scripts/device_run.sh tests tune:square:200 bench:square overhead
# Stages: tests | tune:<shapeset>:<budget> | bench:<shapeset> | overhead | example
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/out}
mkdir -p "$OUT"
B=build-dev
export LD_LIBRARY_PATH="$PWD/$B/devlibs:${LD_LIBRARY_PATH:-}"
# Test binaries were built with this checkout's absolute path compiled in.
if [ ! -e /work/main ] && [ "$PWD" != /work/main ]; then mkdir -p /work && ln -s "$PWD" /work/main; fi
# $OUT is emptied before every call; the database lives on while the machine stays warm.
mkdir -p /tmp/tgemm
DB=${TGEMM_DB:-/tmp/tgemm/tgemm.db}

nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw \
  --format=csv >"$OUT/gpu.txt" 2>&1
cat "$OUT/gpu.txt"
for stage in "$@"; do
  IFS=: read -r what set budget <<<"$stage"
  echo "=== $stage ($(date +%T))"
  case "$what" in
    tests)
      "$B/tests/tgemm_gpu_tests" 2>&1 | tee "$OUT/gpu_tests.log" | grep -E "^\[  (PASSED|FAILED|SKIPPED) |^\[==========\]|Failure|error" ;;
    tune)
      "$B/tuner/tgemm-tune" --shapes "configs/shapes/$set.yaml" --db "$DB" --strategy random \
        --budget "${budget:-100}" --jobs 16 2>&1 | tee "$OUT/tune_$set.log" | grep -v "^\[" ;;
    bench)
      "$B/tuner/tgemm-bench" --db "$DB" --shapes "configs/shapes/$set.yaml" \
        --csv "$OUT/bench_$set.csv" 2>&1 | tee "$OUT/bench_$set.log" ;;
    overhead)
      "$B/tuner/tgemm-dispatch-bench" --db "$DB" 2>&1 | tee "$OUT/overhead.log" ;;
    db)
      "$B/tuner/tgemm-db" --db "$DB" list 2>&1 | tee "$OUT/db_list.log" ;;
    *) echo "unknown stage $stage" ;;
  esac
done
[ -f "$DB" ] && gzip -c "$DB" >"$OUT/tgemm.db.gz"
ls -la "$OUT"
