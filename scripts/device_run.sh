#!/usr/bin/env bash
# On the GPU machine (the device tool runs this from the repository root): the stages named
# on the command line, in order. Logs go under $OUT; databases live in /tmp/tgemm, which
# survives between calls while the machine stays warm ($OUT is emptied before every call).
#   scripts/device_run.sh tests tune:square:200 bench:square overhead
# Stages:
#   tests[:<filter>]                   the GPU test suite (or the tests a gtest filter names; its
#                                      ':'-joined patterns are the rest of the stage)
#   tune:<set>:<budget>[:<db>[:<strategy>[:<space>,...]]]
#                                      tgemm-tune on configs/shapes/<set>.yaml (db: tgemm.db,
#                                      strategy: random, spaces: every shipped one)
#   bench:<set>[:<db>[:<compare-db>]]  tgemm-bench, optionally against a second database
#   untuned:<set>[:<db>]              tgemm-bench --untuned: each shape also left out of <db>
#   overhead[:<db>]                    host cost of a cached libtgemm call
#   python                             the Python package's tests (tests/python, the GPU ones
#                                      included) with this machine's Python and torch
#   pyoverhead[:<db>[:<set>]]          python/bench/overhead.py in the environment the python
#                                      stage installed: the host cost of tgemm.matmul against a
#                                      C++ call, and with <set> Python-side times against tgemm-bench's
#   block[:<db>[:<budget>[:<tokens>]]] python/bench/transformer_block.py (after python): record,
#                                      tune (<budget>, default 120s; `skip`: serve <db> as it is)
#                                      and serve a 7B-class block at the ','-joined token counts
#   db[:<db>]                          tgemm-db list
#   profile[:<db>[:MxNxK[/dtype],...]] tgemm-db profile --all, or of the shapes given (Nsight
#                                      Compute on the best kernel and cuBLAS's), then profiles
#   sass:<template>:<P=V,P=V,...>[:<arch>]  SASS instruction mix of one config of a family (NN,
#                                      f32 unless TGEMM_TYPE_A=.. etc. are among the P=V; arch
#                                      sm_90, or sm_90a for a wgmma family); appended to sass.txt
#   unpack:<file.db.gz>:<db>            a kept database (e.g. benchmarks/h200/fp32.db.gz) into /tmp/tgemm
#   killtune:<set>:<seconds>:<db>       tgemm-tune SIGKILLed after <seconds>, then rerun: the
#                                      rerun must measure only what the kill left unmeasured
#   shard:<set>:<budget>               --shard 0/2 and 1/2 one after the other, merged, against
#                                      one unsharded run (random strategy, same seed): the bests
#   devices:<set>:<budget>:<list>[:<db>]  tgemm-tune --devices <list> into <db> (devices.db), fresh;
#                                      then its integrity check (issue 13: once with all, once with 0)
#   strategies:<set>:<budget>          on the reduced spaces of tests/data/spaces/comparison/: the
#                                      whole space measured (exhaustive.db), then the model
#                                      strategy at <budget> (e.g. 10%) into model.db; their bests
#   strategytime:<set>[:<budget>[:comparison]]
#                                      tgemm-tune's random strategy at its default budget (200 per
#                                      variant, or <budget>) into random.db, then the model
#                                      strategy in a third of its wall time into model_t.db; their
#                                      bests (200 over deepbench on the shipped spaces: ~13000
#                                      trials, an estimated 30 min; `comparison`: on the reduced
#                                      spaces of tests/data/spaces/comparison/ instead)
#   randomtime:<set>[:<budget>]        strategytime in two calls (deepbench on the shipped spaces
#   modeltime:<set>[:<seconds>]       is ~8 + 3 min, past one call's 10): randomtime runs the
#                                      random half into random.db and keeps its wall time in
#                                      /tmp/tgemm; modeltime, in a later call while the machine
#                                      is warm, runs the model in a third of it and compares
#   compilescale:<set>:<budget>        NVRTC throughput, compile-only for sm_80 into fresh files:
#                                      one job, 16 jobs in one process, 4 processes of 4 jobs
#   sanitize:<tool>:<filter>           compute-sanitizer --tool <tool> (memcheck, racecheck,
#                                      synccheck, initcheck) on the GPU tests the gtest filter names
#                                      (the rest of the stage, as with tests): the tests' results,
#                                      the first findings and the error summary
#   ncu:<set>:<db>:<name>[:<regex>]    Nsight Compute's full set on one launch (past 20) of the
#                                      kernels <regex> names (default: ours, ^gemm_; e.g.
#                                      'nvjet|xmma|cutlass' for the vendor's) while tgemm-bench
#                                      runs <set> on <db> (a new name: the defaults): the report
#                                      <name>.ncu-rep, its details and per-instruction samples
#                                      (<name>_details.txt, <name>_sass.csv)
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
OUT=${OUT:-$PWD/out}
mkdir -p "$OUT" /tmp/tgemm
B=${TGEMM_BUILD:-build-dev}  # another build folder (carried) through TGEMM_BUILD
export LD_LIBRARY_PATH="$PWD/$B/devlibs:${LD_LIBRARY_PATH:-}"
# Where a driver is, NVRTC (CUDA 12.9+) keeps what it compiled in the driver's compute cache
# and a later process compiling the same program gets it back in a few ms (seen in session 14:
# a second tune compiled 2x faster at 0.03 s of CPU per compile). Off for every stage, so that
# each measures cold compiles and no run (random before model, a shard before the whole) is
# helped by one before it.
export CUDA_CACHE_DISABLE=1
# Test binaries were built with this checkout's absolute path compiled in.
if [ ! -e /work/main ] && [ "$PWD" != /work/main ]; then mkdir -p /work && ln -s "$PWD" /work/main; fi
db() { echo "/tmp/tgemm/${1:-tgemm.db}"; }
# <set> is configs/shapes/<set>.yaml, or a path to any shape file.
shapes() { if [[ $1 == */* ]]; then echo "$1"; else echo "configs/shapes/$1.yaml"; fi; }
# One value of a query (the GPU machine may lack the sqlite3 shell; python3 has the module).
q() {
  sqlite3 "$1" "$2" 2>/dev/null ||
    python3 -c 'import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute(sys.argv[2]).fetchone()[0])' "$1" "$2"
}

nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw \
  --format=csv >"$OUT/gpu.txt" 2>&1
cat "$OUT/gpu.txt"
for stage in "$@"; do
  IFS=: read -r what a1 a2 a3 a4 a5 <<<"$stage"
  echo "=== $stage ($(date +%T))"
  case "$what" in
    tests)  # the filter is the whole rest of the stage: gtest joins its patterns with ':'
      filter=""; [[ $stage == tests:* ]] && filter=${stage#tests:}
      "$B/tests/tgemm_gpu_tests" ${filter:+"--gtest_filter=$filter"} 2>&1 | tee "$OUT/gpu_tests.log" |
        grep -E "^\[  (PASSED|FAILED|SKIPPED) |^\[==========\]|Failure|error" ;;
    tune)
      spaces=(); for s in ${a5//,/ }; do spaces+=(--space "$s"); done
      "$B/tuner/tgemm-tune" --shapes "$(shapes "$a1")" --db "$(db "$a3")" --strategy "${a4:-random}" \
        --budget "${a2:-100}" --jobs 16 "${spaces[@]}" 2>&1 |
        tee "$OUT/tune_$(basename "$a1" .yaml).log" | grep -v "^\[" ;;
    bench)
      compare=(); [ -n "$a3" ] && compare=(--compare-db "$(db "$a3")")
      "$B/tuner/tgemm-bench" --db "$(db "$a2")" "${compare[@]}" --shapes "$(shapes "$a1")" \
        --csv "$OUT/bench_$(basename "$a1" .yaml)${a2:+_${a2%.db}}.csv" 2>&1 |
        tee "$OUT/bench_$(basename "$a1" .yaml)${a2:+_${a2%.db}}.log" ;;
    untuned)
      "$B/tuner/tgemm-bench" --db "$(db "$a2")" --untuned --shapes "$(shapes "$a1")" \
        --csv "$OUT/untuned_$(basename "$a1" .yaml).csv" 2>&1 |
        tee "$OUT/untuned_$(basename "$a1" .yaml).log" ;;
    overhead)
      "$B/tuner/tgemm-dispatch-bench" --db "$(db "$a1")" 2>&1 | tee "$OUT/overhead.log" ;;
    python)
      TGEMM_PYTHON=python3 sh tests/python/run_python_tests.sh "$PWD/$B" "$PWD" \
        "$PWD/$B/devlibs/libtgemm.so.0" "$PWD/$B/tuner" 2>&1 | tee "$OUT/python.log" | tail -40 ;;
    pyoverhead|block)
      py=("$B/python_test/venv/bin/python")
      if [ "$what" = pyoverhead ]; then
        args=(python/bench/overhead.py --db "$(db "$a1")" ${a2:+--shapes "$(shapes "$a2")"})
      else
        args=(python/bench/transformer_block.py --db "$(db "${a1:-block.db}")")
        if [ "$a2" = skip ]; then args+=(--skip-tune); else args+=(--budget "${a2:-120s}"); fi
        [ -n "$a3" ] && args+=(--tokens ${a3//,/ })
      fi
      TGEMM_TOOLS_DIR=$PWD/$B/tuner "${py[@]}" "${args[@]}" 2>&1 | tee "$OUT/$what.log" ;;
    db)
      "$B/tuner/tgemm-db" --db "$(db "$a1")" list 2>&1 | tee "$OUT/db_list.log" ;;
    profile)
      { which ncu || ls -d /opt/nvidia/nsight-compute/*/ncu; } 2>&1 | head -3
      if [ -z "$a2" ]; then
        "$B/tuner/tgemm-db" --db "$(db "$a1")" profile --all 2>&1 | tee "$OUT/profile.log"
      else  # MxNxK[/dtype],...: only those problems (NN)
        for shape in ${a2//,/ }; do
          IFS=x read -r m n k <<<"${shape%%/*}"; dt=f32; [[ $shape == */* ]] && dt=${shape##*/}
          "$B/tuner/tgemm-db" --db "$(db "$a1")" profile --m "$m" --n "$n" --k "$k" --dtype "$dt" \
            2>&1 | tee -a "$OUT/profile.log"
        done
      fi
      "$B/tuner/tgemm-db" --db "$(db "$a1")" profiles 2>&1 | tee -a "$OUT/profile.log" ;;
    sass)
      defs=$(tr ',' '\n' <<<"$a2" | sed 's/^/-D/' | tr '\n' ' ')
      # shellcheck disable=SC2086
      nvcc -cubin -arch="${a3:-sm_90}" -I kernel_templates -x cu "kernel_templates/$a1.cuh" $defs \
        -o /tmp/tgemm/k.cubin && cuobjdump -sass /tmp/tgemm/k.cubin >/tmp/tgemm/k.sass &&
        { echo "### $a1 $a2 ${a3:-sm_90}"; cat /tmp/tgemm/k.sass; } >>"$OUT/sass.txt" &&
        grep -oE "^ +/\*[0-9a-f]+\*/ +(@!?U?P[0-9T] +)?[A-Z0-9.]+" /tmp/tgemm/k.sass |
        awk '{print $NF}' | sort | uniq -c | sort -rn | head -25 ;;
    unpack)
      gzip -dc "$a1" >"$(db "$a2")" && ls -la "$(db "$a2")" ;;
    killtune)
      tune=("$B/tuner/tgemm-tune" --shapes "$(shapes "$a1")" --db "$(db "$a3")"
            --strategy random --budget 30 --jobs 16)
      "${tune[@]}" >"$OUT/killtune_first.log" 2>&1 &
      pid=$!
      sleep "$a2"
      kill -9 "$pid"
      wait "$pid" 2>/dev/null
      echo "killed after ${a2}s: $(q "$(db "$a3")" 'select count(*) from trials') trials," \
        "$(q "$(db "$a3")" 'select count(*) from binaries') binaries recorded"
      "${tune[@]}" 2>&1 | tee "$OUT/killtune_rerun.log" | grep -E "^configs:|trials:" ;
      echo "after the rerun: $(q "$(db "$a3")" 'select count(*) from trials') trials;" \
        "integrity: $(q "$(db "$a3")" 'pragma integrity_check')" ;;
    shard)
      tune=("$B/tuner/tgemm-tune" --shapes "$(shapes "$a1")" --strategy random --budget "$a2"
            --jobs 16 --quiet)
      rm -f "$(db shard0.db)" "$(db shard1.db)" "$(db merged.db)" "$(db whole.db)"
      for i in 0 1; do
        "${tune[@]}" --db "$(db shard$i.db)" --shard "$i/2" 2>&1 | tail -1 | tee -a "$OUT/shard.log"
      done
      "$B/tuner/tgemm-db" merge "$(db merged.db)" "$(db shard0.db)" "$(db shard1.db)" 2>&1 |
        tee -a "$OUT/shard.log"
      "${tune[@]}" --db "$(db whole.db)" 2>&1 | tail -1 | tee -a "$OUT/shard.log"
      python3 scripts/compare_bests.py "$(db merged.db)" "$(db whole.db)" 2>&1 | tee -a "$OUT/shard.log" ;;
    devices)
      log="$OUT/devices_${a3//,/_}.log" devdb=$(db "${a4:-devices.db}")
      rm -f "$devdb"
      "$B/tuner/tgemm-tune" --shapes "$(shapes "$a1")" --db "$devdb" --devices "$a3" \
        --strategy model --budget "$a2" --jobs 16 >"$log" 2>&1
      rc=$?
      grep -v "^\[" "$log" | tail -3  # the results' last lines, then the per-GPU line
      if [ "$rc" -eq 0 ]; then
        echo "integrity: $(q "$devdb" 'pragma integrity_check')"
      else
        echo "tgemm-tune failed (exit $rc)"
      fi ;;
    strategies)
      spaces=(); for s in tests/data/spaces/comparison/*.yaml; do spaces+=(--space "$s"); done
      rm -f "$(db exhaustive.db)" "$(db model.db)"
      for run in "exhaustive:0" "model:$a2"; do
        "$B/tuner/tgemm-tune" --shapes "$(shapes "$a1")" --db "$(db "${run%%:*}.db")" \
          --strategy "${run%%:*}" --budget "${run#*:}" --jobs 16 --quiet "${spaces[@]}" 2>&1 |
          tail -1 | tee -a "$OUT/strategies.log"
      done
      python3 scripts/compare_bests.py "$(db model.db)" "$(db exhaustive.db)" 2>&1 |
        tee -a "$OUT/strategies.log" ;;
    strategytime|randomtime|modeltime)
      spaces=()
      if [ "$what" = strategytime ] && [ "$a3" = comparison ]; then
        for s in tests/data/spaces/comparison/*.yaml; do spaces+=(--space "$s"); done
      fi
      if [ "$what" != modeltime ]; then
        rm -f "$(db random.db)" "$(db model_t.db)"
        start=$(date +%s)
        "$B/tuner/tgemm-tune" --shapes "$(shapes "$a1")" --db "$(db random.db)" --jobs 16 --quiet \
          --strategy random --budget "${a2:-200}" "${spaces[@]}" 2>&1 | tail -1 |
          tee -a "$OUT/strategytime.log"
        echo $(($(date +%s) - start)) >/tmp/tgemm/random_seconds
      fi
      if [ "$what" != randomtime ]; then
        # modeltime:<set>:<seconds> when the machine went cold between the calls (random.db
        # then unpacked from the first call's files)
        if [ "$what" = modeltime ] && [ -n "$a2" ]; then took=$a2; else took=$(cat /tmp/tgemm/random_seconds); fi
        third=$(((took + 2) / 3))
        echo "random took ${took} s; the model gets ${third} s" | tee -a "$OUT/strategytime.log"
        rm -f "$(db model_t.db)"
        "$B/tuner/tgemm-tune" --shapes "$(shapes "$a1")" --db "$(db model_t.db)" --strategy model \
          --budget "${third}s" --jobs 16 --quiet "${spaces[@]}" 2>&1 | tail -1 |
          tee -a "$OUT/strategytime.log"
        python3 scripts/compare_bests.py "$(db model_t.db)" "$(db random.db)" 2>&1 |
          tee -a "$OUT/strategytime.log"
      fi ;;
    compilescale)
      cc=("$B/tuner/tgemm-tune" --shapes "$(shapes "$a1")" --arch sm_80 --compile-only --quiet)
      rm -f /tmp/tgemm/cs*.db
      "${cc[@]}" --budget 4 --jobs 1 --db /tmp/tgemm/cs1.db 2>&1 | tail -1 | tee -a "$OUT/compilescale.log"
      "${cc[@]}" --budget "$a2" --jobs 16 --db /tmp/tgemm/cs16.db 2>&1 | tail -1 |
        tee -a "$OUT/compilescale.log"
      start=$(date +%s%N)
      for i in 1 2 3 4; do
        "${cc[@]}" --budget "$a2" --seed $((i + 10)) --jobs 4 --db /tmp/tgemm/cs4_$i.db 2>&1 | tail -1 &
      done | tee -a "$OUT/compilescale.log"
      wait
      echo "4 processes x 4 jobs: $((($(date +%s%N) - start) / 1000000)) ms wall" |
        tee -a "$OUT/compilescale.log"
      rm -f /tmp/tgemm/cs*.db ;;
    sanitize)
      filter=${stage#sanitize:"$a1":}
      compute-sanitizer --tool "$a1" "$B/tests/tgemm_gpu_tests" --gtest_filter="$filter" 2>&1 |
        tee "$OUT/sanitize_$a1.log" |
        grep -E "^\[  (PASSED|FAILED) |ERROR SUMMARY|^========= [A-Z][a-z]+ .*(read|write|race|hazard|barrier)" |
        head -40 ;;
    ncu)
      ncu=$(which ncu 2>/dev/null || ls /opt/nvidia/nsight-compute/*/ncu | head -1)
      "$ncu" --set full --clock-control none -k "regex:${a4:-^gemm_}" --launch-skip 20 \
        --launch-count 1 -f -o "$OUT/$a3" "$B/tuner/tgemm-bench" \
        --db "$(db "$a2")" --shapes "$(shapes "$a1")" --max-ms 200 >"$OUT/ncu_$a3.log" 2>&1
      "$ncu" -i "$OUT/$a3.ncu-rep" --page details --print-details all >"$OUT/${a3}_details.txt" 2>&1
      "$ncu" -i "$OUT/$a3.ncu-rep" --page source --print-source sass --csv \
        >"$OUT/${a3}_sass.csv" 2>&1
      grep -E "^  [a-z_]+.*\(|Duration|Compute \(SM\) Throughput|L2 Cache Throughput|Registers Per" \
        "$OUT/${a3}_details.txt" | head -12 ;;
    *) echo "unknown stage $stage" ;;
  esac
done
# At most 8 files come back: the logs and CSVs travel as one archive, each database as one.
# A second run of this script in the same call keeps what the first archived (a log or CSV
# of the same name is this run's).
for f in /tmp/tgemm/*.db; do [ -f "$f" ] && gzip -c "$f" >"$OUT/$(basename "$f").gz"; done
[ -f "$OUT/logs.tgz" ] && tar xzf "$OUT/logs.tgz" -C "$OUT" --skip-old-files
(cd "$OUT" && tar czf logs.tgz --remove-files -- *.log *.csv *.txt 2>/dev/null)
ls -la "$OUT"
