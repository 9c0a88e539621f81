package dev.irisjvm.core.internal;

import dev.irisjvm.core.IrisPlatformException;
import dev.irisjvm.core.gpu.DeviceProperties;
import dev.irisjvm.core.gpu.Platform;

/**
 * The NVIDIA GPUs this build's device code runs on. The portable modules (the runtime's barrier,
 * fill and tile kernels, the collectives) carry machine code for compute capability 8.0, 8.6, 8.9,
 * 9.0 (sm_90a), 10.0 and 12.0 and compute_80 PTX that any later GPU compiles on load; the wgmma/TMA
 * modules (GEMM, the fused operations, attention) need 9.0 and say so when they are created. A GPU
 * older than Ampere runs none of it, so init refuses it up front instead of failing at the first
 * kernel load with a driver error.
 *
 * <pre>{@code
 * BuiltArchitectures.requireSupported(rank, Gpu.platform(), Gpu.properties(device));
 * // on a V100: IrisPlatformException "rank 0: GPU 0 (Tesla V100-SXM2-32GB, 0000:1b:00) has compute
 * // capability 7.0; this build's kernels need 8.0 or later (Ampere and newer; GEMM, the fused
 * // operations and attention need 9.0: H100, H200)"
 * }</pre>
 */
public final class BuiltArchitectures {
    /** The oldest compute capability the portable modules carry code for. */
    static final int MIN_MAJOR = 8;
    /** What the wgmma/TMA modules need, for messages. */
    static final String HOPPER = "9.0: H100, H200";

    private BuiltArchitectures() {}

    /** Throws, naming the GPU and its compute capability, where none of this build's kernels can run. */
    public static void requireSupported(int rank, Platform platform, DeviceProperties gpu) {
        if (platform != Platform.CUDA || gpu.major() >= MIN_MAJOR) {
            return;
        }
        throw new IrisPlatformException("rank " + rank + ": GPU " + gpu.device() + " (" + gpu.name() + ", " + gpu.pciAddress()
                + ") has compute capability " + gpu.computeCapability() + "; this build's kernels need " + MIN_MAJOR
                + ".0 or later (Ampere and newer; GEMM, the fused operations and attention need " + HOPPER + ")",
                platform, "Iris", "compute capability " + MIN_MAJOR + ".0 or later");
    }
}
