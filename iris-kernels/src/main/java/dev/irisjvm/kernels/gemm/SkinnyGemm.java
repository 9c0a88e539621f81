package dev.irisjvm.kernels.gemm;

import dev.irisjvm.core.DType;
import dev.irisjvm.core.gpu.LaunchShape;
import dev.irisjvm.core.gpu.Stream;
import dev.irisjvm.core.internal.Kernel;
import dev.irisjvm.core.internal.KernelModule;
import dev.irisjvm.runtime.abi.global.KernelAbi;
import java.util.Locale;

/**
 * {@link Gemm}'s kernels for problems of at most {@value #MAX_M} rows with A stored M x K, on either
 * mainloop ({@code iris_gemm_skinny_<in>_<nk|kn>_<out>} in {@code gemm_portable.cu}; iris/gemm/sm80/skinny.cuh):
 * one block per band of {@value #TILE_M} rows, {@value #TILE_N}-column tile and slice of K, the
 * slices of a band's tile added in a fixed order by its last block. A decode step or a small batch
 * only streams the weights, so the split aims at enough blocks to keep every SM's loads in flight.
 * Not thread-safe (Gemm's calls are synchronized).
 */
final class SkinnyGemm implements AutoCloseable {
    /** Rows of a block's tile, one band of A's rows (iris/abi/gemm_portable.h, as every constant below that the kernels share). */
    static final int TILE_M = KernelAbi.IRIS_GEMM_SKINNY_TILE_M;
    /**
     * The most rows {@link Gemm} runs on the skinny kernels (which take any number of bands): on an
     * H200 they beat the 64 x 128 tiles on 18 of 21 of the model suite's shapes of 1 and 8 rows
     * (2026-12-02), on 7 of its 9 shapes of 16 rows once their offsets were computed once
     * (2026-12-04, geometric mean 0.934-0.940x cuBLAS against 0.865-0.868x), and in two bands on all
     * 9 of its shapes of 32 rows (2026-12-04, 0.921x against 0.831-0.835x in three runs of the tiles;
     * docs/benchmarks/gemm-suite-findings.md). Rows past 32 stay on the tiles, unmeasured in bands.
     */
    static final int MAX_M = 2 * TILE_M;
    /** Output columns per tile. */
    static final int TILE_N = KernelAbi.IRIS_GEMM_SKINNY_TILE_N;
    /** K per pipeline stage. */
    static final int TILE_K = KernelAbi.IRIS_GEMM_SKINNY_TILE_K;
    /** Threads per block: four warps along N. */
    static final int THREADS = KernelAbi.IRIS_GEMM_SKINNY_THREADS;
    /** Dynamic shared memory per block, in bytes. */
    static final int SHARED_BYTES = KernelAbi.IRIS_GEMM_SKINNY_SHARED_BYTES;
    /**
     * The fewest k-blocks of a slice, and the most blocks per SM a split aims at: GemmPlanTimes timed
     * every even split of nine shapes of 1 to 32 rows on an H200 at commit {@code 404d74a}
     * (docs/benchmarks/gemm-plans-2026-12-04-404d74a.json). Past two blocks per SM each was slower,
     * and under 8 k-blocks a slice each but one (1 x 768 x 4096: 6.4 µs in 16 slices of 4, 6.6 in 8
     * of 8, 8.1 in 32 of 2); 16 x 14336 x 4096 ran in 32.0 µs on 224 blocks and 33.7 on 336. Within
     * both bounds, the most slices were within 4 % of the fastest split on each shape, the fastest on
     * five.
     */
    static final int MIN_SLICE_K_BLOCKS = 8;
    static final int BLOCKS_PER_MULTIPROCESSOR = 2;
    /**
     * The most rows of partials (slices x M) that the last block of a tile adds: one block reads them
     * all (128 KiB at 256 rows). 16 x 2304 x 16384 ran fastest in 11 slices (176 rows), 23.8 µs
     * against 29.4 in the 4 that a bound of 64 rows allowed.
     */
    static final int MAX_SUMMED_ROWS = 256;

    private static final DType[] INPUTS = {DType.BF16, DType.F16};

    /** [input: bf16, f16][layout: nk, kn][output: input type, f32] */
    private final Kernel[][][] kernels = new Kernel[INPUTS.length][GemmLayout.values().length][2];
    private final GemmSkinnyArgs args = new GemmSkinnyArgs();
    /** Blocks one SM runs at once (three on sm_80 and sm_90, one on sm_86 and sm_89). */
    private final int blocksPerMultiprocessor;

    SkinnyGemm(KernelModule module) {
        int blocks = Integer.MAX_VALUE;
        for (int i = 0; i < INPUTS.length; i++) {
            for (GemmLayout layout : GemmLayout.values()) {
                for (int o = 0; o < 2; o++) {
                    Kernel k = module.kernel(kernelName(INPUTS[i], layout, o == 0 ? INPUTS[i] : DType.F32));
                    k.setMaxDynamicSharedBytes(SHARED_BYTES);
                    // Without it the driver may keep a carveout of one block per SM, and a split into
                    // two blocks per SM would run as two waves.
                    k.preferSharedMemory();
                    blocks = Math.min(blocks, k.maxActiveBlocksPerMultiprocessor(THREADS, SHARED_BYTES));
                    kernels[i][layout.ordinal()][o] = k;
                }
            }
        }
        this.blocksPerMultiprocessor = Math.max(1, blocks);
    }

