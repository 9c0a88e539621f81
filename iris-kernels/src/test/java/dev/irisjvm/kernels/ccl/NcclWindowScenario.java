package dev.irisjvm.kernels.ccl;

import dev.irisjvm.core.DType;
import dev.irisjvm.core.Iris;
import dev.irisjvm.core.SymTensor;
import dev.irisjvm.core.internal.Memcpy;
import dev.irisjvm.core.testing.Failures;
import dev.irisjvm.core.testing.ScenarioRunner;
import dev.irisjvm.core.testing.TestSeeds;
import dev.irisjvm.kernels.TeamScenarios;
import dev.irisjvm.kernels.baselines.NcclComm;
import dev.irisjvm.kernels.baselines.NcclWindows;
import dev.irisjvm.kernels.ccl.CclReference.Accumulator;
import java.util.Arrays;

/**
 * Scenario {@code nccl_window_baseline_matches} of {@link CollectivesScenarios}: NCCL's
 * collectives on window-registered symmetric buffers ({@link NcclWindows}), the benchmarks' second
 * NCCL baseline, give what plain NCCL and the double-precision reference give. For bf16 and f32,
 * sizes of 1, 3, an odd count and 1 MiB: an all-reduce (SUM, AVG, MAX) and an all-gather, each from
 * fresh random inputs copied into the input window, into a poisoned output window; the all-reduce
 * within NCCL's bound of the reference and equal to plain NCCL bit for bit where both must round
 * alike (else within both NCCL bounds), the all-gather bit for bit with both.
 *
 * <p>Skipped, on every rank, only where NCCL refuses to register the windows and ranks share a GPU
 * (a one-GPU test machine runs two ranks on it, and NCCL's symmetric memory may not map a GPU's
 * memory into itself); any other refusal fails.
 */
final class NcclWindowScenario extends TeamScenarios {
    private static final DType[] TYPES = {DType.BF16, DType.F32};
    private static final ReduceOp[] OPS = {ReduceOp.SUM, ReduceOp.AVG, ReduceOp.MAX};

    private final NcclComm nccl;
    private final long runSeed;

    NcclWindowScenario(Iris iris, NcclComm nccl, long runSeed) {
        super(iris, iris.world());
        this.runSeed = runSeed;
        this.nccl = nccl;
    }

    /** Element counts: 1, 3, odd (no multiple of 8 or of any world size), 1 MiB of the type. */
    private static long[] counts(DType t) {
        return new long[] {1, 3, 100_003, (1L << 20) / t.byteSize()};
    }

    void run() {
        Failures f = new Failures();
        if (!nccl.available()) {
            if (NcclComm.switchedOffByEnvironment()) {
                throw ScenarioRunner.skip("IRIS_TEST_NCCL=off: no NCCL to register windows with");
            }
            f.fail("NCCL is unavailable (" + nccl.reason() + "); set IRIS_TEST_NCCL=off to run without the NCCL comparison");
            f.throwIfAny();
        }
        long largest = 0;
        for (DType t : TYPES) {
            for (long n : counts(t)) {
                largest = Math.max(largest, world * n * t.byteSize());
            }
        }
        try (NcclWindows windows = NcclWindows.open(iris, nccl, largest, largest)) {
            if (!windows.available()) {
                if (windows.refusal() == NcclWindows.Refusal.REGISTRATION && ranksShareAGpu()) {
                    throw ScenarioRunner.skip("NCCL refused to register symmetric windows on ranks that share a GPU: "
                            + windows.reason());
                }
                f.fail("window-registered NCCL not available: " + windows.reason());
                f.throwIfAny();
            }
            for (DType t : TYPES) {
                for (long n : counts(t)) {
                    for (ReduceOp op : OPS) {
                        allReduceCase(f, windows, t, op, n);
                    }
                    allGatherCase(f, windows, t, n);
                }
            }
            iris.synchronize();
            iris.hostBarrier();  // no rank deregisters while a peer's collective may still read its window
        }
        f.throwIfAny();
    }

