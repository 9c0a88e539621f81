#!/usr/bin/env python3
"""PyTorch's scaled_dot_product_attention on one GPU, on the shapes of the attention benchmark.

The reference that bin/iris-bench attention measures before the Java part: for each sequence length
and mask, SDPA with PyTorch's default backend choice, then with the flash and the cuDNN backends
forced, each timed with CUDA events (warm-up calls, then one event pair per call, the median
counts). Writes one JSON file:

  {"torch": "2.11.0+cu130", "cuda": "13.0", "device": "NVIDIA H200", "dtype": "bf16",
   "batch": 1, "q_heads": 32, "kv_heads": 8, "head_dim": 128, "warmup": 3, "reps": 10,
   "points": [{"backend": "default", "seq": 4096, "causal": false, "gqa": "enable_gqa",
               "reps": 10, "median_us": ..., "min_us": ..., "max_us": ..., "tflops": ...,
               "error": null}, ...]}

FLOPs: 4 B Hq S^2 D, halved when causal (the convention of the Java side). Grouped-query
attention is measured both ways, through enable_gqa=True ("gqa": "enable_gqa") and with K and V
expanded to the query heads beforehand ("gqa": "expanded", the expansion not timed): a backend
may refuse one, or pick a slower kernel for it. The report compares with the faster of the two. A
backend that refuses a form records its error instead of a time.

  python3 attention_sdpa.py --out sdpa.json [--seqs 4096,16384] [--reps 10] [--device 0]
"""
import argparse
import json
import sys


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--seqs", default="4096,16384")
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--q-heads", type=int, default=32)
    ap.add_argument("--kv-heads", type=int, default=8)
    ap.add_argument("--head-dim", type=int, default=128)
    ap.add_argument("--dtype", choices=["bf16", "f16"], default="bf16")
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--device", type=int, default=0)
    args = ap.parse_args()

    import torch
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel

    torch.cuda.set_device(args.device)
    dtype = torch.bfloat16 if args.dtype == "bf16" else torch.float16
    backends = [("default", None), ("flash", SDPBackend.FLASH_ATTENTION), ("cudnn", SDPBackend.CUDNN_ATTENTION)]
    result = {
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "device": torch.cuda.get_device_name(args.device),
        "dtype": args.dtype,
        "batch": args.batch,
        "q_heads": args.q_heads,
        "kv_heads": args.kv_heads,
        "head_dim": args.head_dim,
        "warmup": args.warmup,
        "reps": args.reps,
        "points": [],
    }
    group = args.q_heads // args.kv_heads
    for seq in [int(s) for s in args.seqs.split(",") if s]:
        gen = torch.Generator(device="cuda").manual_seed(seq)
        q = torch.randn(args.batch, args.q_heads, seq, args.head_dim, device="cuda", dtype=dtype, generator=gen)
        k = torch.randn(args.batch, args.kv_heads, seq, args.head_dim, device="cuda", dtype=dtype, generator=gen)
        v = torch.randn(args.batch, args.kv_heads, seq, args.head_dim, device="cuda", dtype=dtype, generator=gen)
        for causal in (False, True):
            flops = 4.0 * args.batch * args.q_heads * seq * seq * args.head_dim / (2 if causal else 1)
            for name, backend in backends:
                for gqa in ("enable_gqa", "expanded"):
                    point = {"backend": name, "seq": seq, "causal": causal, "gqa": gqa, "reps": 0, "median_us": None,
                             "min_us": None, "max_us": None, "tflops": None, "error": None}
                    if gqa == "enable_gqa":
                        call = lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=True)
                    else:
                        ke = k.repeat_interleave(group, dim=1)
                        ve = v.repeat_interleave(group, dim=1)
                        call = lambda: F.scaled_dot_product_attention(q, ke, ve, is_causal=causal)
                    try:
                        times = timed(torch, call, backend, sdpa_kernel, args.warmup, args.reps)
                        times.sort()
                        n = len(times)
                        median = times[n // 2] if n % 2 else (times[n // 2 - 1] + times[n // 2]) / 2
                        point.update({"reps": n, "median_us": median, "min_us": times[0], "max_us": times[-1],
                                      "tflops": flops / (median * 1e6)})
                    except Exception as e:  # a backend that cannot run this form: record why
                        text = str(e).strip().splitlines()
                        point["error"] = f"{type(e).__name__}: {text[0] if text else ''}"
                        torch.cuda.synchronize()
                    result["points"].append(point)
                    shown = f"{point['tflops']:.1f} TFLOP/s" if point["tflops"] else point["error"]
                    print(f"attention_sdpa: S {seq} {'causal' if causal else 'full'} {name} {gqa}: {shown}", flush=True)
                    if gqa == "expanded":
                        del ke, ve
        del q, k, v
        torch.cuda.empty_cache()
    with open(args.out, "w") as f:
        json.dump(result, f, indent=2)
    print(f"attention_sdpa: wrote {args.out}")


def timed(torch, call, backend, sdpa_kernel, warmup, reps):
    """Microseconds per call, one event pair per call."""
    def run():
        if backend is None:
            return call()
        with sdpa_kernel(backend):
            return call()
    for _ in range(warmup):
        run()
    torch.cuda.synchronize()
    events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(reps)]
    for start, end in events:
        start.record()
        run()
        end.record()
    torch.cuda.synchronize()
    return [start.elapsed_time(end) * 1000.0 for start, end in events]


if __name__ == "__main__":
    sys.exit(main())
