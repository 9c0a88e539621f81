package dev.irisjvm.kernels.gemm;

import dev.irisjvm.core.DType;
import dev.irisjvm.core.gpu.DeviceProperties;
import dev.irisjvm.core.gpu.LaunchShape;
import dev.irisjvm.core.gpu.Platform;
import dev.irisjvm.core.gpu.Stream;
import dev.irisjvm.core.internal.Kernel;
import dev.irisjvm.core.internal.KernelModule;
import dev.irisjvm.runtime.abi.global.KernelAbi;
import java.util.Locale;

/**
 * {@link Gemm}'s {@link GemmMainloop#PORTABLE} kernels ({@code gemm_portable.cu}): eight kernels
 * {@code iris_gemm_portable_<in>_<nk|kn>_<out>}, one block per {@value #TILE_M} x {@value #TILE_N}
 * output tile, taking the same checked {@link GemmProblem} as the Hopper kernels. Not thread-safe
 * (Gemm's calls are synchronized).
 */
final class PortableGemm implements AutoCloseable {
    /** The kernel module ({@code gemm_portable.cu}). */
    static final String MODULE = "gemm_portable";
    /** What the kernels need. */
    static final String REQUIREMENT = "compute capability 8.0 or later (mma.sync, ldmatrix, cp.async)";
    /** Output rows per tile (iris/abi/gemm_portable.h, as every constant below that the kernels share). */
    static final int TILE_M = KernelAbi.IRIS_GEMM_PORTABLE_TILE_M;
    /** Output columns per tile. */
    static final int TILE_N = KernelAbi.IRIS_GEMM_PORTABLE_TILE_N;
    /** Threads per block: four warps. */
    static final int THREADS = KernelAbi.IRIS_GEMM_PORTABLE_THREADS;
    /** Dynamic shared memory per block, in bytes: the pipeline's stages. */
    static final int SHARED_BYTES = KernelAbi.IRIS_GEMM_PORTABLE_SHARED_BYTES;

    private static final DType[] INPUTS = {DType.BF16, DType.F16};

    /** [input: bf16, f16][layout: nk, kn][output: input type, f32] */
    private final Kernel[][][] kernels = new Kernel[INPUTS.length][GemmLayout.values().length][2];
    private final GemmPortableArgs args = new GemmPortableArgs();

    PortableGemm(KernelModule module) {
        for (int i = 0; i < INPUTS.length; i++) {
            for (GemmLayout layout : GemmLayout.values()) {
                for (int o = 0; o < 2; o++) {
                    Kernel k = module.kernel(kernelName(INPUTS[i], layout, o == 0 ? INPUTS[i] : DType.F32));
                    k.setMaxDynamicSharedBytes(SHARED_BYTES);
                    kernels[i][layout.ordinal()][o] = k;
                }
            }
        }
    }

    /** The module's kernels are NVIDIA code for compute capability 8.0 and later, the skinny ones with the most shared memory per block. */
    static void device(Platform platform, DeviceProperties p) {
        if (platform != Platform.CUDA) {
            throw platform.unavailable(MODULE, REQUIREMENT);
        }
        if (p.major() < 8) {
            throw GemmChecks.notOnThisGpu(platform, p, MODULE, REQUIREMENT, "has " + p.computeCapability());
        }
        GemmChecks.sharedMemory(platform, p, MODULE, Math.max(SHARED_BYTES, SkinnyGemm.SHARED_BYTES));
    }

    static String kernelName(DType in, GemmLayout layout, DType out) {
        return "iris_gemm_portable_" + in.name().toLowerCase(Locale.ROOT) + "_" + layout.kernelSuffix() + "_"
                + out.name().toLowerCase(Locale.ROOT);
    }

    /** Output tiles of {@value #TILE_M} x {@value #TILE_N}. */
    static long tiles(GemmProblem p) {
        return GemmChecks.ceilDiv(p.m(), TILE_M) * GemmChecks.ceilDiv(p.n(), TILE_N);
    }

    /** One block of {@value #THREADS} threads per tile, with {@value #SHARED_BYTES} bytes of shared memory. */
    static LaunchShape launchShape(GemmProblem p) {
        long tiles = tiles(p);
        if (tiles > Integer.MAX_VALUE) {
            throw GemmChecks.fail("M x N = " + p.m() + " x " + p.n() + " makes " + tiles + " tiles of " + TILE_M + " x " + TILE_N
                    + "; the portable kernel launches one block per tile, at most 2^31 - 1");
        }
        return LaunchShape.of((int) tiles, THREADS).withSharedBytes(SHARED_BYTES);
    }

    /** Enqueues the problem on {@code stream}, tiles walked in groups of {@code groupM} tile rows. */
    void launch(GemmProblem p, Stream stream, int groupM) {
        if (p.aLayout() != GemmALayout.MK || p.alpha() != 1f || p.beta() != 0f) {
            throw GemmChecks.fail("the portable mainloop takes A stored M x K with alpha = 1 and beta = 0 so far; this problem has A "
                    + p.aLayout() + ", alpha " + p.alpha() + ", beta " + p.beta() + " (the Hopper mainloop takes every layout and scale)");
        }
        int in = p.inputType() == DType.BF16 ? 0 : 1;
        int out = p.outputType() == DType.F32 ? 1 : 0;
        kernels[in][p.layout().ordinal()][out].launch(launchShape(p), stream, args.of(p, groupM), false);
    }

    @Override
    public void close() {
        args.close();
    }
}
