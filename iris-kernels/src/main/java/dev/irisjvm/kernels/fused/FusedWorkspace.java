package dev.irisjvm.kernels.fused;

import dev.irisjvm.core.DType;
import dev.irisjvm.core.SymTensor;
import dev.irisjvm.core.SymmetricHeap;
import dev.irisjvm.core.gpu.Stream;
import dev.irisjvm.core.internal.Memcpy;
import dev.irisjvm.core.internal.Resources;
import dev.irisjvm.kernels.gemm.Gemm;
import dev.irisjvm.runtime.abi.global.KernelAbi;
import java.util.ArrayList;
import java.util.List;

/**
 * The symmetric-heap buffers a fused operation keeps between calls, and their sizes as the kernels'
 * sources define them (the kernels find them in iris_fused_args' {@code flags} and {@code partials}) (in the kernel's terms: M x N output, K products per element; all-scatter's N
 * is this rank's columns, the reductions' K this rank's share):
 *
 * <table>
 * <caption>workspace per operation and variant</caption>
 * <tr><th>operation</th><th>buffer</th><th>size</th><th>source</th></tr>
 * <tr><td>all-scatter, SPARE_WARPS</td><td>handoff</td><td>tiles x 2 u64 (zeroed)</td><td>fused_common.cuh Handoff</td></tr>
 * <tr><td>all-reduce, reduce-scatter</td><td>ws</td><td>world x rowsPerOwner x N 16-bit elements (x 2 with
 *     SPARE_WARPS: local staging)</td><td>reduce_hooks.cuh</td></tr>
 * <tr><td></td><td>flags</td><td>world x tiles x 2 u64 (+ tiles x 2 handoff with SPARE_WARPS; zeroed)</td><td></td></tr>
 * <tr><td>all-gather</td><td>flags</td><td>tiles_m x ceil(K / {@value #PIECE_COLS}) + world + blocks u64 (+ tiles x 4
 *     with split-K; zeroed)</td><td>all_gather_hooks.cuh all_gather_flag_words, split_k_exchange.cuh
 *     split_exchange_words</td></tr>
 * <tr><td>all-gather, split-K 2</td><td>partials</td><td>tiles x 128 x tileN f32: each tile's two donated halves
 *     of 64 rows</td><td>split_k_exchange.cuh</td></tr>
 * </table>
 *
 * with tiles = ceil(M / 128) x ceil(N / 256), tiles_m = ceil(M / 128), rowsPerOwner = ceil(tiles_m /
 * world) x 128 and blocks the launch's grid ({@link FusedGemm#blocks()}: all-gather's push claims, one
 * per block). Allocation is collective (every rank allocates the same sizes in the same order).
 */
public final class FusedWorkspace implements AutoCloseable {
    /** Bytes of one trace record: {@code {start_ns, end_ns, what | sm << 32, kind | who << 8}} (iris/abi/fused.h). */
    public static final int TRACE_RECORD_BYTES = KernelAbi.IRIS_FUSED_TRACE_RECORD_BYTES;
    /**
     * Columns of A in one all-gather piece (iris/abi/fused.h): the unit a rank pushes into its peers
     * and flags as arrived.
     */
    public static final int PIECE_COLS = KernelAbi.IRIS_FUSED_PIECE_COLS;

    private final List<SymTensor> tensors;
    /** Zeroed before a call that must not see flags of earlier calls (see FusedGemm's epochs); null if none. */
    private final SymTensor flags;
    private final SymTensor partials;

    private FusedWorkspace(List<SymTensor> tensors, SymTensor flags, SymTensor partials) {
        this.tensors = tensors;
        this.flags = flags;
        this.partials = partials;
    }

    // ---- sizes -------------------------------------------------------------------------------------

    public static long tilesM(long m) {
        return (m + Gemm.TILE_M - 1) / Gemm.TILE_M;
    }

    public static long tilesN(long n) {
        return (n + Gemm.TILE_N - 1) / Gemm.TILE_N;
    }