    private void allReduceCase(Failures f, NcclWindows w, DType t, ReduceOp op, long n) {
        String what = "window allReduce " + t + " " + op + " n=" + n;
        long[] seeds = seeds("all_reduce", t.ordinal(), op.ordinal(), n);
        long bytes = n * t.byteSize();
        float[] got;
        float[] plainGot;
        try (SymTensor in = heap.randn(seeds[rank], t, n); SymTensor plain = heap.empty(t, n); SymTensor copy = heap.empty(t, n)) {
            stage(w, in, bytes, bytes);
            Memcpy.memset(plain.deviceAddress(), 0xFF, bytes, stream);
            nccl.allReduce(w.address(0), w.address(1), n, t, op, stream);
            nccl.allReduce(in.deviceAddress(), plain.deviceAddress(), n, t, op, stream);
            Memcpy.deviceToDevice(copy.deviceAddress(), w.address(1), bytes, stream);
            iris.synchronize();
            got = copy.toFloatArray();
            plainGot = plain.toFloatArray();
        }
        Accumulator acc = new Accumulator(op, (int) n);
        for (int p = 0; p < world; p++) {
            acc.add(regenerate(seeds[p], t, n));
        }
        f.add(CclReference.checkNccl(what, got, acc, op, t));
        f.add(CclReference.checkNcclVsNccl(what + " vs plain NCCL", got, plainGot, acc, op, t));
    }

    private void allGatherCase(Failures f, NcclWindows w, DType t, long n) {
        String what = "window allGather " + t + " n=" + n;
        long[] seeds = seeds("all_gather", t.ordinal(), n);
        long bytes = n * t.byteSize();
        float[] got;
        float[] plainGot;
        try (SymTensor in = heap.randn(seeds[rank], t, n); SymTensor plain = heap.empty(t, world * n);
             SymTensor copy = heap.empty(t, world * n)) {
            stage(w, in, bytes, world * bytes);
            Memcpy.memset(plain.deviceAddress(), 0xFF, world * bytes, stream);
            nccl.allGather(w.address(0), w.address(1), n, t, stream);
            nccl.allGather(in.deviceAddress(), plain.deviceAddress(), n, t, stream);
            Memcpy.deviceToDevice(copy.deviceAddress(), w.address(1), world * bytes, stream);
            iris.synchronize();
            got = copy.toFloatArray();
            plainGot = plain.toFloatArray();
        }
        for (int p = 0; p < world; p++) {
            f.add(CclReference.checkBits(what + ": slot of rank " + p, got, (int) (p * n), regenerate(seeds[p], t, n), 0, (int) n));
        }
        f.add(CclReference.checkBits(what + " vs plain NCCL", got, 0, plainGot, 0, got.length));
    }

    /**
     * The input into window 0, the output window poisoned (0xFF: NaN in bf16 and f32). The host
     * barrier after the device work keeps a peer's collective from reading this rank's input
     * window before the copy lands there, and from writing into its output before the poison.
     */
    private void stage(NcclWindows w, SymTensor in, long inBytes, long outBytes) {
        Memcpy.deviceToDevice(w.address(0), in.deviceAddress(), inBytes, stream);
        Memcpy.memset(w.address(1), 0xFF, outBytes, stream);
        iris.synchronize();
        iris.hostBarrier();
    }

    /** Whether two ranks of this job run on one GPU (decided alike on every rank). */
    private boolean ranksShareAGpu() {
        for (int a = 0; a < world; a++) {
            for (int b = a + 1; b < world; b++) {
                if (iris.pciAddressOf(a).equals(iris.pciAddressOf(b))) {
                    return true;
                }
            }
        }
        return false;
    }

    /** One seed per rank for a case: element p is rank p's. */
    private long[] seeds(String what, long... parts) {
        long[] s = new long[world];
        long[] withRank = Arrays.copyOf(parts, parts.length + 1);
        for (int p = 0; p < world; p++) {
            withRank[parts.length] = p;
            s[p] = TestSeeds.derive(runSeed, "nccl_window_" + what, withRank);
        }
        return s;
    }

    /** Rank p's input, made again here: randn of a seed gives the same tensor on any rank. */
    private float[] regenerate(long seed, DType t, long n) {
        try (SymTensor x = heap.randn(seed, t, n)) {
            return x.toFloatArray();
        }
    }
}
