package dev.irisjvm.kernels.fault;

import dev.irisjvm.core.DType;
import dev.irisjvm.core.DeviceContext;
import dev.irisjvm.core.Iris;
import dev.irisjvm.core.IrisConfig;
import dev.irisjvm.core.IrisDeviceException;
import dev.irisjvm.core.SymTensor;
import dev.irisjvm.core.gpu.LaunchShape;
import dev.irisjvm.core.internal.KernelArgs;
import dev.irisjvm.core.internal.KernelModule;
import dev.irisjvm.core.testing.ExpectedDeviceError;
import dev.irisjvm.core.testing.Failures;
import dev.irisjvm.core.testing.ScenarioRunner;
import dev.irisjvm.kernels.KernelLibrary;
import dev.irisjvm.kernels.ScenarioConfigs;
import dev.irisjvm.kernels.TeamScenarios;
import dev.irisjvm.kernels.ccl.Collectives;
import dev.irisjvm.kernels.ccl.ReduceOp;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Random;

/**
 * Checked mode on the device (IRIS_CHECK=1: {@code IrisConfig.withChecked(true)}): kernels load in
 * their bounds-checked variants ({@code NAME.checked.fatbin}, {@code -DIRIS_CHECKED=1}), so a kernel
 * that translates an address outside the symmetric heap, or for a rank outside the world, records
 * the kernel, its source line, the rank, the target rank and the offset, stops the faulting thread
 * (never the context), makes its other waits give up, and the host raises all of it. Kernels from
 * fault_test.cu; run by {@link CheckedModeGpuTest}. The device timeout is
 * {@value #DEVICE_TIMEOUT_MS} ms, so a kernel that ends within seconds ended because of the fault.
 */
public final class CheckedModeScenarios extends TeamScenarios {
    public static final List<String> SCENARIOS = List.of("checked_loads_checked_modules", "checked_store_outside_heap",
            "checked_store_before_heap", "checked_rank_out_of_range", "checked_get_runs_past_heap_end",
            "checked_operations_still_correct");

    static final long HEAP_BYTES = 64L << 20;
    static final long DEVICE_TIMEOUT_MS = 60_000;
    static final double STOP_SECONDS = 5.0;
    static final int NEVER_SITE = 4711;

    private final KernelLibrary library;
    private final KernelModule module;
    private final KernelArgs args = new KernelArgs();
    private final int next;
    private final int prev;

    private CheckedModeScenarios(Iris iris, KernelLibrary library) {
        super(iris, iris.world());
        this.library = library;
        this.module = library.module("fault_test");
        this.next = (rank + 1) % world;
        this.prev = (rank - 1 + world) % world;
    }

    public static void main(String[] argv) {
        IrisConfig config = ScenarioConfigs.of(HEAP_BYTES, Duration.ofMillis(DEVICE_TIMEOUT_MS)).withChecked(true);
        int failed;
        try (Iris iris = Iris.init(config); KernelLibrary library = KernelLibrary.forIris(iris)) {
            CheckedModeScenarios s = new CheckedModeScenarios(iris, library);
            ScenarioRunner runner = new ScenarioRunner();
            runner.add("checked_loads_checked_modules", ScenarioRunner.thenMeet(s::loadsCheckedModules, iris::hostBarrier));
            runner.add("checked_store_outside_heap", ScenarioRunner.thenMeet(() -> s.badStore(HEAP_BYTES + 4096, s.next,
                    "target rank " + s.next + ": offset " + (HEAP_BYTES + 4096) + " lies outside the heap of " + HEAP_BYTES
                            + " bytes"), iris::hostBarrier));
            runner.add("checked_store_before_heap", ScenarioRunner.thenMeet(() -> s.badStore(-64, s.next,
                    "target rank " + s.next + ": offset -64 (before the heap's start) lies outside the heap"), iris::hostBarrier));
            runner.add("checked_rank_out_of_range", ScenarioRunner.thenMeet(() -> {
                s.badStore(4096, s.world, "target rank " + s.world + " is out of range [0, " + s.world + ")");
                s.badStore(4096, -1, "target rank -1 is out of range [0, " + s.world + ")");
            }, iris::hostBarrier));
            runner.add("checked_get_runs_past_heap_end", ScenarioRunner.thenMeet(s::getPastTheEnd, iris::hostBarrier));
            runner.add("checked_operations_still_correct", ScenarioRunner.thenMeet(s::operationsStillCorrect, iris::hostBarrier));
            failed = runner.runAll();
            s.args.close();
        }
        System.exit(failed);
    }

    /** Bad addresses are launched from the checked module only: unchecked, they would really be accessed. */
    private void requireCheckedModule() {
        if (!module.name().contains(".checked.")) {
            throw new AssertionError("fault_test loaded from " + module.name() + ", not its checked variant: not launching a bad address");
        }
    }

    private KernelArgs args() {
        return args.clear().putBytes(iris.deviceContext().bytes(), DeviceContext.ALIGNMENT);
    }

    /** The library and the collectives load the checked variants. */
    private void loadsCheckedModules() {
        Failures f = new Failures();
        f.check(iris.config().checked(), () -> "the configuration is not in checked mode");
        f.check(library.checked(), () -> "KernelLibrary.forIris is not in checked mode");
        f.check(module.name().endsWith("fault_test.checked.fatbin") || module.name().endsWith("fault_test.checked.hsaco"),
                () -> "fault_test loaded from " + module.name() + ", expected its checked variant");
        f.throwIfAny();
    }