    /** The most blocks a split aims at: {@value #BLOCKS_PER_MULTIPROCESSOR} per SM, or as many as one SM runs at once where that is fewer. */
    int mostBlocks(int multiprocessors) {
        return Math.min(blocksPerMultiprocessor, BLOCKS_PER_MULTIPROCESSOR) * multiprocessors;
    }

    static String kernelName(DType in, GemmLayout layout, DType out) {
        return "iris_gemm_skinny_" + in.name().toLowerCase(Locale.ROOT) + "_" + layout.kernelSuffix() + "_"
                + out.name().toLowerCase(Locale.ROOT);
    }

    /** Whether the skinny kernels can run {@code p}: at most {@value #MAX_M} rows, A stored M x K. */
    static boolean takes(GemmProblem p) {
        return takes(p.m()) && p.aLayout() == GemmALayout.MK;
    }

    /** Whether {@code m} rows are few enough for the skinny kernels (A stored M x K). */
    static boolean takes(long m) {
        return m <= MAX_M;
    }

    /**
     * How an M x N x K problem spreads: {@code bands} bands of {@value #TILE_M} rows, {@code tiles}
     * column tiles, each band's tile in {@code slices} slices of {@code kBlocksPerSlice} k-blocks (the
     * last may have fewer, none is empty).
     */
    record Split(int bands, int tiles, int slices, int kBlocksPerSlice) {
        /** One band of rows. */
        Split(int tiles, int slices, int kBlocksPerSlice) {
            this(1, tiles, slices, kBlocksPerSlice);
        }

        int grid() {
            return bands * tiles * slices;
        }

        String describe() {
            return "skinny " + TILE_M + " x " + TILE_N + " tiles" + (bands == 1 ? "" : " in " + bands + " bands of rows") + ", "
                    + (slices == 1 ? tiles + " tiles whole" : tiles + " tiles in " + slices + " slices of K") + " on " + grid() + " blocks";
        }
    }

    /**
     * The split of an {@code m} x {@code n} x {@code k} problem into at most {@code mostBlocks}
     * blocks ({@link #mostBlocks}): as many slices as that allows, each at least {@value
     * #MIN_SLICE_K_BLOCKS} k-blocks, at most {@value #MAX_SUMMED_ROWS} rows of partials per band's
     * tile, within a workspace of {@code partialFloats} floats and {@code counters} tile counters
     * (none: every tile whole).
     */
    static Split split(int m, int n, int k, int mostBlocks, long partialFloats, long counters) {
        int bands = bands(m);
        int tiles = (int) GemmChecks.ceilDiv(n, TILE_N);
        int kBlocks = (int) GemmChecks.ceilDiv(k, TILE_K);
        long wanted = Math.min(mostBlocks / ((long) bands * tiles), MAX_SUMMED_ROWS / Math.max(1, Math.min(m, TILE_M)));
        long room = (long) bands * tiles > counters ? 1 : partialFloats / partialFloats(bands, tiles, 1);
        int slices = (int) Math.max(1, Math.min(Math.min(wanted, room), kBlocks / MIN_SLICE_K_BLOCKS));
        return evenly(m, n, k, slices);
    }

    /** Bands of {@value #TILE_M} rows in {@code m} rows (one at least). */
    static int bands(int m) {
        return (int) Math.max(1, GemmChecks.ceilDiv(m, TILE_M));
    }

    /** Floats of partials that {@code bands} x {@code tiles} tiles in {@code slices} slices need. */
    static long partialFloats(int bands, int tiles, int slices) {
        return (long) bands * tiles * slices * TILE_M * TILE_N;
    }

    /** Whether {@code split} fits a workspace of {@code partialFloats} floats and {@code counters} tile counters (one slice needs none). */
    static boolean fits(Split split, long partialFloats, long counters) {
        return split.slices() == 1 || ((long) split.bands() * split.tiles() <= counters
                && partialFloats(split.bands(), split.tiles(), split.slices()) <= partialFloats);
    }

    /**
     * An {@code m} x {@code n} x {@code k} problem in {@code slices} slices of K (at least 1, at most
     * the k-blocks) made even: equal k-blocks per slice, none empty.
     */
    static Split evenly(int m, int n, int k, int slices) {
        int kBlocks = (int) GemmChecks.ceilDiv(k, TILE_K);
        int per = (int) GemmChecks.ceilDiv(kBlocks, Math.max(1, Math.min(slices, kBlocks)));
        return new Split(bands(m), (int) GemmChecks.ceilDiv(n, TILE_N), (int) GemmChecks.ceilDiv(kBlocks, per), per);
    }

    static LaunchShape launchShape(Split split) {
        return LaunchShape.of(split.grid(), THREADS).withSharedBytes(SHARED_BYTES);
    }

    /**
     * Enqueues {@code p} (which {@link #takes}) split as {@code split} says; with more than one slice,
     * on {@code workspace}'s partials and counters.
     */
    void launch(GemmProblem p, Split split, StreamKWorkspace workspace, Stream stream) {
        long partials = 0;
        long counters = 0;
        if (split.slices() > 1) {
            workspace.prepare(stream);
            partials = workspace.partialsAddress();
            counters = workspace.countersAddress();
        }
        int in = p.inputType() == DType.BF16 ? 0 : 1;
        int out = p.outputType() == DType.F32 ? 1 : 0;
        kernels[in][p.layout().ordinal()][out].launch(launchShape(split), stream, args.of(p, split, partials, counters), false);
    }

    @Override
    public void close() {
        args.close();
    }
}
