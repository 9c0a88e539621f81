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
 * {@link Gemm}'s {@link GemmMainloop#PORTABLE} kernels ({@code gemm_portable.cu}), taking the same
 * checked {@link GemmProblem} as the Hopper kernels, every layout pair, alpha and beta included, one
 * block per output tile of one of two {@link Tile}s: 32 kernels {@code
 * iris_gemm_portable_[wide_]<in>[_km]_<nk|kn>_<out>}.
 *
 * <p>The rule: {@link Tile#WIDE} (256 x 128, eight warps, one block per SM) where its tiles make at
 * least one full wave, {@code ceil(M / 256) * ceil(N / 128) >= SMs}; {@link Tile#SQUARE} (128 x 128,
 * four warps, two blocks per SM) below that. A wide tile copies each k-block of B to shared memory
 * once for twice the rows. On an H200 (132 SMs), timed against the earlier 128 x 128 kernel (whose
 * loads recomputed their swizzled offsets), the wide kernel ran 1.08x at 8192³ (B stored K x N),
 * 1.05x at 4096³, 1.10x at 1024 x 8192 x 8192 and 1.10x at 2048³, the square one as it is now 1.02
 * to 1.06x; but at 1000 x 1064 x 1000, whose 36 wide tiles leave most SMs idle, the wide kernel ran
 * 40 % slower. The wave is a conservative line between those: 2048³ (128 wide tiles) takes the
 * square tile. Not thread-safe (Gemm's calls are synchronized).
 */
final class PortableGemm implements AutoCloseable {
    /** The kernel module ({@code gemm_portable.cu}). */
    static final String MODULE = "gemm_portable";
    /** What the kernels need. */
    static final String REQUIREMENT = "compute capability 8.0 or later (mma.sync, ldmatrix, cp.async)";
    /** Output columns per tile, of either tile (iris/abi/gemm_portable.h, as every constant the kernels share). */
    static final int TILE_N = KernelAbi.IRIS_GEMM_PORTABLE_TILE_N;

    /** The kernels' output tiles: rows x {@value #TILE_N} columns, and the block that computes one. */
    enum Tile {
        /** 128 x 128 on four warps, 64 KiB of shared memory: two blocks per SM. */
        SQUARE(KernelAbi.IRIS_GEMM_PORTABLE_TILE_M, KernelAbi.IRIS_GEMM_PORTABLE_THREADS,
                KernelAbi.IRIS_GEMM_PORTABLE_SHARED_BYTES, "iris_gemm_portable_"),
        /** 256 x 128 on eight warps, 96 KiB of shared memory: one block per SM. */
        WIDE(KernelAbi.IRIS_GEMM_PORTABLE_WIDE_TILE_M, KernelAbi.IRIS_GEMM_PORTABLE_WIDE_THREADS,
                KernelAbi.IRIS_GEMM_PORTABLE_WIDE_SHARED_BYTES, "iris_gemm_portable_wide_");

        /** Output rows per tile. */
        final int rows;
        /** Threads per block. */
        final int threads;
        /** Dynamic shared memory per block, in bytes: the pipeline's stages. */
        final int sharedBytes;
        private final String prefix;

        Tile(int rows, int threads, int sharedBytes, String prefix) {
            this.rows = rows;
            this.threads = threads;
            this.sharedBytes = sharedBytes;
            this.prefix = prefix;
        }

        /** Output tiles of an {@code m} x {@code n} C. */
        long tiles(int m, int n) {
            return GemmChecks.ceilDiv(m, rows) * GemmChecks.ceilDiv(n, TILE_N);
        }

        /** "256 x 128". */
        String shape() {
            return rows + " x " + TILE_N;
        }
    }

    private static final DType[] INPUTS = {DType.BF16, DType.F16};

    /** [tile][input: bf16, f16][A: mk, km][B: nk, kn][output: input type, f32] */
    private final Kernel[][][][][] kernels =
            new Kernel[Tile.values().length][INPUTS.length][GemmALayout.values().length][GemmLayout.values().length][2];
    private final GemmPortableArgs args = new GemmPortableArgs();
    private final int multiprocessors;
    /** The tile every launch takes (tests), or null: {@link #tile(int, int, int)}'s. */
    private volatile Tile forced;

    /** The kernels of {@code module}, for a GPU of {@code multiprocessors} SMs. */
    PortableGemm(KernelModule module, int multiprocessors) {
        this.multiprocessors = multiprocessors;
        for (Tile tile : Tile.values()) {
            for (int i = 0; i < INPUTS.length; i++) {
                for (GemmALayout a : GemmALayout.values()) {
                    for (GemmLayout b : GemmLayout.values()) {
                        for (int o = 0; o < 2; o++) {
                            Kernel k = module.kernel(kernelName(tile, INPUTS[i], new GemmLayouts(a, b), o == 0 ? INPUTS[i] : DType.F32));
                            k.setMaxDynamicSharedBytes(tile.sharedBytes);
                            kernels[tile.ordinal()][i][a.ordinal()][b.ordinal()][o] = k;
                        }
                    }
                }
            }
        }
    }

    /**
     * The module's kernels are NVIDIA code for compute capability 8.0 and later, the wide ones with
     * the most shared memory per block (96 KiB, within the 99 KiB of sm_86 and sm_89).
     */
    static void device(Platform platform, DeviceProperties p) {
        if (platform != Platform.CUDA) {
            throw platform.unavailable(MODULE, REQUIREMENT);
        }
        if (p.major() < 8) {
            throw GemmChecks.notOnThisGpu(platform, p, MODULE, REQUIREMENT, "has " + p.computeCapability());
        }
        GemmChecks.sharedMemory(platform, p, MODULE, sharedBytes());
    }

    /** The most dynamic shared memory a kernel of the module is launched with. */
    static int sharedBytes() {
        int most = SkinnyGemm.SHARED_BYTES;
        for (Tile tile : Tile.values()) {
            most = Math.max(most, tile.sharedBytes);
        }
        return most;
    }

    static String kernelName(Tile tile, DType in, GemmLayouts layouts, DType out) {
        return tile.prefix + in.name().toLowerCase(Locale.ROOT) + "_" + layouts.kernelPart() + "_" + out.name().toLowerCase(Locale.ROOT);
    }

    /** The rule (see the class comment): wide where its tiles make at least one full wave of {@code multiprocessors}. */
    static Tile tile(int m, int n, int multiprocessors) {
        return Tile.WIDE.tiles(m, n) >= multiprocessors ? Tile.WIDE : Tile.SQUARE;
    }

    /** The tile an {@code m} x {@code n} C takes here: the forced one, else the rule's. */
    Tile tile(int m, int n) {
        return forced != null ? forced : tile(m, n, multiprocessors);
    }

    /** Every later launch takes {@code tile}, whatever the shape; null: the rule again (tests). */
    void force(Tile tile) {
        forced = tile;
    }

    /** The tile {@link #force} set, or null. */
    Tile forced() {
        return forced;
    }

    /** One block of {@code tile.threads} threads per tile, with {@code tile.sharedBytes} of shared memory. */
    static LaunchShape launchShape(GemmProblem p, Tile tile) {
        long tiles = tile.tiles(p.m(), p.n());
        if (tiles > Integer.MAX_VALUE) {
            throw GemmChecks.fail("M x N = " + p.m() + " x " + p.n() + " makes " + tiles + " tiles of " + tile.shape()
                    + "; the portable kernel launches one block per tile, at most 2^31 - 1");
        }
        return LaunchShape.of((int) tiles, tile.threads).withSharedBytes(tile.sharedBytes);
    }

    /** The launch of {@code p} here. */
    LaunchShape launchShape(GemmProblem p) {
        return launchShape(p, tile(p.m(), p.n()));
    }

    /** Enqueues the problem on {@code stream}, tiles walked in groups of {@code groupM} tile rows. */
    void launch(GemmProblem p, Stream stream, int groupM) {
        Tile tile = tile(p.m(), p.n());
        int in = p.inputType() == DType.BF16 ? 0 : 1;
        int out = p.outputType() == DType.F32 ? 1 : 0;
        kernels[tile.ordinal()][in][p.aLayout().ordinal()][p.layout().ordinal()][out].launch(launchShape(p, tile), stream, args.of(p, groupM), false);
    }

    @Override
    public void close() {
        args.close();
    }
}
