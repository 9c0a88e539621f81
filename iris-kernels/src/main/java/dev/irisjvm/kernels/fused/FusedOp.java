package dev.irisjvm.kernels.fused;

import dev.irisjvm.core.DType;
import dev.irisjvm.kernels.gemm.Gemm;
import dev.irisjvm.kernels.gemm.GemmLayout;
import dev.irisjvm.kernels.gemm.GemmMainloop;
import dev.irisjvm.runtime.abi.global.KernelAbi;
import java.util.EnumSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * The four fused GEMM + communication operations, with what the Java side needs to know about their
 * kernels: the module ({@code .cu} file), the kernel names, the variants and the tile widths each one
 * has, on each {@link GemmMainloop} (the Hopper kernels, one module per operation, and the portable
 * ones of {@value #PORTABLE_MODULE}, for every GPU since Ampere).
 *
 * <pre>{@code
 * FusedOp.ALL_REDUCE.kernelName(FusedVariant.SPARE_WARPS, DType.BF16, GemmLayout.NK, Gemm.TILE_N, false);
 * // "iris_gemm_all_reduce_spare_warps_bf16_nk"
 * FusedOp.ALL_REDUCE.portableKernelName(DType.BF16, GemmLayout.NK);
 * // "iris_gemm_all_reduce_portable_bf16_nk"
 * }</pre>
 */
public enum FusedOp {
    /** {@link GemmAllScatter}: column-parallel GEMM, every rank ends with all of C ({@code gemm_all_scatter.cu}). */
    ALL_SCATTER("all_scatter", "gemm_all_scatter", "GemmAllScatter", "GEMM + all-scatter",
            EnumSet.of(FusedVariant.EPILOGUE, FusedVariant.SPARE_WARPS)),
    /** {@link GemmAllReduce}: row-parallel GEMM (K split), the sum on every rank ({@code gemm_reduce.cu}). */
    ALL_REDUCE("all_reduce", "gemm_reduce", "GemmAllReduce", "GEMM + all-reduce",
            EnumSet.of(FusedVariant.EPILOGUE, FusedVariant.SPARE_WARPS, FusedVariant.UNFUSED)),
    /** {@link GemmReduceScatter}: row-parallel GEMM, each rank its block of rows of the sum ({@code gemm_reduce.cu}). */
    REDUCE_SCATTER("reduce_scatter", "gemm_reduce", "GemmReduceScatter", "GEMM + reduce-scatter",
            EnumSet.of(FusedVariant.EPILOGUE, FusedVariant.SPARE_WARPS, FusedVariant.UNFUSED)),
    /** {@link AllGatherGemm}: A split by rows is gathered while the GEMM runs ({@code all_gather_gemm.cu}). */
    ALL_GATHER("all_gather", "all_gather_gemm", "AllGatherGemm", "all-gather + GEMM",
            EnumSet.of(FusedVariant.SPARE_WARPS, FusedVariant.UNFUSED));

    /** What every Hopper fused kernel needs, as the sources' IRIS_NVIDIA_ONLY say it. */
    public static final String REQUIREMENT = "sm_90a (wgmma, TMA)";
    /** The portable kernels of every operation ({@code fused_portable.cu}). */
    public static final String PORTABLE_MODULE = "fused_portable";
    /** What the portable kernels need. */
    public static final String PORTABLE_REQUIREMENT = "compute capability 8.0 or later (mma.sync, ldmatrix, cp.async)";
    /** Threads of a portable kernel's block: two groups of four warps (iris/abi/gemm_portable.h). */
    public static final int PORTABLE_THREADS = KernelAbi.IRIS_GEMM_PORTABLE_PERSISTENT_THREADS;
    /** Dynamic shared memory of a portable kernel's block. */
    public static final int PORTABLE_SHARED_BYTES = KernelAbi.IRIS_GEMM_PORTABLE_PERSISTENT_SHARED_BYTES;

    private final String id;
    private final String module;
    private final String className;
    private final String title;
    private final Set<FusedVariant> variants;

    FusedOp(String id, String module, String className, String title, Set<FusedVariant> variants) {
        this.id = id;
        this.module = module;
        this.className = className;
        this.title = title;
        this.variants = variants;
    }

    /** "all_scatter", "all_reduce", "reduce_scatter", "all_gather": the name in benchmark results and traces. */
    public String id() {
        return id;
    }

    /** The Hopper kernels' module, i.e. the {@code .cu} file's name. */
    public String module() {
        return module;
    }

    /** The module of this operation's kernels on {@code mainloop} (HOPPER or PORTABLE). */
    public String module(GemmMainloop mainloop) {
        return portable(mainloop) ? PORTABLE_MODULE : module;
    }

    /** The Java class that launches it, for messages ("rank 0: GemmAllReduce: ..."). */
    public String className() {
        return className;
    }

    /** "GEMM + all-reduce". */
    public String title() {
        return title;
    }

    /** The variants this operation runs in on the Hopper mainloop (never AUTO): its kernels', and UNFUSED but for all-scatter. */
    public Set<FusedVariant> variants() {
        return EnumSet.copyOf(variants);
    }

    /**
     * The variants this operation runs in on {@code mainloop} (HOPPER or PORTABLE): the portable
     * kernels have no producer warps to spare and run only {@link FusedVariant#EPILOGUE} (and, but
     * for all-scatter, {@link FusedVariant#UNFUSED}).
     */
    public Set<FusedVariant> variants(GemmMainloop mainloop) {
        if (!portable(mainloop)) {
            return variants();
        }
        Set<FusedVariant> v = EnumSet.of(FusedVariant.EPILOGUE);
        if (variants.contains(FusedVariant.UNFUSED)) {
            v.add(FusedVariant.UNFUSED);
        }
        return v;
    }

    /** The variants this operation's Hopper kernels come in: {@link #variants()} but UNFUSED, which has none. */
    public Set<FusedVariant> kernelVariants() {
        Set<FusedVariant> v = variants();
        v.remove(FusedVariant.UNFUSED);
        return v;
    }

    private static boolean portable(GemmMainloop mainloop) {
        if (mainloop == null || mainloop == GemmMainloop.AUTO) {
            throw new IllegalArgumentException("mainloop must be HOPPER or PORTABLE (resolve AUTO first), got " + mainloop);
        }
        return mainloop == GemmMainloop.PORTABLE;
    }

    /**
     * Whether a call ends with a device barrier of all ranks, which publishes the stores into peers
     * and keeps the next call from overwriting what a peer still reads. All-gather + GEMM needs none
     * (about 5 µs saved): its kernel waits for every piece a peer pushes into this rank, so none is
     * in flight once it ends, and a peer writes into this rank's gathered A and flags only after
     * this rank's next call has started (the clear flag of fused/all_gather_hooks.cuh).
     */
    public boolean endsWithBarrier() {
        return this != ALL_GATHER;
    }

    /**
     * Whether a call starts with a device barrier of all ranks. All-scatter's peers store tiles into
     * this rank's C from their first tile on, while this rank may still be reading the previous
     * call's C (the next layer, a copy): the barrier keeps their stores behind everything this rank
     * enqueued before the call. (All-gather's clear flag and the reductions' partials, which arrive
     * before C is written, protect the others.) A replayable call zeroes the flags that peers
     * signal into, and meets them before anyone signals.
     */
    public boolean startsWithBarrier(boolean replayable) {
        return this == ALL_SCATTER || replayable;
    }

    /** Whether the ranks' partial products are summed: all-reduce and reduce-scatter (rank 0 adds the bias). */
    public boolean reduces() {
        return this == ALL_REDUCE || this == REDUCE_SCATTER;
    }

    /** Whether {@code rank} adds the bias: every rank, but rank 0 alone where the partials are summed. */
    boolean addsBias(int rank) {
        return !reduces() || rank == 0;
    }

    /**
     * Whether the rows of A (all-gather) or of C (reduce-scatter) are split evenly over the ranks,
     * so that M must be a multiple of the world size (and, for the fused kernels, of 128 x world
     * size: {@link #kernelsTakeRows}).
     */
    public boolean splitsRows() {
        return this == REDUCE_SCATTER || this == ALL_GATHER;
    }

    /**
     * Whether this operation's fused kernels can run M rows on {@code world} ranks: those that split
     * the rows hand each rank a block of whole {@value Gemm#TILE_M}-row tiles, so M must be a
     * multiple of 128 x world; the others take any M. Where they cannot, {@link FusedVariant#UNFUSED}
     * runs it, which needs only M a multiple of world.
     */
    public boolean kernelsTakeRows(long m, int world) {
        return !splitsRows() || m % ((long) Gemm.TILE_M * world) == 0;
    }

    /** Whether only {@link FusedVariant#UNFUSED} can run M rows on {@code world} ranks: the kernels cannot, and it exists. */
    public boolean onlyUnfusedTakesRows(long m, int world) {
        return !kernelsTakeRows(m, world) && variants.contains(FusedVariant.UNFUSED);
    }

    /**
     * The least K that split-K takes (iris/abi/fused.h): each half then has at least one k-block
     * (all_gather_gemm.cu asserts it against iris/gemm/impl/k_blocks.cuh's split_boundary).
     */
    public static final int MIN_SPLIT_K = KernelAbi.IRIS_FUSED_MIN_SPLIT_K;

    /** Whether this operation's kernels can split K in two ({@link FusedConfig#splitK}): all-gather + GEMM's. */
    public boolean splitsK() {
        return this == ALL_GATHER;
    }

    /** {@link #splitsK()} on {@code mainloop}: never on the portable one. */
    public boolean splitsK(GemmMainloop mainloop) {
        return !portable(mainloop) && splitsK();
    }

    /**
     * The split-K for an M x N x K problem on that many blocks, when the config leaves it open (0)
     * and the tile width at 0 or {@link Gemm#TILE_N}: 2 for all-gather + GEMM when its 128 x 256
     * tiles would not fill half of the blocks and K >= {@value #MIN_SPLIT_K}, else 1. Two blocks per
     * tile then each run half of K, with 128 x 256 tiles: at 1024 x 1792 x 8192 on 132 SMs, 112
     * half-K units of 128 x 256 in one wave instead of 112 whole-K tiles of 128 x 128, which ran the
     * GEMM at half cuBLAS's rate. Measured on 2 x H200, all-gather + GEMM (global M x N x K, split-K
     * against 128 x 128 tiles, same device call): 1024 x 3584 x 8192 81.3 against 107.3 µs,
     * 1024 x 3584 x 2048 40.5 against 43.2, 512 x 8192 x 8192 79.4 against 102.9, 2048 x 2048 x 4096
     * 61.6 against 71.4 (docs/benchmarks/fused-findings.md).
     */
    public int splitK(long m, long n, long k, int multiprocessors) {
        return splitsK() && 2 * FusedWorkspace.tiles(m, n, Gemm.TILE_N) <= multiprocessors && k >= MIN_SPLIT_K ? 2 : 1;
    }

    /**
     * The tile widths this operation's kernels come in: {@link Gemm#TILE_N}, for all-gather also
     * {@link Gemm#NARROW_TILE_N}, for all-scatter also {@link Gemm#MID_TILE_N}.
     */
    public List<Integer> tileWidths() {
        return switch (this) {
            case ALL_GATHER -> List.of(Gemm.TILE_N, Gemm.NARROW_TILE_N);
            case ALL_SCATTER -> List.of(Gemm.TILE_N, Gemm.MID_TILE_N);
            default -> List.of(Gemm.TILE_N);
        };
    }

    /** {@link #tileWidths()} on {@code mainloop}: the portable kernels have 128 x {@value Gemm#TILE_N} tiles only. */
    public List<Integer> tileWidths(GemmMainloop mainloop) {
        return portable(mainloop) ? List.of(Gemm.TILE_N) : tileWidths();
    }

    /**
     * The tile width for an M x N problem (the kernel's N) on a GPU with {@code multiprocessors}
     * SMs, without split-K ({@link #splitK} takes 128 x 256 tiles). All-gather takes 128 x 128
     * tiles when 128 x 256 tiles would not fill half of the SMs (a small M with one short wave:
     * twice the tiles keep twice the SMs computing).
     * All-scatter takes the width with the fewest waves times columns, a tile's time being
     * proportional to its width: at 8192 x 2304 (Iris's default layer at TP = 2) 128 x 256 tiles
     * make 4.4 waves on 132 SMs, paid as 5, and 128 x 192 tiles 5.8, paid as 6 of three quarters
     * the length (ties keep 256). Everything else takes 128 x 256.
     */
    public int tileN(long m, long n, int multiprocessors) {
        return switch (this) {
            case ALL_GATHER -> 2 * FusedWorkspace.tiles(m, n, Gemm.TILE_N) <= multiprocessors ? Gemm.NARROW_TILE_N
                    : Gemm.TILE_N;
            case ALL_SCATTER -> waveColumns(m, n, Gemm.MID_TILE_N, multiprocessors)
                    < waveColumns(m, n, Gemm.TILE_N, multiprocessors) ? Gemm.MID_TILE_N : Gemm.TILE_N;
            default -> Gemm.TILE_N;
        };
    }

    /** Waves of tileN-wide tiles on that many SMs, times tileN: the time they take, in tile columns. */
    private static long waveColumns(long m, long n, int tileN, int multiprocessors) {
        long tiles = FusedWorkspace.tiles(m, n, tileN);
        return (tiles + multiprocessors - 1) / multiprocessors * tileN;
    }

    /**
     * The kernel's name, e.g. {@code iris_gemm_all_scatter_epilogue_bf16_nk_traced}: the variant
     * as its source names it ({@link FusedVariant#kernelName()}), {@code _n128} for 128 x 128
     * tiles, the input type, B's layout, and {@code _traced} for the kernel that records the tile
     * timeline.
     */
    public String kernelName(FusedVariant variant, DType in, GemmLayout layout, int tileN, boolean traced) {
        if (variant == null || !kernelVariants().contains(variant)) {
            throw new IllegalArgumentException(title + " has no kernel of variant " + variant + "; its kernels are " + kernelVariants());
        }
        if (!tileWidths().contains(tileN)) {
            throw new IllegalArgumentException(title + " kernels have tiles " + tileWidths() + " columns wide, not " + tileN);
        }
        String named = this == ALL_GATHER ? "" : "_" + variant.kernelName();  // all-gather has one variant
        return stem() + named + (tileN == Gemm.TILE_N ? "" : "_n" + tileN) + "_" + inputName(in) + "_" + layout.kernelSuffix()
                + (traced ? "_traced" : "");
    }

    /** The portable kernel's name, e.g. {@code iris_gemm_all_reduce_portable_bf16_nk} ({@value #PORTABLE_MODULE}). */
    public String portableKernelName(DType in, GemmLayout layout) {
        return stem() + "_portable_" + inputName(in) + "_" + layout.kernelSuffix();
    }

    /** "iris_gemm_all_reduce", "iris_all_gather_gemm": the kernels' names up to the variant. */
    private String stem() {
        return this == ALL_GATHER ? "iris_all_gather_gemm" : "iris_gemm_" + id;
    }

    private String inputName(DType in) {
        if (in != DType.BF16 && in != DType.F16) {
            throw new IllegalArgumentException(title + " kernels take BF16 or F16, not " + in);
        }
        return in.name().toLowerCase(Locale.ROOT);
    }
}