    /** Output tiles of the kernel: ceil(M / 128) x ceil(N / 256), the tiles the workspace buffers count. */
    public static long tiles(long m, long n) {
        return tilesM(m) * tilesN(n);
    }

    /** Output tiles of a kernel with tiles of {@code tileN} columns ({@link FusedOp#tileN}): ceil(M / 128) x ceil(N / tileN). */
    public static long tiles(long m, long n, int tileN) {
        return tilesM(m) * ((n + tileN - 1) / tileN);
    }

    /** Rows of one owner's block in the reductions' ws: ceil(tiles_m / world) x 128. */
    public static long rowsPerOwner(long m, int world) {
        return (tilesM(m) + world - 1) / world * Gemm.TILE_M;
    }

    /** 16-bit elements of the reductions' ws: world (x 2 with SPARE_WARPS) x rowsPerOwner x N. */
    public static long reduceElements(FusedVariant variant, long m, long n, int world) {
        long slots = variant == FusedVariant.SPARE_WARPS ? 2L * world : world;
        return slots * rowsPerOwner(m, world) * n;
    }

    /** u64 flags of the reductions: world x tiles x 2 (+ tiles x 2 handoff flags with SPARE_WARPS). */
    public static long reduceFlags(FusedVariant variant, long m, long n, int world) {
        long sets = variant == FusedVariant.SPARE_WARPS ? world + 1L : world;
        return sets * tiles(m, n) * 2;
    }

    /** All-gather pieces in one tile row: ceil(K / {@value #PIECE_COLS}). */
    public static long piecesPerRow(long k) {
        return (k + PIECE_COLS - 1) / PIECE_COLS;
    }

    /**
     * The all-gather pieces a rank pushes: its tile rows (tiles_m / world when M is a multiple of
     * 128 x world; the most over ranks otherwise) x {@link #piecesPerRow}; none on one rank.
     */
    public static long gatherPieces(long m, long k, int world) {
        return world == 1 ? 0 : (tilesM(m) + world - 1) / world * piecesPerRow(k);
    }

    /**
     * u64 flags of the all-gather launched on {@code blocks} blocks: one per piece of every tile row
     * (ready), one per rank (clear), one per block (the claim on the pieces that block owns);
     * all_gather_flag_words.
     */
    public static long gatherFlags(long m, long k, int world, int blocks) {
        return tilesM(m) * piecesPerRow(k) + world + blocks;
    }

    /**
     * u64 flags of the all-gather on {@code blocks} blocks with {@code splitK} units per tile of
     * {@code tileN} columns: {@link #gatherFlags(long, long, int, int)}, then with split-K a flag
     * and a ticket per half of every tile (split_k_exchange.cuh split_exchange_words).
     */
    public static long gatherFlags(long m, long n, long k, int world, int blocks, int tileN, int splitK) {
        return gatherFlags(m, k, world, blocks) + (splitK == 2 ? tiles(m, n, tileN) * 2 * 2 : 0);
    }

    /** F32 elements of split-K's partials: 128 x tileN per tile (two donated halves of 64 rows), none without split-K. */
    public static long splitPartials(long m, long n, int tileN, int splitK) {
        return splitK == 2 ? tiles(m, n, tileN) * Gemm.TILE_M * tileN : 0;
    }

    /**
     * Trace records of one traced call of a kernel with tiles of {@code tileN} columns and {@code
     * splitK} units per tile: units x 6 (+ room for the all-gather's pieces); fused/trace.cuh.
     */
    public static long traceRecords(FusedOp op, long m, long n, long k, int world, int tileN, int splitK) {
        return tiles(m, n, tileN) * splitK * 6 + (op == FusedOp.ALL_GATHER ? gatherPieces(m, k, world) : 0);
    }

