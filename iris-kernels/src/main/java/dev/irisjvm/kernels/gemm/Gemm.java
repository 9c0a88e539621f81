package dev.irisjvm.kernels.gemm;

import static dev.irisjvm.kernels.MainloopMaps.operandMapA;
import static dev.irisjvm.kernels.MainloopMaps.operandMapB;
import static dev.irisjvm.kernels.MainloopMaps.outputMapC;

import dev.irisjvm.core.DType;
import dev.irisjvm.core.IrisPlatformException;
import dev.irisjvm.core.SymTensor;
import dev.irisjvm.core.gpu.DeviceProperties;
import dev.irisjvm.core.gpu.Event;
import dev.irisjvm.core.gpu.Gpu;
import dev.irisjvm.core.gpu.LaunchShape;
import dev.irisjvm.core.gpu.Platform;
import dev.irisjvm.core.gpu.Stream;
import dev.irisjvm.core.internal.Kernel;
import dev.irisjvm.core.internal.KernelModule;
import dev.irisjvm.core.internal.Resources;
import dev.irisjvm.core.internal.TensorMap;
import dev.irisjvm.kernels.KernelLibrary;
import dev.irisjvm.kernels.TensorMapCache;
import dev.irisjvm.runtime.abi.global.KernelAbi;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The library's GEMM on one GPU: {@code C = alpha A B + beta C (+ bias)} in BF16 or F16 with F32
 * accumulation, enqueued on a stream. On Hopper a persistent warp-specialized wgmma kernel fed by
 * TMA runs it ({@code gemm.cu}); on any other NVIDIA GPU since Ampere, an mma.sync kernel fed by a
 * cp.async pipeline ({@code gemm_portable.cu}). Both take every layout pair, alpha and beta.
 * {@link GemmMainloop} says how the choice is made and how to force either. On either,
 * a problem of few rows with A stored M x K (a decode step, a small batch: it only streams B) runs
 * the skinny kernels of {@code gemm_portable.cu}, every alpha and beta included: up to 32 rows on
 * the portable mainloop; on Hopper up to 48 rows run swapped tiles ({@code C^T = B A^T}, C's rows on
 * wgmma's narrow side) where those run every tile whole in one wave, and up to 32 the skinny
 * kernels otherwise.
 *
 * <pre>{@code
 * try (Iris iris = Iris.init(); Gemm gemm = Gemm.create()) {
 *     SymmetricHeap heap = iris.heap();
 *     SymTensor x = heap.randn(DType.BF16, 4096, 8192);        // A: M x K
 *     SymTensor w = heap.randn(DType.BF16, 2048, 8192);        // B: N x K, a Linear layer's weight
 *     SymTensor b = heap.zeros(DType.BF16, 2048);              // bias: N
 *     SymTensor y = heap.empty(DType.BF16, 4096, 2048);        // C: M x N
 *     gemm.linear(x, w, b, y, iris.stream());                  // y = x w^T + b
 *
 *     SymTensor v = heap.randn(DType.BF16, 8192, 2048);        // B: K x N
 *     SymTensor z = heap.empty(DType.F32, 4096, 2048);         // F32 output
 *     gemm.matmul(x, v, GemmLayout.KN, z, iris.stream());      // z = x v
 *
 *     // A weight gradient accumulated in F32: dw += dy^T x, with dy [T, out] and x [T, in] as stored.
 *     SymTensor dy = heap.randn(DType.BF16, 4096, 2048);       // A: K x M (T x out)
 *     SymTensor dw = heap.zeros(DType.F32, 2048, 8192);        // C: M x N (out x in)
 *     gemm.matmul(dy, x, GemmLayouts.KM_KN, dw, 1f, 1f, iris.stream());
 *     iris.synchronize();
 *
 *     // Plain device memory, windows of larger matrices, a leading dimension of C: rows 0..1023
 *     // of x times w^T into columns 0..2047 of a 1024 x 4096 F32 buffer.
 *     try (DeviceMemory out = DeviceMemory.allocate(1024L * 4096 * 4)) {
 *         gemm.matmul(DeviceMatrix.of(x.tile(0, 0, 1024, 8192)), DeviceMatrix.of(w), GemmLayout.NK, 0,
 *                 new DeviceMatrix(out.address(), DType.F32, 1024, 2048, 4096), iris.stream());
 *         iris.synchronize();
 *     }
 * }
 * }</pre>
 *
 * <h2>Contract</h2>
 * <ul>
 * <li>{@code C[m][n] = alpha sum_k A(m, k) * B(k, n) + beta C[m][n] + bias[n]}, accumulated in F32
 *     and rounded once to C's dtype (to nearest, ties to even). A is M x K ({@link GemmALayout#MK})
 *     or K x M ({@link GemmALayout#KM}, read transposed), row-major; B is N x K ({@link
 *     GemmLayout#NK}, a PyTorch {@code Linear} weight) or K x N ({@link GemmLayout#KN}), row-major
 *     ({@link GemmLayouts} names the four pairs); C is M x N row-major with leading dimension ldc;
 *     the bias (optional) has N elements of C's dtype and is not scaled.</li>
 * <li>alpha and beta: finite; 1 and 0 unless given. beta = 0 never reads C, so C may hold anything
 *     (NaN included); otherwise C is read in its own dtype before it is overwritten, and {@code
 *     alpha A B + beta C} is formed in F32 before the bias is added and the one rounding.</li>
 * <li>dtypes: A and B both BF16 or both F16; C of the same type or F32. Sixteen kernels,
 *     {@code iris_gemm_<bf16|f16>[_km]_<nk|kn>_<in|f32>}.</li>
 * <li>Shapes: M, N, K >= 1; N, and every operand's contiguous dimension (K of an MK A or an NK B, M
 *     of a KM A), multiples of 8; every leading dimension at least its row and a multiple of 8
 *     elements; every pointer 16-byte aligned; C must not overlap A, B or the bias.
 *     Rows of C beyond M and columns beyond N (up to ldc) are not written. Edges need no padding:
 *     TMA reads out-of-range elements of A and B as zeros. Rows that start 128-byte aligned (a leading
 *     dimension that is a multiple of 64 two-byte elements) load fastest: on an H200, 4096 x 5120 x
 *     3000 with an N x K B (rows 6000 bytes apart) ran at 0.93 x cuBLAS, against 0.98 x at K = 3072.</li>
 * <li>NVIDIA only. {@link GemmMainloop#HOPPER}: compute capability 9.0 and {@value #SHARED_BYTES} bytes of shared
 *     memory per block; {@link GemmMainloop#PORTABLE}: compute capability 8.0 or later and 96 KiB.
 *     Elsewhere {@link #create} throws {@link IrisPlatformException} (on HIP the modules are shipped
 *     as {@code gemm.unavailable-hip} and {@code gemm_portable.unavailable-hip}).</li>
 * <li>Every call only enqueues work on the given stream: no host synchronization, no device
 *     allocation. The TMA descriptors a call needs are built on the host the first time a given
 *     (address, shape) is seen and cached, so a call may be captured into a CUDA graph and the graph
 *     replayed: it reads whatever the addresses hold at replay time.</li>
 * <li>Arguments are checked before anything is launched; a failed check throws {@link
 *     IllegalArgumentException} naming the rank, the operand and what was expected, and leaves the
 *     instance usable. Calls on one instance are serialized (they share the kernels' argument
 *     struct, {@code iris_gemm_args} of iris/abi/gemm.h).</li>
 * </ul>
 *
 * <p>Launch (Hopper): a persistent grid of at most one block per SM, {@value #THREADS} threads and
 * {@value #SHARED_BYTES} bytes of dynamic shared memory each, taking {@value #TILE_M} x {@value
 * #TILE_N} output tiles (for M at most {@value #SHORT_TILE_M}, {@value #SHORT_TILE_M} x {@value
 * #SHORT_TILE_N} tiles on {@value #SHORT_THREADS} threads, or {@value #SHORT_TILE_M} x {@value
 * #THIN_TILE_N} on {@value #THREADS}, whose two consumer warpgroups take every other k-block: no
 * wgmma on rows past C, and more tiles to spread B over; for larger M, 128 x 192, 128 x 128 or those
 * 64-row tiles where the cost model finds that the wide ones would leave SMs idle or a wave mostly
 * empty) in grouped order ({@link Options#groupM()} tile rows per group, for L2 reuse). Where the
 * tiles fill their waves they run whole, one block per tile at a time; where K is not a multiple
 * of 64 (rows of A off the 128-byte swizzle row), the 128-row tiles in clusters of two blocks on
 * vertically adjacent tiles that load half of B each into both (TMA multicast: half the L2
 * requests for B; an even grid, the second tile of a pair past C where the tile rows are odd,
 * computed and not stored), and 64 x 128 tiles likewise over a K of at most 17 k-blocks; where they
 * would leave SMs idle (few tiles, as at a small M, or a mostly empty last
 * wave) tiles are shared out by K: split-K (each tile in equal slices, one block each) or stream-K
 * (every block an equal run of k-blocks across tiles), whichever a cost model fitted on H200
 * timings estimates faster.
 * Each block adds its F32 partial and the last to finish a tile adds them all in a fixed order, so
 * results do not change from run to run, on the workspace {@link Options#streamK()} allocates. Two
 * such calls of one instance on different streams must not overlap in time. Every layout runs the
 * same TMA and wgmma pipeline: a KM A is loaded in 64 x 64 boxes with M contiguous and fed to wgmma
 * M-major, as a KN B is N-major.
 * Portable: one block per tile, in the same grouped order: of 256 threads and 96 KiB per 256 x 128
 * tile where those tiles make at least one full wave of the SMs, else of 128 threads and 64 KiB per
 * 128 x 128 tile (the rule, and the H200 timings behind it, are in {@code PortableGemm}); a KM A is
 * copied to shared memory M-major and its fragments read with ldmatrix.trans, as a KN B's are.
 * Skinny (at most 32 rows; on Hopper only where swapped tiles would not run whole in one wave): one
 * block of 128 threads and 72 KiB per band of 16 rows, 128-column tile and slice of K,
 * with as many slices as make up to two blocks per SM (each slice at least 512 of K); the last
 * block of a band's tile to finish adds the slices' F32 partials in slice order, on the same
 * workspace ({@link #schedule} says the split).
 */
public final class Gemm implements AutoCloseable {
    /** The kernel module ({@code gemm.cu}). */
    public static final String MODULE = "gemm";
    /** What the kernels need, as gemm.cu's IRIS_NVIDIA_ONLY says it. */
    public static final String REQUIREMENT = "sm_90a (wgmma, TMA)";
    /** Output rows per tile (iris/abi/gemm.h, as every constant below that the kernels share). */
    public static final int TILE_M = KernelAbi.IRIS_GEMM_TILE_M;
    /**
     * Output rows per tile of the short kernels, which run every problem of at most this many rows
     * and others where taller tiles would leave SMs idle: {@value #SHORT_TILE_M} x {@value
     * #SHORT_TILE_N} ({@link GemmTile#SHORT}, one consumer warpgroup, {@value #SHORT_THREADS}
     * threads) and {@value #SHORT_TILE_M} x {@value #THIN_TILE_N} ({@link GemmTile#SHORT_THIN}, two
     * on every other k-block, {@value #THREADS} threads).
     */
    public static final int SHORT_TILE_M = KernelAbi.IRIS_GEMM_SHORT_TILE_M;
    /** Output columns per tile of the short kernels: narrow, so that a few rows make twice the tiles. */
    public static final int SHORT_TILE_N = KernelAbi.IRIS_GEMM_SHORT_TILE_N;
    /** Output columns per tile. */
    public static final int TILE_N = KernelAbi.IRIS_GEMM_TILE_N;
    /**
     * Output columns per tile of the 128 x 128 kernels (iris/gemm/config.cuh TileN), GEMM's and the
     * fused ones', for shapes whose 128 x 256 tiles would leave most SMs idle ({@code FusedOp.tileN}).
     */
    public static final int NARROW_TILE_N = KernelAbi.IRIS_GEMM_NARROW_TILE_N;
    /**
     * Output columns per tile of the 128 x 192 kernels (iris/gemm/config.cuh TileN), GEMM's and the
     * fused all-scatter's, for shapes whose last wave of 128 x 256 tiles would be mostly empty ({@code
     * FusedOp.tileN}).
     */
    public static final int MID_TILE_N = KernelAbi.IRIS_GEMM_MID_TILE_N;
    /**
     * Output columns per tile of the 64 x 64 kernels ({@link GemmTile#SHORT_THIN}, GEMM's only), for
     * few rows, where even 64 x 128 tiles would leave most SMs idle.
     */
    public static final int THIN_TILE_N = KernelAbi.IRIS_GEMM_THIN_TILE_N;
    /** K per pipeline stage (one 128-byte swizzle row of 16-bit elements). */
    public static final int TILE_K = KernelAbi.IRIS_GEMM_TILE_K;
    /** Threads per block: a producer warpgroup and two consumer warpgroups. */
    public static final int THREADS = KernelAbi.IRIS_GEMM_THREADS;
    /** Threads per block of the short tiles: a producer warpgroup and one consumer warpgroup. */
    public static final int SHORT_THREADS = KernelAbi.IRIS_GEMM_SHORT_THREADS;
    /**
     * Dynamic shared memory per block, in bytes: what the widest tile's pipeline and the buffers of
     * its TMA stores of C need, so every kernel of the GEMM launches with it, and so may yours.
     */
    public static final int SHARED_BYTES = KernelAbi.IRIS_GEMM_SHARED_BYTES;
    /**
     * Dynamic shared memory per block, in bytes, of a kernel whose hooks take the epilogue's chunks
     * (the fused kernels, the MoE expert GEMM; a kernel of yours with {@code iris::gemm::run(args,
     * hooks)}): the widest pipeline and its padded chunks, which leaves 16 KiB of the block's 227
     * for static shared memory of its own.
     */
    public static final int HOOKS_SHARED_BYTES = KernelAbi.IRIS_GEMM_HOOKS_SHARED_BYTES;
    /** Shared-memory swizzle of every tensor map, in bytes. */
    public static final int SWIZZLE_BYTES = KernelAbi.IRIS_GEMM_SWIZZLE_BYTES;
    /** Tile rows per group of the grouped tile order, unless {@link Options} say otherwise. */
    public static final int DEFAULT_GROUP_M = 8;

    /** Tensor maps kept per instance (least recently used ones are dropped). */
    static final int MAP_CACHE_ENTRIES = 256;
    /** Shapes whose schedule a Gemm keeps. */
    private static final int PLAN_CACHE_ENTRIES = 256;

    private static final DType[] INPUTS = {DType.BF16, DType.F16};

    /**
     * Tuning of an instance.
     *
     * @param groupM   tile rows per group of the grouped tile order (>= 1): a group's tiles are walked
     *                 column by column, so that the blocks running together share rows of A and
     *                 columns of B in L2
     * @param mainloop which kernels run ({@link GemmMainloop#AUTO}: {@value GemmMainloop#VARIABLE},
     *                 else by GPU)
     * @param streamK  whether shapes whose tiles leave SMs idle share tiles out by K (Hopper
     *                 mainloop; see {@link Gemm}'s launch notes); it costs a workspace of two F32
     *                 tiles per SM, allocated by {@link #create}. Off: every tile runs whole.
     * @param tune     whether the first call of each shape (M, N, K, layouts, dtypes) on this
     *                 instance times the schedules it can take (whole tiles and the cost model's
     *                 best few of split-K and stream-K) on its own operands and keeps the fastest
     *                 for later calls; off, the cost model decides. Only calls with beta = 0 on a
     *                 stream that is not being captured are timed (they run a dozen times and wait
     *                 for the GPU once); needs streamK.
     */
    public record Options(int groupM, GemmMainloop mainloop, boolean streamK, boolean tune) {
        public Options {
            GemmChecks.groupM(groupM);
            if (mainloop == null) {
                throw new IllegalArgumentException(GemmChecks.who() + ": mainloop must not be null (GemmMainloop.AUTO chooses by GPU)");
            }
        }

        public static Options defaults() {
            return new Options(DEFAULT_GROUP_M, GemmMainloop.AUTO, true, false);
        }

        public Options withGroupM(int rows) {
            return new Options(rows, mainloop, streamK, tune);
        }

        public Options withMainloop(GemmMainloop choice) {
            return new Options(groupM, choice, streamK, tune);
        }

        public Options withStreamK(boolean on) {
            return new Options(groupM, mainloop, on, tune);
        }

        public Options withTune(boolean on) {
            return new Options(groupM, mainloop, streamK, on);
        }
    }

    private final Options options;
    private final DeviceProperties device;
    private final KernelLibrary library;
    /** What runs: HOPPER or PORTABLE, never AUTO. */
    private final GemmMainloop mainloop;
    /** The portable kernels, or null where the Hopper ones run. */
    private final PortableGemm portable;
    /** The kernels of at most {@link SkinnyGemm#MAX_M} rows, on either mainloop. */
    private final SkinnyGemm skinny;
    /** [tile: GemmTile][input: bf16, f16][A: mk, km][B: nk, kn][output: input type, f32] */
    private final Kernel[][][][][] kernels =
            new Kernel[GemmTile.values().length][INPUTS.length][GemmALayout.values().length][GemmLayout.values().length][2];
    private final GemmArgs args = new GemmArgs();
    /** Stream-K's and the skinny kernels' partials and counters, or null (stream-K off). */
    private final StreamKWorkspace workspace;
    /** The kept choices of {@link Options#tune()}, or null. */
    private final GemmTuner tuner;
    private final TensorMapCache maps = new TensorMapCache(MAP_CACHE_ENTRIES, SWIZZLE_BYTES);
    /** The schedule of each recent shape. */
    private final PlanCache plans;
    /** The tile every call runs whole ({@link #forceTile}), or null: the rule's. */
    private GemmTile forcedTile;
    private final AtomicBoolean closed = new AtomicBoolean();

    private Gemm(Options options, DeviceProperties device, KernelLibrary library, GemmMainloop mainloop) {
        this.options = options;
        this.device = device;
        this.library = library;
        this.mainloop = mainloop;
        this.plans = new PlanCache(PLAN_CACHE_ENTRIES, device.multiprocessorCount());
        KernelModule portableModule = library.module(PortableGemm.MODULE);
        this.skinny = new SkinnyGemm(portableModule);
        this.workspace = options.streamK() ? StreamKWorkspace.allocate(device.multiprocessorCount()) : null;
        if (mainloop == GemmMainloop.PORTABLE) {
            this.portable = new PortableGemm(portableModule, device.multiprocessorCount());
            this.tuner = null;
            return;
        }
        this.portable = null;
        KernelModule module = library.module(MODULE);
        for (GemmTile tile : GemmTile.values()) {
            for (int i = 0; i < INPUTS.length; i++) {
                for (GemmALayout aLayout : tile.swapped() ? new GemmALayout[] {GemmALayout.MK} : GemmALayout.values()) {
                    for (GemmLayout layout : GemmLayout.values()) {
                        for (int o = 0; o < 2; o++) {
                            Kernel k = module.kernel(GemmProblem.kernelName(tile, INPUTS[i], new GemmLayouts(aLayout, layout),
                                    o == 0 ? INPUTS[i] : DType.F32));
                            k.setMaxDynamicSharedBytes(SHARED_BYTES);
                            kernels[tile.ordinal()][i][aLayout.ordinal()][layout.ordinal()][o] = k;
                        }
                    }
                }
            }
        }
        this.tuner = options.streamK() && options.tune() ? new GemmTuner() : null;
    }

    /** {@link #create(Options)} with {@link Options#defaults()}. */
    public static Gemm create() {
        return create(Options.defaults());
    }

    /**
     * Loads the kernels of the {@link GemmMainloop} that {@code options} (then {@value
     * GemmMainloop#VARIABLE}, then the GPU) choose into the calling thread's current device ({@code
     * Iris.init} makes the rank's GPU current for the thread that called it). Throws {@link
     * IrisPlatformException} on HIP, or where the GPU cannot run the chosen mainloop (the Hopper one
     * needs compute capability 9.0, the portable one 8.0 or later), and {@link
     * IllegalArgumentException} when {@value GemmMainloop#VARIABLE} holds something else than auto,
     * hopper or portable.
     */
    public static Gemm create(Options options) {
        if (options == null) {
            throw new IllegalArgumentException(GemmChecks.who() + ": options must not be null");
        }
        Platform.require(Platform.CUDA, MODULE, REQUIREMENT + " or " + PortableGemm.REQUIREMENT);
        DeviceProperties device = Gpu.properties(Gpu.currentDevice());
        GemmMainloop mainloop = options.mainloop().resolve(device);
        if (mainloop == GemmMainloop.HOPPER) {
            GemmChecks.device(Platform.current(), device);
        } else {
            PortableGemm.device(Platform.current(), device);
        }
        KernelLibrary library = KernelLibrary.forClasspath();
        try {
            return new Gemm(options, device, library, mainloop);
        } catch (RuntimeException | Error e) {
            library.close();
            throw e;
        }
    }

    // ---- facts ---------------------------------------------------------------------------------

    public Options options() {
        return options;
    }

    /** The mainloop that runs: {@link GemmMainloop#HOPPER} or {@link GemmMainloop#PORTABLE}, never AUTO. */
    public GemmMainloop mainloop() {
        return mainloop;
    }

    /** The GPU the kernels were loaded for. */
    public DeviceProperties device() {
        return device;
    }

    /** Tensor maps cached now (at most {@value #MAP_CACHE_ENTRIES}). */
    public synchronized int cachedTensorMaps() {
        return maps.size();
    }

    // ---- symmetric tensors -------------------------------------------------------------------------

    /** {@code c = a b}: see {@link #matmul(SymTensor, SymTensor, GemmLayout, SymTensor, SymTensor, Stream)}. */
    public void matmul(SymTensor a, SymTensor b, GemmLayout layout, SymTensor c, Stream stream) {
        matmul(a, b, layout, null, c, stream);
    }

    /**
     * {@code c = a b + bias} on this rank's copies of symmetric tensors: {@code a} [M, K]; {@code b}
     * [N, K] for {@link GemmLayout#NK} or [K, N] for {@link GemmLayout#KN}; {@code bias} [N] of
     * {@code c}'s dtype, or null; {@code c} [M, N].
     */
    public void matmul(SymTensor a, SymTensor b, GemmLayout layout, SymTensor bias, SymTensor c, Stream stream) {
        matmul(a, b, new GemmLayouts(GemmALayout.MK, layout), bias, c, 1f, 0f, stream);
    }

    /** {@code c = alpha a b + beta c}: see {@link #matmul(SymTensor, SymTensor, GemmLayouts, SymTensor, SymTensor, float, float, Stream)}. */
    public void matmul(SymTensor a, SymTensor b, GemmLayouts layouts, SymTensor c, float alpha, float beta, Stream stream) {
        matmul(a, b, layouts, null, c, alpha, beta, stream);
    }

    /**
     * {@code c = alpha a b + beta c + bias} on this rank's copies of symmetric tensors: {@code a}
     * [M, K] for {@link GemmALayout#MK} or [K, M] for {@link GemmALayout#KM}; {@code b} [N, K] for
     * {@link GemmLayout#NK} or [K, N] for {@link GemmLayout#KN}; {@code bias} [N] of {@code c}'s
     * dtype, or null; {@code c} [M, N], read only where {@code beta != 0}.
     *
     * <pre>{@code
     * gemm.matmul(dy, x, GemmLayouts.KM_KN, null, dw, 1f, 1f, stream);   // dw += dy^T x
     * }</pre>
     */
    public void matmul(SymTensor a, SymTensor b, GemmLayouts layouts, SymTensor bias, SymTensor c, float alpha, float beta,
                       Stream stream) {
        GemmChecks.layouts(layouts);
        GemmChecks.tensors(operand("A", a), layouts.a(), operand("B", b), layouts.b(), bias == null ? null : operand("bias", bias),
                operand("C", c));
        launch(new GemmProblem(DeviceMatrix.of(a), layouts.a(), DeviceMatrix.of(b), layouts.b(),
                bias == null ? 0 : bias.deviceAddress(), DeviceMatrix.of(c), alpha, beta), stream);
    }

    /**
     * A linear layer, {@code y = x weight^T + bias}: {@code x} [M, K], {@code weight} [N, K] (PyTorch's
     * {@code Linear.weight}), {@code bias} [N] or null, {@code y} [M, N].
     */
    public void linear(SymTensor x, SymTensor weight, SymTensor bias, SymTensor y, Stream stream) {
        matmul(x, weight, GemmLayout.NK, bias, y, stream);
    }

    private static GemmChecks.Operand operand(String name, SymTensor t) {
        return t == null ? null : new GemmChecks.Operand(name, t.dtype(), t.shape(), t.isLive(), t.toString());
    }

    // ---- device matrices ---------------------------------------------------------------------------

    /** {@code c = a b + bias} on device matrices; {@code bias} is a device address of N elements of C's dtype, or 0. */
    public void matmul(DeviceMatrix a, DeviceMatrix b, GemmLayout layout, long bias, DeviceMatrix c, Stream stream) {
        launch(new GemmProblem(a, b, layout, bias, c), stream);
    }

    /**
     * {@code c = alpha a b + beta c + bias} on device matrices, A and B stored as {@code layouts}
     * say; {@code bias} is a device address of N elements of C's dtype, or 0.
     */
    public void matmul(DeviceMatrix a, DeviceMatrix b, GemmLayouts layouts, long bias, DeviceMatrix c, float alpha, float beta,
                       Stream stream) {
        launch(new GemmProblem(a, b, layouts, bias, c, alpha, beta), stream);
    }

    /** Enqueues the GEMM of a checked problem on {@code stream}. */
    public synchronized void launch(GemmProblem p, Stream stream) {
        ensureOpen();
        if (p == null) {
            throw new IllegalArgumentException(GemmChecks.who() + ": problem must not be null");
        }
        if (stream == null) {
            throw new IllegalArgumentException(GemmChecks.who() + ": stream must not be null");
        }
        if (forcedTile == null && runsSkinny(p)) {
            skinny.launch(p, skinnySplit(p.m(), p.n(), p.k()), workspace, stream);
            return;
        }
        if (portable != null) {
            portable.launch(p, stream, options.groupM());
            return;
        }
        StreamKPlan plan = plan(p);
        if (tuner != null) {
            plan = tuner.plan(p, () -> !p.readsC() && !stream.isCapturing(), plan,
                    () -> GemmTuner.candidates(p.m(), p.n(), kBlocks(p.k()), device.multiprocessorCount(), StreamKPlan.pairsPay(p.k())), c -> medianUs(p, c, stream));
        }
        run(p, plan, stream);
    }

    /**
     * Launches {@code p} with {@code plan}: its tile's kernel and tensor maps (a swapped tile's
     * product takes B as its A and A as its B), its grid, its share of the workspace.
     */
    private void run(GemmProblem p, StreamKPlan plan, Stream stream) {
        GemmTile tile = plan.tile();
        Kernel kernel = kernel(p, tile);
        if (tile.swapped()) {
            args.maps(swappedMapA(p, tile), swappedMapB(p, tile));
        } else {
            args.maps(tensorMapA(p, tile), tensorMapB(p, tile));
            args.outputMap(tensorMapC(p));
        }
        if (plan.sharedTiles() == 0) {
            kernel.launch(launchShape(plan), stream, args.operands(p, options.groupM(), tile.swapped()), false);
            return;
        }
        workspace.prepare(stream);
        kernel.launch(launchShape(plan), stream,
                args.operands(p, options.groupM(), plan, workspace.partialsAddress(), workspace.countersAddress()), false);
    }

    /** The median of {@link GemmTuner#TIMED_CALLS} timed calls of {@code p} with {@code plan}, after one untimed, in µs. */
    private double medianUs(GemmProblem p, StreamKPlan plan, Stream stream) {
        run(p, plan, stream);
        float[] us = new float[GemmTuner.TIMED_CALLS];
        try (Event start = Event.timed(); Event end = Event.timed()) {
            for (int i = 0; i < us.length; i++) {
                start.record(stream);
                run(p, plan, stream);
                end.record(stream);
                us[i] = end.elapsedSince(start) * 1000f;
            }
        }
        Arrays.sort(us);
        return us[us.length / 2];
    }

    /** How the skinny kernels split an M x N x K problem here: slices of K only where there is a workspace. */
    private SkinnyGemm.Split skinnySplit(int m, int n, int k) {
        int most = skinny.mostBlocks(device.multiprocessorCount());
        return workspace == null ? SkinnyGemm.split(m, n, k, most, 0, 0)
                : SkinnyGemm.split(m, n, k, most, workspace.partialFloats(), workspace.counters());
    }

    /** Runs {@code p} (at most {@link SkinnyGemm#MAX_M} rows, A stored M x K) on the skinny kernels in {@code slices} even slices of K (tests). */
    synchronized void launchSkinny(GemmProblem p, int slices, Stream stream) {
        ensureOpen();
        if (!SkinnyGemm.takes(p)) {
            throw new IllegalArgumentException(GemmChecks.who() + ": the skinny kernels take at most " + SkinnyGemm.MAX_M
                    + " rows with A stored M x K; this problem is " + p);
        }
        SkinnyGemm.Split split = SkinnyGemm.evenly(p.m(), p.n(), p.k(), slices);
        if (!SkinnyGemm.fits(split, workspace == null ? 0 : workspace.partialFloats(), workspace == null ? 0 : workspace.counters())) {
            throw new IllegalStateException(GemmChecks.who() + ": " + split.describe() + " does not fit this Gemm's workspace");
        }
        skinny.launch(p, split, workspace, stream);
    }

    /**
     * Makes every later call on the portable mainloop take {@code tile}, whatever the shape, or the
     * rule again for null (tests: each tile on every shape against the reference).
     */
    synchronized void forcePortableTile(PortableGemm.Tile tile) {
        ensureOpen();
        if (portable == null) {
            throw new IllegalStateException(GemmChecks.who() + ": only the portable mainloop has a tile to force; this Gemm runs the "
                    + mainloop + " one");
        }
        portable.force(tile);
    }

    /**
     * Makes every later call run whole {@code tile}s of the Hopper kernels, whatever the shape (those
     * of at most {@link SkinnyGemm#MAX_M} rows too, which the skinny kernels take otherwise), or the
     * rule again for null (tests: each tile's kernels on every shape against the reference).
     */
    synchronized void forceTile(GemmTile tile) {
        ensureOpen();
        if (portable != null) {
            throw new IllegalStateException(GemmChecks.who() + ": only the Hopper mainloop has a GemmTile to force; this Gemm runs the "
                    + mainloop + " one");
        }
        forcedTile = tile;
    }

    /** Shapes whose schedule {@link Options#tune()} has chosen on this instance (0 without it). */
    synchronized int tunedShapes() {
        return tuner == null ? 0 : tuner.shapes();
    }

    /** K-blocks of {@value #TILE_K} in a K. */
    static int kBlocks(int k) {
        return (int) GemmChecks.ceilDiv(k, TILE_K);
    }

    /**
     * How a call of an {@code m} x {@code n} x {@code k} problem spreads over this GPU, in words for
     * logs and reports: "whole tiles on 64 blocks", "split-K on 128 blocks, 32 tiles in 4 slices of
     * K" or "stream-K on 132 blocks, 16 of 16 tiles shared by K", followed by the tile where it is
     * not 128 x 256 (", 128 x 192 tiles", ", 128 x 128 tiles", ", 64 x 128 tiles", ", 64 x 64 tiles",
     * ", in pairs", ", 64 x 128 tiles in pairs") (portable
     * mainloop: "portable, whole 256 x 128 tiles" or "portable, whole 128 x 128 tiles"); up to 48
     * rows (A stored M x K) on the Hopper mainloop swapped tiles ("whole tiles on 64 blocks, 32 x 64
     * swapped tiles"), but up to 32 rows (all of them on the portable mainloop) where the swapped
     * tile would not run whole in one wave "skinny 16 x 128 tiles, 32 tiles in 12 slices of K on 384
     * blocks" (past 16 rows "skinny 16 x 128 tiles in 2 bands of rows, ..."); with
     * {@link Options#tune()}, the
     * choice kept for the shape once a call has timed it, else what the rule chooses. Nothing is
     * launched.
     */
    public synchronized String schedule(int m, int n, int k) {
        if (forcedTile == null && runsSkinny(m, n, k)) {
            return skinnySplit(m, n, k).describe();
        }
        if (portable != null) {
            return "portable, whole " + portable.tile(m, n).shape() + " tiles";
        }
        StreamKPlan kept = tuner == null ? null : tuner.kept(m, n, k);
        StreamKPlan plan = kept != null ? kept : plan(m, n, k, GemmALayout.MK);
        return plan.describe(plan.units(m, n)) + (kept != null ? " (tuned)" : "");
    }

    /** How a call of {@code p} spreads over this GPU: whole tiles, or K shared out where there is a workspace. */
    StreamKPlan plan(GemmProblem p) {
        return plan(p.m(), p.n(), p.k(), p.aLayout());
    }

    /** Whether the rule runs {@code p} on the skinny kernels: A stored M x K, and {@link #runsSkinny(int, int, int)}. */
    private boolean runsSkinny(GemmProblem p) {
        return p.aLayout() == GemmALayout.MK && runsSkinny(p.m(), p.n(), p.k());
    }

    /**
     * Whether the rule runs an {@code m} x {@code n} x {@code k} problem (A stored M x K) on the
     * skinny kernels: all they take on the portable mainloop; on the Hopper one where the swapped
     * tile would not run every tile whole in one wave ({@link #skinnyOverSwapped}).
     */
    boolean runsSkinny(int m, int n, int k) {
        if (!SkinnyGemm.takes(m)) {
            return false;
        }
        return portable != null || skinnyOverSwapped(plan(m, n, k, GemmALayout.MK), m, n);
    }

    /**
     * Whether the skinny kernels run {@code m} (at most {@link SkinnyGemm#MAX_M}) rows rather than the
     * swapped tile's {@code plan}: unless that plan runs every tile whole in one wave. A swapped plan
     * that splits K, or takes a second wave, was slower than the skinny kernels on each of the seven
     * such shapes GemmPlanTimes timed at {@code cf0492f} (16 x 1536 x 4096: 8.4 µs skinny, 10.3
     * swapped in 3 slices of K; 32 x 16384 x 2048: 18.7 against 20.7 on 256 tiles), and faster or
     * level on the four that run in one wave (32 x 4096 x 1024: 6.3 µs swapped; 16 x 7168 x 4096:
     * 18.3 against 19.2 skinny).
     */
    static boolean skinnyOverSwapped(StreamKPlan plan, int m, int n) {
        return !plan.tile().swapped() || plan.sharedTiles() != 0 || plan.units(m, n) > plan.clusters();
    }

    /** The plan of a call, with A stored as {@code aLayout} (the swapped tiles take M x K only). */
    private synchronized StreamKPlan plan(int m, int n, int k, GemmALayout aLayout) {
        int sms = device.multiprocessorCount();
        if (forcedTile != null) {
            return StreamKPlan.whole(forcedTile, m, n, sms);
        }
        GemmTile swapped = aLayout == GemmALayout.MK ? GemmTile.swappedFor(m) : null;
        if (workspace == null) {
            StreamKPlan whole = swapped != null ? StreamKPlan.whole(swapped, m, n, sms) : StreamKPlan.whole(m, n, sms);
            return StreamKPlan.pairsPay(k) ? StreamKPlan.paired(whole, m, n, sms) : whole;  // paired leaves swapped tiles alone
        }
        return plans.choose(m, n, kBlocks(k), swapped, StreamKPlan.pairsPay(k));
    }

    /**
     * The rule's plan of a call with A stored M x K on {@code multiprocessors} SMs, stream-K on or
     * off; of at most {@link SkinnyGemm#MAX_M} rows, the swapped one that {@link #skinnyOverSwapped}
     * weighs against the skinny kernels.
     */
    static StreamKPlan plan(int m, int n, int k, int multiprocessors, boolean streamK) {
        return streamK ? StreamKPlan.rule(m, n, kBlocks(k), multiprocessors, GemmTile.swappedFor(m), StreamKPlan.pairsPay(k))
                : StreamKPlan.whole(m, n, multiprocessors);
    }

    /**
     * Runs {@code p} with {@code plan}, whatever the rule or the tuner would choose (tests: every
     * schedule against the reference; {@code GemmPlanTimes}: every schedule timed, to fit {@link ScheduleCost}).
     */
    synchronized void launch(GemmProblem p, StreamKPlan plan, Stream stream) {
        ensureOpen();
        if (portable != null) {
            throw new IllegalStateException(GemmChecks.who() + ": the portable mainloop has one schedule (whole tiles); plan "
                    + plan + " is for the Hopper one");
        }
        if (plan.sharedTiles() > 0 && workspace == null) {
            throw new IllegalStateException(GemmChecks.who() + ": plan " + plan + " shares tiles, but this Gemm has no stream-K workspace");
        }
        run(p, plan, stream);
    }

    // ---- parts, for kernels that reuse the GEMM's mainloop -----------------------------------------

    /**
     * A's tensor map for {@code tile}'s kernel: for MK, K elements per row and M rows, boxes of the
     * tile's rows (one CTA's share where a row of a cluster's block shares A) x 64 elements; for KM,
     * M elements per row and K rows, boxes of 64 rows (one CTA's share of them where a row of 64 x 64
     * tiles shares A) x 64 elements. 128-byte swizzle.
     */
    private TensorMap tensorMapA(GemmProblem p, GemmTile tile) {
        DeviceMatrix a = p.a();
        return operandMapA(maps, a.dtype(), a.address(), p.aLayout(), a.rows(), a.cols(), a.rowStrideBytes(), tile.aBoxRows());
    }

    /**
     * B's tensor map for {@code tile}'s kernel: for NK, K elements per row and N rows, boxes of the
     * tile's columns x 64 elements; for KN, N elements per row and K rows, boxes of 64 rows x 64
     * elements. 128-byte swizzle.
     */
    private TensorMap tensorMapB(GemmProblem p, GemmTile tile) {
        DeviceMatrix b = p.b();
        return operandMapB(maps, b.dtype(), b.address(), p.layout(), b.rows(), b.cols(), b.rowStrideBytes(), tile.bBoxRows());
    }

    /** C's tensor map for the epilogue's TMA stores (a swapped kernel stores C from its threads, without it). */
    private TensorMap tensorMapC(GemmProblem p) {
        DeviceMatrix c = p.c();
        return outputMapC(maps, c.dtype(), c.address(), p.m(), p.n(), c.rowStrideBytes());
    }

    /** A swapped tile's product's A: B, as an M x K A (N x K B) or a K x M one (K x N B), boxes of the product's rows. */
    private TensorMap swappedMapA(GemmProblem p, GemmTile tile) {
        DeviceMatrix b = p.b();
        GemmALayout asA = p.layout() == GemmLayout.NK ? GemmALayout.MK : GemmALayout.KM;
        return operandMapA(maps, b.dtype(), b.address(), asA, b.rows(), b.cols(), b.rowStrideBytes(), tile.aBoxRows());
    }

    /** A swapped tile's product's B: A (M x K), as an N x K B, boxes of the tile's few rows of C. */
    private TensorMap swappedMapB(GemmProblem p, GemmTile tile) {
        DeviceMatrix a = p.a();
        return operandMapB(maps, a.dtype(), a.address(), GemmLayout.NK, a.rows(), a.cols(), a.rowStrideBytes(), tile.bBoxRows());
    }

    /**
     * The launch of a call of {@code p}: at most one block per SM (min(SMs, tiles) where every tile
     * runs whole, whole clusters for clustered tiles), {@value #THREADS} threads ({@value
     * #SHORT_THREADS} for 64 x 128 tiles), {@value #SHARED_BYTES} bytes of shared memory, for the plan
     * the rule chooses; on the portable mainloop, one block per tile of the tile its rule chooses.
     */
    public synchronized LaunchShape launchShape(GemmProblem p) {
        if (forcedTile == null && runsSkinny(p)) {
            return SkinnyGemm.launchShape(skinnySplit(p.m(), p.n(), p.k()));
        }
        if (portable != null) {
            return portable.launchShape(p);
        }
        return launchShape(plan(p));
    }

    /** {@link #launchShape(GemmProblem)} on {@code multiprocessors} SMs with stream-K on. */
    static LaunchShape launchShape(GemmProblem p, int multiprocessors) {
        return launchShape(plan(p.m(), p.n(), p.k(), multiprocessors, true));
    }

    private static LaunchShape launchShape(StreamKPlan plan) {
        return LaunchShape.of(plan.grid(), plan.tile().threads()).withSharedBytes(SHARED_BYTES);
    }

    private Kernel kernel(GemmProblem p, GemmTile tile) {
        int in = p.inputType() == DType.BF16 ? 0 : 1;
        int out = p.outputType() == DType.F32 ? 1 : 0;
        Kernel kernel = kernels[tile.ordinal()][in][p.aLayout().ordinal()][p.layout().ordinal()][out];
        if (kernel == null) {
            throw new IllegalArgumentException(GemmChecks.who() + ": " + tile + " (" + tile.describe() + ") takes A stored M x K only; "
                    + "this problem's A is stored " + p.aLayout());
        }
        return kernel;
    }

    private void ensureOpen() {
        if (closed.get()) {
            throw new IllegalStateException(GemmChecks.who() + ": Gemm used after close()");
        }
    }

    /** Unloads the kernels (synchronize the streams they ran on first). Safe to call twice. */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        Resources.closeAll(library, this::releaseArguments, workspace);
    }

    private synchronized void releaseArguments() {
        maps.clear();
        args.close();
        skinny.close();
        if (portable != null) {
            portable.close();
        }
    }

    @Override
    public String toString() {
        PortableGemm.Tile forced = portable == null ? null : portable.forced();
        return "Gemm(GPU " + device.device() + " " + device.name() + ", " + device.multiprocessorCount() + " SMs, " + mainloop
                + " mainloop, groupM " + options.groupM() + (forced != null ? ", portable tiles forced to " + forced.shape() : "")
                + (forcedTile != null ? ", tiles forced to " + forcedTile + " (" + forcedTile.describe() + ")" : "")
                + (closed.get() ? ", closed" : "") + ")";
    }
}
