#!/usr/bin/env bash
# On the GPU host (2 x H200): runs every harness and writes the outputs to $OUT (or ./out).
set -uo pipefail
cd "$(dirname "$0")"
out=${OUT:-out}; mkdir -p "$out"
export LD_LIBRARY_PATH=/usr/local/cuda-13.0/targets/x86_64-linux/lib:/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
timeout 300 ./gemm_harness 8 | tee "$out/gemm.txt"
for op in as ar rs ag; do timeout 90 ./fused_harness $op | tee -a "$out/fused.txt"; done
timeout 120 ./epilogue_probe | tee "$out/epilogue.txt"
timeout 200 ./attention_harness | tee "$out/attention.txt"
timeout 240 python3 sdpa.py 64 128 | tee -a "$out/attention.txt"
timeout 300 ./ring_decode_harness | tee "$out/ring_decode.txt"
timeout 120 ./decode_ahead1_harness copy | tee "$out/decode_ahead.txt"
for ahead in 0 2 3 4; do timeout 120 ./decode_ahead${ahead}_harness | tee -a "$out/decode_ahead.txt"; done
SWEEP=1 timeout 200 ./decode_ahead1_harness | tee -a "$out/decode_ahead.txt"
