#!/usr/bin/env bash
# Session 23: builds, here (no GPU), the 3xTF32 GEMV probe (gemv_tc_probe_s23.cu), the shipped
# FFMA best of 16x4096x4096 NN for comparison, and the probe harness, into probe_s23/ (untracked:
# the device call carries it). Then on the device:
#   cd probe_s23 && ./run.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
out=probe_s23
mkdir -p "$out"
nvcc=/usr/local/cuda/bin/nvcc
patch -s -o "$out/probe.cu" notes/kernels/gemv_probe_s21.cu notes/kernels/gemv_probe_s22.patch
$nvcc -O2 -std=c++17 -arch=sm_90 -I kernel_templates "$out/probe.cu" -o "$out/probe"
echo '#include "gemv_simt.cuh"' >"$out/ffma.cu"
$nvcc -cubin -arch=sm_90 -std=c++17 -O3 -I kernel_templates -DTGEMM_OP_A=0 -DTGEMM_OP_B=0 \
  -DTGEMM_TYPE_A=0 -DTGEMM_TYPE_B=0 -DTGEMM_TYPE_C=0 -DTGEMM_COMPUTE=0 -DSIDE=0 -DROWS=16 -DVEC=4 \
  -DWARPS=4 -DKB=256 -DLW=1 -DSPLIT_MODE=0 -DPREFETCH=1 -DSTAGES=0 -DKLANES=32 -DCLUSTER=1 \
  -o "$out/ffma.cubin" "$out/ffma.cu"
args=("ffma.cubin:ffma_w4_kb256:128:256:16384:128")
for cfg in "4 1 256 3" "8 1 256 3" "4 2 256 3" "2 2 256 3" "4 1 512 3" "8 1 128 3" "4 1 256 1"; do
  read -r w lw kb terms <<<"$cfg"
  name="tc_w${w}_lw${lw}_kb${kb}_t${terms}"
  $nvcc -cubin -arch=sm_90 -std=c++17 -O3 -I kernel_templates -DWARPS="$w" -DLW="$lw" -DKB="$kb" \
    -DTERMS="$terms" -o "$out/$name.cubin" notes/kernels/gemv_tc_probe_s23.cu
  args+=("$name.cubin:$name:$((32 * w * lw)):$kb:$((kb * 128)):$((32 * w))")
done
cat >"$out/run.sh" <<RUN
#!/usr/bin/env bash
cd "\$(dirname "\$0")"
for shape in "16 4096 4096" "16 11008 4096" "16 4096 11008" "8 4096 4096"; do
  ./probe \$shape ${args[*]} read:read:0:0:0:0
done
RUN
chmod +x "$out/run.sh"
echo "built $out/: $(ls "$out" | wc -l) files"
