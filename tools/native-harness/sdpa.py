# PyTorch SDPA's backends at attention_harness's shapes: python3 sdpa.py [HEAD_DIM ...] (default 128).
import sys
import torch, torch.nn.functional as F
from torch.nn.attention import sdpa_kernel, SDPBackend
torch.manual_seed(0)
dims = [int(d) for d in sys.argv[1:]] or [128]
for D, S, causal in ((D, S, c) for D in dims for S in (4096, 8192, 16384, 32768) for c in (False, True)):
    q = torch.randn(1, 32, S, D, dtype=torch.bfloat16, device="cuda")
    k = torch.randn(1, 8, S, D, dtype=torch.bfloat16, device="cuda")
    v = torch.randn(1, 8, S, D, dtype=torch.bfloat16, device="cuda")
    for name, be in (("default", None), ("flash", SDPBackend.FLASH_ATTENTION), ("cudnn", SDPBackend.CUDNN_ATTENTION)):
        try:
            def f():
                if be is None:
                    return F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=True)
                with sdpa_kernel(be):
                    return F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=True)
            for _ in range(3): f()
            ts = []
            for _ in range(10):
                a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                a.record(); f(); b.record(); torch.cuda.synchronize(); ts.append(a.elapsed_time(b))
            ts.sort(); ms = ts[len(ts) // 2]
            fl = 4 * 32 * S * S * D * (0.5 if causal else 1.0)
            print(f"sdpa {name:8s} D={D} S={S} causal={int(causal)}: {ms:.4f} ms {fl / ms / 1e9:.1f} TFLOP/s")
        except Exception as e:
            print(f"sdpa {name} D={D} S={S} causal={int(causal)}: failed {type(e).__name__}: {str(e)[:100]}")
