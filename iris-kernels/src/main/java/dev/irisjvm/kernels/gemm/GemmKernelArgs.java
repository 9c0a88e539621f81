package dev.irisjvm.kernels.gemm;

import dev.irisjvm.core.DeviceModule;
import dev.irisjvm.core.IrisPlatformException;
import dev.irisjvm.core.StructArgument;
import dev.irisjvm.core.gpu.Gpu;
import dev.irisjvm.core.gpu.LaunchShape;
import dev.irisjvm.core.internal.AbiLayout;
import dev.irisjvm.core.internal.TensorMap;
import dev.irisjvm.kernels.MainloopMaps;
import dev.irisjvm.kernels.TensorMapCache;
import dev.irisjvm.runtime.abi.iris_gemm_args;
import org.bytedeco.javacpp.BytePointer;

/**
 * The argument of a GEMM kernel of your own, written on the device headers' GEMM
 * ({@code #include <iris/gemm.cuh>}, whose {@code iris::gemm::run} takes it): {@code iris_gemm_args}
 * of iris/abi/gemm.h, filled for one checked {@link GemmProblem}, with A's, B's and C's TMA
 * descriptors (the plain {@code run(args)} stores C by TMA; hooks of yours may ignore C's), C, the
 * bias, the shape, the tile order's group and the scaling (alpha, beta: {@code iris::gemm::run(args)}
 * applies them; a kernel with hooks of its own decides). Pass it to {@link DeviceModule#launch} where
 * the kernel declares {@code const IRIS_GRID_CONSTANT iris_gemm_args args}; it goes in at its
 * 64-byte alignment.
 *
 * <pre>{@code
 * try (DeviceModule m = KernelCompiler.forIris(iris).compileResource(Mine.class, "my_gemm.cu").load()) {
 *     m.setMaxDynamicSharedBytes("my_gemm", Gemm.SHARED_BYTES);           // once per module
 *     GemmKernelArgs args = GemmKernelArgs.of(
 *             new GemmProblem(DeviceMatrix.of(a), DeviceMatrix.of(w), GemmLayout.NK, 0, DeviceMatrix.of(c)));
 *     m.launch("my_gemm", args.launchShape(), iris.stream(), iris.deviceContext(), args);
 * }
 * }</pre>
 *
 * <p>The kernel's {@code iris::gemm::Config} must match what the arguments were built for: the
 * problem's dtypes and both layouts ({@code Config}'s {@code BLayout}, and its last parameter {@code
 * ALayout::km} for {@link GemmALayout#KM}), and {@link #tileN()} columns per tile (the NK B descriptor's box
 * holds that many rows). Building one encodes the three descriptors on the host (no GPU work, nothing
 * allocated on the device); they hold the operands' addresses, so the kernel reads whatever those
 * hold at launch time, and a new address needs new arguments. Immutable. NVIDIA Hopper only (TMA):
 * elsewhere {@link #of} throws {@link IrisPlatformException}.
 */
public final class GemmKernelArgs implements StructArgument {
    /** sizeof(iris_gemm_args): three 128-byte descriptors, pointers and the shape, padded to 64. */
    public static final int BYTES = AbiLayout.size(iris_gemm_args.class);
    /** Alignment of the struct as a kernel parameter (its TMA descriptors'). */
    public static final int ALIGNMENT = 64;

    private final GemmProblem problem;
    private final int groupM;
    private final int tileN;
    private final byte[] bytes;

    GemmKernelArgs(GemmProblem problem, int groupM, int tileN, byte[] bytes) {
        this.problem = problem;
        this.groupM = groupM;
        this.tileN = tileN;
        this.bytes = bytes;
    }

    /** For a kernel of {@link Gemm#TILE_N}-column tiles (Config's default), groups of {@link Gemm#DEFAULT_GROUP_M} tile rows. */
    public static GemmKernelArgs of(GemmProblem problem) {
        return of(problem, Gemm.DEFAULT_GROUP_M, Gemm.TILE_N);
    }

