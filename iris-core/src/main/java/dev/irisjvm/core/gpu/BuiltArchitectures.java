package dev.irisjvm.core.gpu;

import dev.irisjvm.core.IrisPlatformException;

/**
 * The NVIDIA GPUs this build's device code runs on. Every CUDA module, the runtime's own barrier
 * and copy kernels included, is compiled for sm_90a (Hopper: H100, H200) with compute_90a PTX,
 * which later GPUs cannot JIT ("a" targets are not forward-compatible). So init checks the GPU up
 * front instead of failing at the first kernel load with a driver error.
 *
 * <pre>{@code
 * BuiltArchitectures.requireSupported(rank, Gpu.platform(), Gpu.properties(device));
 * // on an A100: IrisPlatformException "rank 0: GPU 0 (NVIDIA A100-SXM4-80GB) has compute
 * // capability 8.0; this build's kernels are compiled for 9.0 (sm_90a: H100, H200) only"
 * }</pre>
 */
public final class BuiltArchitectures {
    /** The one compute capability (major, minor) the CUDA build's modules carry code for. */
    static final int MAJOR = 9;
    static final int MINOR = 0;
    static final String TARGET = "sm_90a";

    private BuiltArchitectures() {}

    /** Throws, naming the GPU and its compute capability, where this build's kernels cannot run. */
    public static void requireSupported(int rank, Platform platform, DeviceProperties gpu) {
        if (platform != Platform.CUDA || (gpu.major() == MAJOR && gpu.minor() == MINOR)) {
            return;
        }
        throw new IrisPlatformException("rank " + rank + ": GPU " + gpu.device() + " (" + gpu.name() + ", " + gpu.pciAddress()
                + ") has compute capability " + gpu.computeCapability() + "; this build's kernels are compiled for "
                + MAJOR + "." + MINOR + " (" + TARGET + ": H100, H200) only, so no kernel of this library can load on it",
                platform, "Iris", "compute capability " + MAJOR + "." + MINOR + " (" + TARGET + ")");
    }
}
