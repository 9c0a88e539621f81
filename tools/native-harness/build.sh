#!/usr/bin/env bash
# Builds the native harnesses (standalone CUDA programs, not part of the library) that measured the
# sm_90a kernels against cuBLAS and NCCL before the Java benchmarks could run them; see README.md.
#   tools/native-harness/build.sh OUT_DIR      then, on the GPU host: OUT_DIR/run.sh
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
out=${1:?usage: build.sh OUT_DIR}
mkdir -p "$out"
flags=(-std=c++17 -O3 --expt-relaxed-constexpr -gencode=arch=compute_90a,code=sm_90a
       -I"$root/iris-native/src/main/native/include" -I"$root/iris-kernels/src/main/cuda")
pids=()
for h in gemm fused attention ring_decode; do
  nvcc "${flags[@]}" -o "$out/${h}_harness" "$here/${h}_harness.cu" -ldl &
  pids+=($!)
done
nvcc "${flags[@]}" -o "$out/epilogue_probe" "$here/epilogue_probe.cu" -ldl &
pids+=($!)
# Flash-decode once per L2 prefetch distance (decode_ahead_harness.cu): copies of the kernel source
# with kAheadPasses rewritten.
for ahead in 0 1 2 3 4; do
  src="$out/flash_decode_ahead$ahead.cu"
  sed "s/^constexpr int kAheadPasses = [0-9]*;/constexpr int kAheadPasses = $ahead;/" \
    "$root/iris-kernels/src/main/cuda/flash_decode.cu" > "$src"
  grep -q "^constexpr int kAheadPasses = $ahead;" "$src" || { echo "build.sh: kAheadPasses not found in flash_decode.cu" >&2; exit 1; }
  nvcc "${flags[@]}" -I"$out" -DFLASH_DECODE_SOURCE="\"$src\"" -DVARIANT="\"ahead$ahead\"" \
    -o "$out/decode_ahead${ahead}_harness" "$here/decode_ahead_harness.cu" &
  pids+=($!)
done
failed=0
for pid in "${pids[@]}"; do wait "$pid" || failed=1; done
((failed == 0)) || { echo "build.sh: a harness failed to compile (see above)" >&2; exit 1; }
cp "$here/sdpa.py" "$here/run.sh" "$out/"