    /**
     * For a kernel whose Config has {@code tileN} columns per tile ({@link Gemm#TILE_N}, {@link
     * Gemm#MID_TILE_N} or {@link Gemm#NARROW_TILE_N}), walking the tiles in groups of {@code groupM}
     * tile rows (>= 1; see {@link Gemm.Options#groupM()}).
     *
     * @throws IllegalArgumentException a null problem, {@code groupM < 1} or another tile width
     * @throws IrisPlatformException    on a platform without TMA descriptors (HIP)
     */
    public static GemmKernelArgs of(GemmProblem problem, int groupM, int tileN) {
        if (problem == null) {
            throw new IllegalArgumentException(GemmChecks.who() + ": problem must not be null");
        }
        GemmChecks.groupM(groupM);
        TensorMapCache maps = new TensorMapCache(3, Gemm.SWIZZLE_BYTES);
        DeviceMatrix a = problem.a();
        DeviceMatrix b = problem.b();
        TensorMap bMap = MainloopMaps.operandMapB(maps, b.dtype(), b.address(), problem.layout(), b.rows(), b.cols(),
                b.rowStrideBytes(), tileN);
        TensorMap aMap = MainloopMaps.operandMapA(maps, a.dtype(), a.address(), problem.aLayout(), a.rows(), a.cols(),
                a.rowStrideBytes());
        DeviceMatrix c = problem.c();
        TensorMap cMap = MainloopMaps.outputMapC(maps, c.dtype(), c.address(), problem.m(), problem.n(), c.rowStrideBytes());
        try (GemmArgs args = new GemmArgs()) {
            args.maps(aMap, bMap);
            args.outputMap(cMap);
            return new GemmKernelArgs(problem, groupM, tileN, bytesOf(args.operands(problem, groupM)));
        }
    }

    /** The struct's bytes, as the C compiler laid it out (the generated struct is that memory). */
    static byte[] bytesOf(iris_gemm_args filled) {
        byte[] bytes = new byte[BYTES];
        new BytePointer(filled).position(0).get(bytes);
        return bytes;
    }

    public GemmProblem problem() {
        return problem;
    }

    public int groupM() {
        return groupM;
    }

    /** Columns per output tile that the kernel's Config must have. */
    public int tileN() {
        return tileN;
    }

    /** Output tiles of {@link Gemm#TILE_M} x {@link #tileN()}. */
    public int tiles() {
        return (int) (GemmChecks.ceilDiv(problem.m(), Gemm.TILE_M) * GemmChecks.ceilDiv(problem.n(), tileN));
    }

    /**
     * The launch the persistent kernel needs on the current GPU: min(SMs, tiles) blocks of {@link
     * Gemm#THREADS} threads with {@link Gemm#SHARED_BYTES} bytes of dynamic shared memory.
     */
    public LaunchShape launchShape() {
        return launchShape(Gpu.properties(Gpu.currentDevice()).multiprocessorCount());
    }

    /** {@link #launchShape()} for a GPU of {@code multiprocessors} SMs. */
    public LaunchShape launchShape(int multiprocessors) {
        if (multiprocessors < 1) {
            throw new IllegalArgumentException(GemmChecks.who() + ": multiprocessors must be >= 1, got " + multiprocessors);
        }
        return LaunchShape.of(Math.max(1, Math.min(multiprocessors, tiles())), Gemm.THREADS)
                .withSharedBytes(Gemm.SHARED_BYTES);
    }

    /** The struct's {@value #ALIGNMENT}-aligned bytes (a copy). */
    @Override
    public byte[] bytes() {
        return bytes.clone();
    }

    @Override
    public int alignment() {
        return ALIGNMENT;
    }

    @Override
    public String toString() {
        return "GemmKernelArgs(" + problem + ", tileN " + tileN + ", groupM " + groupM + ")";
    }
}