    /**
     * Thread 0 of block 0 stores one word at {@code offset} bytes into rank {@code target}'s heap;
     * the other blocks wait for a flag nobody sets. Expected: error 5 naming ft_store_at, its line
     * in fault_test.cu, this rank, the target and {@code problem}, within seconds, and the
     * instance still works afterwards.
     */
    private void badStore(long offset, int target, String problem) {
        requireCheckedModule();
        Failures f = new Failures();
        try (SymTensor t = iris.heap().zeros(DType.U8, 4096); SymTensor never = iris.heap().zeros(DType.I64, 1)) {
            long fromT = offset - t.heapOffset();
            long start = System.nanoTime();
            module.kernel("ft_store_at").launch(LaunchShape.of(8, 32), iris.stream(), args().putLong(t.deviceAddress())
                    .putLong(fromT).putInt(target).putLong(never.deviceAddress()).putInt(NEVER_SITE));
            ExpectedDeviceError waited = ExpectedDeviceError.synchronize(iris, start);
            IrisDeviceException e = waited.error();
            if (e == null) {
                f.fail("a store at offset " + offset + " of rank " + target + "'s heap went unreported");
            } else {
                String m = String.valueOf(e.getMessage());
                f.check(e.code() == 5, () -> "device error code " + e.code() + ", expected 5 (bad_address): " + m);
                f.check(e.peer() == target, () -> "peer " + e.peer() + ", expected the target rank " + target + ": " + m);
                f.check(m.startsWith("rank " + rank + ": checked mode: ft_store_at (fault_test.cu:"),
                        () -> "does not name the rank, the kernel and its file: " + m);
                f.check(m.contains("translated an address for target rank " + target + ": ") && m.contains(problem),
                        () -> "does not say '" + problem + "': " + m);
                f.check(waited.seconds() < STOP_SECONDS, () -> "the kernel ended after " + waited.seconds()
                        + " s: its waiting blocks did not stop when the fault was recorded");
            }
            iris.checkDeviceStatus();  // raised once, then clear
            iris.barrier();            // the instance still works
            iris.synchronize();
        }
        f.throwIfAny();
    }

    /** A block-cooperative get whose first element is inside the heap but whose range is not. */
    private void getPastTheEnd() {
        requireCheckedModule();
        Failures f = new Failures();
        try (SymTensor anchor = iris.heap().zeros(DType.F32, 16); SymTensor dst = iris.heap().full(-1, DType.F32, 256)) {
            long lastBytes = 64;
            long src = anchor.deviceAddress() + (HEAP_BYTES - anchor.heapOffset() - lastBytes);
            long start = System.nanoTime();
            module.kernel("ft_get_range").launch(LaunchShape.of(1, 128), iris.stream(), args().putLong(dst.deviceAddress())
                    .putLong(src).putLong(256).putInt(next));
            ExpectedDeviceError waited = ExpectedDeviceError.synchronize(iris, start);
            IrisDeviceException e = waited.error();
            String problem = "an access of 1024 bytes at offset " + (HEAP_BYTES - lastBytes) + " runs past the end of the heap of "
                    + HEAP_BYTES + " bytes";
            if (e == null) {
                f.fail("a get running past the heap's end went unreported");
            } else {
                String m = String.valueOf(e.getMessage());
                f.check(e.code() == 5 && m.startsWith("rank " + rank + ": checked mode: ft_get_range (fault_test.cu:")
                        && m.contains("target rank " + next + ": " + problem), () -> "expected '" + problem + "': " + m);
            }
            float[] untouched = dst.toFloatArray();
            f.check(allEqual(untouched, -1f), () -> "the faulting get wrote into dst anyway");
        }
        f.throwIfAny();
    }

    /** Checked code computes what unchecked code computes: tile operations, barriers and collectives, exactly. */
    private void operationsStillCorrect() {
        Failures f = new Failures();
        long seed = iris.broadcast(System.nanoTime(), 0);
        int n = 1 << 16;
        try (SymTensor mine = iris.heap().empty(DType.F32, n); SymTensor slot = iris.heap().full(Float.NaN, DType.F32, n);
             SymTensor acc = iris.heap().zeros(DType.F32, n); SymTensor sum = iris.heap().empty(DType.F32, n);
             Collectives ccl = Collectives.create(iris)) {
            float[][] all = new float[world][];
            for (int r = 0; r < world; r++) all[r] = integers(seed + r, n);
            mine.copyFrom(all[rank]);
            iris.barrier();
            slot.whole().on(next).storeRemote(mine.whole());
            acc.whole().on(next).atomicAdd(mine.whole());
            iris.barrier();
            iris.synchronize();
            f.check(Arrays.equals(slot.toFloatArray(), all[prev]), () -> "storeRemote in checked mode: wrong data");
            f.check(Arrays.equals(acc.toFloatArray(), all[prev]), () -> "atomicAdd in checked mode: wrong data");
            ccl.allReduce(mine, sum, ReduceOp.SUM, iris.stream());
            iris.synchronize();
            float[] expected = new float[n];
            for (int i = 0; i < n; i++) {
                for (int r = 0; r < world; r++) expected[i] += all[r][i];
            }
            f.check(Arrays.equals(sum.toFloatArray(), expected), () -> "allReduce in checked mode: wrong sum");
            iris.barrier();
            iris.synchronize();
        }
        f.throwIfAny();
    }

    /** Small integers: every sum is exact in float, so the check is exact. */
    private static float[] integers(long seed, int n) {
        Random random = new Random(seed);
        float[] v = new float[n];
        for (int i = 0; i < n; i++) v[i] = random.nextInt(201) - 100;
        return v;
    }

    private static boolean allEqual(float[] a, float v) {
        for (float x : a) if (x != v) return false;
        return true;
    }
}