    /**
     * Bytes of the symmetric heap an instance of that operation, variant (not AUTO), shape, tile
     * width and split-K, launched on {@code blocks} blocks, keeps per rank.
     */
    public static long bytes(FusedOp op, FusedVariant variant, long m, long n, long k, int world, int tileN, int splitK,
                             int blocks) {
        return switch (op) {
            case ALL_SCATTER -> variant == FusedVariant.SPARE_WARPS ? tiles(m, n, tileN) * 2 * 8 : 0;
            case ALL_REDUCE, REDUCE_SCATTER -> reduceElements(variant, m, n, world) * 2 + reduceFlags(variant, m, n, world) * 8;
            case ALL_GATHER -> gatherFlags(m, n, k, world, blocks, tileN, splitK) * 8 + splitPartials(m, n, tileN, splitK) * 4;
        };
    }

    // ---- allocation --------------------------------------------------------------------------------

    /**
     * Collective: allocates (and zeroes the flags of) what {@code op} with {@code variant} needs for
     * that shape, tile width and split-K, launched on {@code blocks} blocks.
     */
    static FusedWorkspace allocate(SymmetricHeap heap, FusedOp op, FusedVariant variant, long m, long n, long k, int world,
                                   int tileN, int splitK, int blocks) {
        List<SymTensor> all = new ArrayList<>();
        try {
            return switch (op) {
                case ALL_SCATTER -> {
                    if (variant != FusedVariant.SPARE_WARPS) {
                        yield new FusedWorkspace(all, null, null);
                    }
                    SymTensor handoff = track(all, heap.zeros(DType.I64, tiles(m, n, tileN) * 2));
                    yield new FusedWorkspace(all, handoff, null);
                }
                case ALL_REDUCE, REDUCE_SCATTER -> {
                    SymTensor ws = track(all, heap.empty(DType.BF16, reduceElements(variant, m, n, world)));
                    SymTensor flags = track(all, heap.zeros(DType.I64, reduceFlags(variant, m, n, world)));
                    yield new FusedWorkspace(all, flags, ws);
                }
                case ALL_GATHER -> {
                    SymTensor flags = track(all, heap.zeros(DType.I64, gatherFlags(m, n, k, world, blocks, tileN, splitK)));
                    SymTensor partials = splitK == 2 ? track(all, heap.empty(DType.F32, splitPartials(m, n, tileN, splitK))) : null;
                    yield new FusedWorkspace(all, flags, partials);
                }
            };
        } catch (RuntimeException | Error e) {
            closeAll(all, e);
            throw e;
        }
    }

    private static SymTensor track(List<SymTensor> all, SymTensor t) {
        all.add(t);
        return t;
    }

    /** The flags: all-scatter's handoff (SPARE_WARPS), the reductions' and all-gather's; 0 if none. */
    long flagsAddress() {
        return flags == null ? 0 : flags.deviceAddress();
    }

    /** The partials: the reductions' ws, all-gather's split-K halves; 0 if none. */
    long partialsAddress() {
        return partials == null ? 0 : partials.deviceAddress();
    }

    /** Enqueues zeroing every flag and counter on {@code stream} (capturable). */
    void zeroFlags(Stream stream) {
        if (flags != null) {
            Memcpy.memset(flags.deviceAddress(), 0, flags.byteSize(), stream);
        }
    }

    /** Bytes held on this rank's heap. */
    public long bytes() {
        return tensors.stream().mapToLong(SymTensor::byteSize).sum();
    }

    /** Collective: frees the buffers (in reverse order of allocation). */
    @Override
    public void close() {
        closeAll(tensors, null);
    }

    /** Frees the live ones among {@code all} in reverse order; what fails is added to {@code failure}, or thrown. */
    private static void closeAll(List<SymTensor> all, Throwable failure) {
        List<AutoCloseable> parts = new ArrayList<>();
        for (int i = all.size() - 1; i >= 0; i--) {
            parts.add(all.get(i)::closeIfLive);
        }
        all.clear();
        if (failure != null) {
            Resources.closeAfter(failure, parts);
        } else {
            Resources.closeAll(parts);
        }
    }
}
