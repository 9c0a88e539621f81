package dev.irisjvm.kernels.attention;

import dev.irisjvm.core.DType;
import dev.irisjvm.core.Iris;
import dev.irisjvm.core.IrisConfig;
import dev.irisjvm.core.SymTensor;
import dev.irisjvm.core.gpu.CudaGraph;
import dev.irisjvm.core.gpu.DeviceMemory;
import dev.irisjvm.core.gpu.Stream;
import dev.irisjvm.core.internal.Memcpy;
import dev.irisjvm.core.internal.Resources;
import dev.irisjvm.core.testing.Failures;
import dev.irisjvm.core.testing.ScenarioJob;
import dev.irisjvm.core.testing.ScenarioRunner;
import dev.irisjvm.core.testing.TestSeeds;
import dev.irisjvm.kernels.SmHog;
import dev.irisjvm.kernels.TeamScenarios;
import dev.irisjvm.kernels.gemm.GemmMainloop;
import dev.irisjvm.kernels.attention.AttentionReference.Misses;
import dev.irisjvm.kernels.attention.AttentionReference.Row;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Attention ({@link Attention}), ring attention ({@link RingAttention}) and distributed
 * flash-decode ({@link FlashDecode}) on every rank of a GPU job, run by {@link AttentionGpuTest}
 * through the launcher. The exit code is the number of failed scenarios. Runs on any number of
 * ranks, one included ({@code bin/iris-run -n 1}): the ring and flash-decode scenarios then have a
 * single step, and {@code ring_steps_in_one_process} still runs rings of 2, 3 and 4 shards inside
 * the one process.
 *
 * <p>Rules every scenario follows:
 * <ul>
 * <li>Inputs are fresh standard-normal values rounded to the input dtype, from seeds that mix the
 *     run seed (broadcast from rank 0, printed, repeatable with {@code IRIS_TEST_SEED}) and the
 *     case; where every rank must see the same global sequence (ring, flash-decode) the seed does not
 *     mix in the rank.</li>
 * <li>Outputs are poisoned first (all bytes 0xFF, a NaN in every output dtype), so an unwritten
 *     element never passes.</li>
 * <li>Small shapes are compared element by element with a double-precision CPU reference within
 *     {@link AttentionReference#bound}: {@code |o - ref| <= u |ref| + 2u a + 2^-20 a}, a = sum p |v|
 *     / l (for BF16, 2^-8 |ref| + 2^-7 a), and the log-sum-exp within 1e-3 max(|ref|, 1).</li>
 * <li>Large shapes are compared with the single-GPU kernel on the gathered inputs: every element
 *     within the sum of both results' bounds (a from the same kernel run on |V|), plus sampled rows
 *     against the CPU reference within the strict bound.</li>
 * <li>Checks are collected and thrown at the end of a scenario; every scenario ends with {@code
 *     iris.hostBarrier()}, and every rank allocates the same heap tensors in the same order.</li>
 * </ul>
 */
public final class AttentionScenarios extends TeamScenarios {
    /** Every scenario, in run order; the JUnit side expects exactly these names. */
    public static final List<String> SCENARIOS = List.of(
            "attention_small_vs_reference",
            "attention_graph_replay",
            "ring_steps_in_one_process",
            "ring_vs_reference",
            "ring_large_vs_local",
            "ring_graph_replay",
            "attention_misuse",
            "portable_small_vs_reference",
            "portable_ring_steps_in_one_process",
            "portable_ring_vs_reference",
            "flash_decode_vs_reference",
            "flash_decode_conventional_vs_reference",
            "flash_decode_lengths_change",
            "flash_decode_large_vs_baseline",
            "flash_decode_one_sm_free");

    static final long HEAP_BYTES = 3L << 30;

    private final Attention attention;
    /** The portable kernels, forced ({@link GemmMainloop#PORTABLE}) whatever the GPU. */
    private final Attention portable;
    private final long runSeed;

    private AttentionScenarios(Iris iris, Attention attention, Attention portable, long runSeed) {
        super(iris, iris.world());
        this.runSeed = runSeed;
        this.attention = attention;
        this.portable = portable;
    }

    public static void main(String[] argv) throws Exception {
        IrisConfig config = IrisConfig.fromEnvironment().withHeapSize(HEAP_BYTES);
        ScenarioJob.run(config, (iris, runSeed) -> {
            System.out.println(TestSeeds.banner("attention", iris, runSeed));
            try (Attention attention = Attention.create(); Attention portable = Attention.create(GemmMainloop.PORTABLE)) {
                System.out.println("attention: " + attention + "; forced: " + portable);
                AttentionScenarios s = new AttentionScenarios(iris, attention, portable, runSeed);
                Map<String, ScenarioRunner.Scenario> bodies = new LinkedHashMap<>();
                bodies.put("attention_small_vs_reference", () -> s.smallVsReference(s.attention));
                bodies.put("attention_graph_replay", s::graphReplay);
                bodies.put("ring_steps_in_one_process", () -> s.ringStepsInOneProcess(List.of(s.attention)));
                bodies.put("ring_vs_reference", () -> s.ringVsReference(s.attention));
                bodies.put("ring_large_vs_local", s::ringLargeVsLocal);
                bodies.put("ring_graph_replay", s::ringGraphReplay);
                bodies.put("attention_misuse", s::misuse);
                bodies.put("portable_small_vs_reference", () -> s.smallVsReference(s.portable));
                // The portable steps alone, then alternating with the default ones: the state is one format.
                bodies.put("portable_ring_steps_in_one_process", () -> {
                    s.ringStepsInOneProcess(List.of(s.portable));
                    s.ringStepsInOneProcess(List.of(s.attention, s.portable));
                });
                bodies.put("portable_ring_vs_reference", () -> s.ringVsReference(s.portable));
                bodies.put("flash_decode_vs_reference", s::flashDecodeVsReference);
                bodies.put("flash_decode_conventional_vs_reference", s::flashDecodeConventionalVsReference);
                bodies.put("flash_decode_lengths_change", s::flashDecodeLengthsChange);
                bodies.put("flash_decode_large_vs_baseline", s::flashDecodeLargeVsBaseline);
                bodies.put("flash_decode_one_sm_free", s::flashDecodeOneSmFree);
                int failed = ScenarioRunner.runTable(bodies, SCENARIOS, s.iris::hostBarrier);
                iris.synchronize();
                return failed;
            }
        });
    }

    // =============================================================================================
    // the local kernel
    // =============================================================================================

    /** One local case: shapes, dtype, mask. */
    record LocalCase(DType dtype, int b, int hq, int hkv, int sq, int skv, int d, boolean causal) {
        String describe() {
            return String.format(Locale.ROOT, "%s B%d Hq%d Hkv%d Sq%d Skv%d D%d%s", dtype, b, hq, hkv, sq, skv, d, causal ? " causal" : "");
        }

        AttentionProblem problem() {
            return AttentionProblem.of(dtype, b, hq, hkv, sq, skv, d, causal);
        }

        Qkv random(long seed) {
            return Qkv.random(seed, dtype, b, hq, hkv, sq, skv, d);
        }
    }

    /** A local case's Q, K and V on the heap, and its O and log-sum-exp not written; closed together. */
    record LocalTensors(SymTensor q, SymTensor k, SymTensor v, SymTensor o, SymTensor lse) implements AutoCloseable {
        @Override
        public void close() {
            Resources.closeAll(lse, o, v, k, q);
        }
    }

    private LocalTensors localTensors(LocalCase c, Qkv in) {
        List<SymTensor> tensors = new ArrayList<>();
        try {
            return new LocalTensors(track(tensors, upload(in.q(), c.dtype(), c.b(), c.hq(), c.sq(), c.d())),
                    track(tensors, upload(in.k(), c.dtype(), c.b(), c.hkv(), c.skv(), c.d())),
                    track(tensors, upload(in.v(), c.dtype(), c.b(), c.hkv(), c.skv(), c.d())),
                    track(tensors, heap.empty(c.dtype(), c.b(), c.hq(), c.sq(), c.d())),
                    heap.empty(DType.F32, c.b(), c.hq(), c.sq()));
        } catch (RuntimeException | Error e) {
            Collections.reverse(tensors);
            Resources.closeAfter(e, tensors);
            throw e;
        }
    }

    /** O and the log-sum-exp poisoned, one forward of {@code a}'s local kernel, both against the CPU reference. */
    private Misses runLocal(Attention a, String what, LocalCase c, Qkv in, LocalTensors t) {
        poison(t.o());
        poison(t.lse());
        a.forward(t.q(), t.k(), t.v(), t.o(), t.lse(), c.causal(), stream);
        iris.synchronize();
        return compareLocal(what, c, in.q(), in.k(), in.v(), t.o().toFloatArray(), t.lse().toFloatArray());
    }

    static List<LocalCase> smallCases() {
        List<LocalCase> cases = new ArrayList<>();
        for (int b : new int[] {1, 2}) {
            for (int hkv : new int[] {2, 1}) {
                for (int s : new int[] {256, 384}) {
                    for (int d : new int[] {64, 128}) {
                        for (boolean causal : new boolean[] {false, true}) {
                            cases.add(new LocalCase(DType.BF16, b, 4, hkv, s, s, d, causal));
                        }
                    }
                }
            }
        }
        // F16, multi-head (Hkv = Hq), and a query block shorter than the keys.
        cases.add(new LocalCase(DType.F16, 2, 4, 2, 384, 384, 128, true));
        cases.add(new LocalCase(DType.F16, 1, 4, 4, 256, 256, 64, false));
        cases.add(new LocalCase(DType.BF16, 2, 4, 2, 128, 512, 128, false));
        cases.add(new LocalCase(DType.F16, 1, 4, 1, 256, 640, 64, false));
        // Hopper's forward at head size 64 takes blocks of 192 query rows: a lone block of 128 rows
        // (two of its three consumer warpgroups), 640 = 3 x 192 + 64 with the mask crossing blocks,
        // and 128 queries against 512 keys.
        cases.add(new LocalCase(DType.BF16, 1, 4, 2, 128, 128, 64, true));
        cases.add(new LocalCase(DType.BF16, 1, 4, 2, 640, 640, 64, true));
        cases.add(new LocalCase(DType.F16, 2, 4, 2, 128, 512, 64, false));
        // And without a mask over more than one wave: 36 heads of 1280 rows, six blocks of 192 and
        // one of 128 (two consumers) a head.
        cases.add(new LocalCase(DType.BF16, 2, 18, 6, 1280, 1280, 64, false));
        return cases;
    }

    /** Every small case on {@code a}'s kernels against the CPU reference, O and the log-sum-exp. */
    private void smallVsReference(Attention a) {
        Failures f = new Failures();
        double worst = 0;
        for (LocalCase c : smallCases()) {
            Qkv in = c.random(seed("small", stable(c)));
            try (LocalTensors t = localTensors(c, in)) {
                Misses m = runLocal(a, c.describe() + ", " + a.mainloop(), c, in, t);
                f.add(m.failure());
                worst = Math.max(worst, m.worst());
            }
        }
        System.out.printf(Locale.ROOT, "attention: rank %d: %d small cases on %s, worst error / bound %.3f%n", rank, smallCases().size(),
                a.mainloop(), worst);
        f.throwIfAny();
    }

    private Misses compareLocal(String what, LocalCase c, float[] q, float[] k, float[] v, float[] o, float[] lse) {
        Misses m = new Misses(what);
        double scale = AttentionProblem.defaultScale(c.d());
        for (int b = 0; b < c.b(); b++) {
            for (int h = 0; h < c.hq(); h++) {
                for (int i = 0; i < c.sq(); i++) {
                    boolean[] visible = c.causal() ? prefix(c.skv(), i) : null;
                    Row r = AttentionReference.row(q, k, v, c.hq(), c.hkv(), c.sq(), c.skv(), c.d(), b, h, i, scale, visible);
                    int row = (b * c.hq() + h) * c.sq() + i;
                    for (int e = 0; e < c.d(); e++) {
                        m.element("o[" + b + "," + h + "," + i + "," + e + "]", o[row * c.d() + e], r.o()[e],
                                AttentionReference.bound(c.dtype(), r.o()[e], r.magnitude()[e]));
                    }
                    m.lse("[" + b + "," + h + "," + i + "]", lse[row], r.lse());
                }
            }
        }
        return m;
    }

    static boolean[] prefix(int n, int last) {
        boolean[] visible = new boolean[n];
        for (int j = 0; j <= last && j < n; j++) {
            visible[j] = true;
        }
        return visible;
    }

    /**
     * The forward captured into a CUDA graph on another stream (its tensor maps built while
     * capturing), replayed on fresh inputs written into the same tensors: each replay equals an
     * eager call bit for bit.
     */
    private void graphReplay() throws Exception {
        Failures f = new Failures();
        LocalCase c = new LocalCase(DType.BF16, 1, 8, 2, 1024, 1024, 128, true);
        try (SymTensor tq = heap.empty(c.dtype(), c.b(), c.hq(), c.sq(), c.d());
             SymTensor tk = heap.empty(c.dtype(), c.b(), c.hkv(), c.skv(), c.d());
             SymTensor tv = heap.empty(c.dtype(), c.b(), c.hkv(), c.skv(), c.d());
             SymTensor graphOut = heap.empty(c.dtype(), c.b(), c.hq(), c.sq(), c.d());
             SymTensor eagerOut = heap.empty(c.dtype(), c.b(), c.hq(), c.sq(), c.d());
             SymTensor lse = heap.empty(DType.F32, c.b(), c.hq(), c.sq());
             Stream s = Stream.create()) {
            s.beginCapture();
            attention.forward(tq, tk, tv, graphOut, lse, true, s);
            try (CudaGraph graph = s.endCapture()) {
                for (int rep = 0; rep < 3; rep++) {
                    refill(seed("graph", rep), tq, tk, tv);
                    poison(graphOut);
                    poison(eagerOut);
                    graph.launch(s);
                    s.synchronize();
                    attention.forward(tq, tk, tv, eagerOut, null, true, stream);
                    iris.synchronize();
                    f.add(sameBits("replay " + rep, graphOut.toFloatArray(), eagerOut.toFloatArray()));
                }
            }
        }
        f.throwIfAny();
    }

    // =============================================================================================
    // ring attention
    // =============================================================================================

    /** A ring case: world shards of {@code shard} rows each. */
    record RingCase(DType dtype, int b, int hq, int hkv, int shard, int d, boolean causal, Sharding sharding, int world) {
        int total() {
            return shard * world;
        }

        AttentionProblem shardProblem() {
            return AttentionProblem.of(dtype, b, hq, hkv, shard, shard, d, causal);
        }

        /** The whole sequence's inputs, every shard of them. */
        Qkv random(long seed) {
            return Qkv.random(seed, dtype, b, hq, hkv, total(), total(), d);
        }

        String describe() {
            return String.format(Locale.ROOT, "%s B%d Hq%d Hkv%d S%d (W%d x %d) D%d %s%s", dtype, b, hq, hkv, total(), world, shard, d,
                    sharding, causal ? " causal" : "");
        }
    }

    /** Rows of a [B, H, S, D] global tensor that shard {@code r} holds, in its local order. */
    static float[] shardOf(float[] global, int b, int h, int d, RingCase c, int r) {
        int s = c.total();
        int n = c.shard();
        float[] out = new float[b * h * n * d];
        for (int bh = 0; bh < b * h; bh++) {
            for (int i = 0; i < n; i++) {
                int pos = c.sharding().globalPosition(r, c.world(), n, i);
                System.arraycopy(global, (bh * s + pos) * d, out, (bh * n + i) * d, d);
            }
        }
        return out;
    }

    /** Compares shard r's O and lse with the CPU reference rows at their global positions. */
    static Misses compareShard(String what, RingCase c, int r, float[] q, float[] k, float[] v, float[] o, float[] lse, int stride) {
        Misses m = new Misses(what);
        double scale = AttentionProblem.defaultScale(c.d());
        int s = c.total();
        for (int b = 0; b < c.b(); b++) {
            for (int h = 0; h < c.hq(); h++) {
                for (int i = (b + h) % stride; i < c.shard(); i += stride) {
                    int pos = c.sharding().globalPosition(r, c.world(), c.shard(), i);
                    Row ref = AttentionReference.row(q, k, v, c.hq(), c.hkv(), s, s, c.d(), b, h, pos, scale,
                            c.causal() ? prefix(s, pos) : null);
                    int row = (b * c.hq() + h) * c.shard() + i;
                    for (int e = 0; e < c.d(); e++) {
                        m.element("rank " + r + " o[" + b + "," + h + ", local " + i + " = position " + pos + "," + e + "]",
                                o[row * c.d() + e], ref.o()[e], AttentionReference.bound(c.dtype(), ref.o()[e], ref.magnitude()[e]));
                    }
                    m.lse("rank " + r + " [" + b + "," + h + "," + i + "]", lse[row], ref.lse());
                }
            }
        }
        return m;
    }

    /**
     * Whole rings of 2, 3 and 4 shards run inside this process on local buffers: every virtual
     * rank's steps in ring order, then its rows against the CPU reference. Each ring runs twice:
     * once as step kernels only ({@link Attention#ringStep}), once as {@link RingAttention} runs it,
     * the last two steps in one launch ({@link Attention#ring}) whose ready word a stream
     * write raises on a second stream behind a 64 MiB copy, so the kernel starts before it and
     * waits (where {@code runners[0]} runs Hopper's mainloop, which has that launch). Step s runs on
     * {@code runners[s % size]}, so two runners of different mainloops pass the state to each other.
     * Zig-zag and contiguous causal, and not causal; GQA; both dtypes.
     */
    private void ringStepsInOneProcess(List<Attention> runners) {
        Failures f = new Failures();
        List<RingCase> cases = List.of(
                new RingCase(DType.BF16, 2, 4, 2, 256, 128, true, Sharding.ZIG_ZAG, 2),
                new RingCase(DType.BF16, 1, 4, 1, 512, 64, true, Sharding.CONTIGUOUS, 2),
                new RingCase(DType.BF16, 2, 4, 2, 512, 64, false, Sharding.CONTIGUOUS, 2),
                new RingCase(DType.BF16, 1, 4, 2, 256, 128, true, Sharding.ZIG_ZAG, 3),
                new RingCase(DType.F16, 1, 4, 2, 256, 128, true, Sharding.ZIG_ZAG, 4),
                new RingCase(DType.F16, 1, 4, 4, 256, 64, false, Sharding.ZIG_ZAG, 4));
        for (RingCase c : cases) {
            long seed = seed("ring-local", stable(c));
            Qkv in = c.random(seed);
            float[] q = in.q(), k = in.k(), v = in.v();
            AttentionProblem p = c.shardProblem();
            List<SymTensor> tensors = new ArrayList<>();
            try {
                SymTensor[] ks = new SymTensor[c.world()];
                SymTensor[] vs = new SymTensor[c.world()];
                for (int r = 0; r < c.world(); r++) {
                    ks[r] = track(tensors, upload(shardOf(k, c.b(), c.hkv(), c.d(), c, r), c.dtype(), c.b(), c.hkv(), c.shard(), c.d()));
                    vs[r] = track(tensors, upload(shardOf(v, c.b(), c.hkv(), c.d(), c, r), c.dtype(), c.b(), c.hkv(), c.shard(), c.d()));
                }
                SymTensor acc = track(tensors, heap.empty(DType.F32, c.b(), c.hq(), c.shard(), c.d()));
                SymTensor rowMax = track(tensors, heap.empty(DType.F32, c.b(), c.hq(), c.shard()));
                SymTensor rowSum = track(tensors, heap.empty(DType.F32, c.b(), c.hq(), c.shard()));
                SymTensor o = track(tensors, heap.empty(c.dtype(), c.b(), c.hq(), c.shard(), c.d()));
                SymTensor lse = track(tensors, heap.empty(DType.F32, c.b(), c.hq(), c.shard()));
                SymTensor ready = track(tensors, heap.zeros(DType.I64, 1));
                for (int r = 0; r < c.world(); r++) {
                    try (SymTensor tq = upload(shardOf(q, c.b(), c.hq(), c.d(), c, r), c.dtype(), c.b(), c.hq(), c.shard(), c.d())) {
                        Chunks mine = c.sharding().chunks(r, c.world(), c.shard());
                        RingStep[] steps = new RingStep[c.world()];
                        for (int step = 0; step < c.world(); step++) {
                            int src = Math.floorMod(r - step, c.world());
                            steps[step] = new RingStep(p, tq.deviceAddress(), ks[src].deviceAddress(), vs[src].deviceAddress(),
                                    o.deviceAddress(), lse.deviceAddress(), acc.deviceAddress(), rowMax.deviceAddress(),
                                    rowSum.deviceAddress(), step > 0, step == c.world() - 1, mine,
                                    c.sharding().chunks(src, c.world(), c.shard()));
                        }
                        boolean hasLastTwo = runners.size() == 1 && runners.get(0).mainloop() == GemmMainloop.HOPPER;
                        for (boolean lastTwoInOne : hasLastTwo ? new boolean[] {false, true} : new boolean[] {false}) {
                            for (SymTensor t : new SymTensor[] {acc, rowMax, rowSum, o, lse}) {
                                poison(t);
                            }
                            if (lastTwoInOne) {
                                runWithLastTwoInOne(steps, ready.deviceAddress());
                            } else {
                                for (int step = 0; step < steps.length; step++) {
                                    runners.get(step % runners.size()).ringStep(steps[step], stream);
                                }
                            }
                            iris.synchronize();
                            String what = c.describe() + ", virtual rank " + r + ", steps on " + mainloops(runners)
                                    + (lastTwoInOne ? ", last two steps in one launch" : "");
                            f.add(compareShard(what, c, r, q, k, v, o.toFloatArray(), lse.toFloatArray(), 1).failure());
                        }
                    }
                }
            } finally {
                iris.synchronize();
                closeAll(tensors);
            }
        }
        f.throwIfAny();
    }

    private static String mainloops(List<Attention> runners) {
        return String.join(" / ", runners.stream().map(a -> a.mainloop().toString()).toList());
    }

    /**
     * The steps of one virtual rank as {@link RingAttention} launches them: all but the last two
     * alone, then those two in one launch that waits for {@code ready}, which a second stream raises
     * behind a 64 MiB copy; the word is reset first.
     */
    private void runWithLastTwoInOne(RingStep[] steps, long ready) {
        long delayBytes = 64L << 20;
        Memcpy.memset(ready, 0, 8, stream);
        iris.synchronize();
        try (Stream side = Stream.create(); DeviceMemory from = DeviceMemory.allocate(delayBytes);
             DeviceMemory to = DeviceMemory.allocate(delayBytes)) {
            Memcpy.deviceToDevice(to.address(), from.address(), delayBytes, side);
            side.writeValue32(ready, 1);
            attention.ring(iris.deviceContext(), steps, ready, stream);
            side.synchronize();
            iris.synchronize();
        }
    }

    /**
     * {@link RingAttention} on {@code a}'s kernels over the job's ranks on small sequences (S = 256
     * or 512 per rank): every rank's rows against the CPU reference; a second call on re-poisoned
     * outputs gives the same bits.
     */
    private void ringVsReference(Attention a) {
        Failures f = new Failures();
        List<RingCase> cases = List.of(
                new RingCase(DType.BF16, 2, 4, 2, 256, 128, true, Sharding.ZIG_ZAG, world),
                new RingCase(DType.BF16, 1, 4, 1, 512, 64, true, Sharding.ZIG_ZAG, world),
                new RingCase(DType.BF16, 1, 4, 2, 512, 128, true, Sharding.CONTIGUOUS, world),
                new RingCase(DType.BF16, 2, 4, 2, 256, 64, false, Sharding.CONTIGUOUS, world),
                new RingCase(DType.F16, 1, 4, 2, 512, 128, false, Sharding.ZIG_ZAG, world));
        for (RingCase c : cases) {
            long seed = seedShared("ring", stable(c));
            Qkv in = c.random(seed);
            float[] q = in.q(), k = in.k(), v = in.v();
            try (SymTensor tq = upload(shardOf(q, c.b(), c.hq(), c.d(), c, rank), c.dtype(), c.b(), c.hq(), c.shard(), c.d());
                 SymTensor tk = upload(shardOf(k, c.b(), c.hkv(), c.d(), c, rank), c.dtype(), c.b(), c.hkv(), c.shard(), c.d());
                 SymTensor tv = upload(shardOf(v, c.b(), c.hkv(), c.d(), c, rank), c.dtype(), c.b(), c.hkv(), c.shard(), c.d());
                 SymTensor to = heap.empty(c.dtype(), c.b(), c.hq(), c.shard(), c.d());
                 SymTensor tl = heap.empty(DType.F32, c.b(), c.hq(), c.shard());
                 RingAttention ring = RingAttention.create(iris, a, c.shardProblem(), c.sharding())) {
                poison(to);
                poison(tl);
                ring.forward(tq, tk, tv, to, tl, stream);
                iris.synchronize();
                float[] o1 = to.toFloatArray();
                float[] l1 = tl.toFloatArray();
                f.add(compareShard(c.describe() + ", " + a.mainloop(), c, rank, q, k, v, o1, l1, 1).failure());
                poison(to);
                poison(tl);
                ring.forward(tq, tk, tv, to, tl, stream);
                iris.synchronize();
                f.add(sameBits(c.describe() + ": second call, O", to.toFloatArray(), o1));
                f.add(sameBits(c.describe() + ": second call, lse", tl.toFloatArray(), l1));
            }
        }
        f.throwIfAny();
    }

    /**
     * Ring attention on S = 4096 x world (B 1, Hq 8, Hkv 2, D 128), zig-zag causal and contiguous
     * non-causal, against the single-GPU kernel run on the gathered (whole-sequence) inputs: every
     * element within both results' bounds, a taken from the single-GPU kernel on |V|; 16 sampled
     * rows per head against the CPU reference.
     */
    private void ringLargeVsLocal() {
        Failures f = new Failures();
        int shard = 4096;
        for (RingCase c : List.of(new RingCase(DType.BF16, 1, 8, 2, shard, 128, true, Sharding.ZIG_ZAG, world),
                new RingCase(DType.BF16, 1, 8, 2, shard, 128, false, Sharding.CONTIGUOUS, world))) {
            long seed = seedShared("ring-large", stable(c));
            int s = c.total();
            Qkv in = c.random(seed);
            float[] q = in.q(), k = in.k(), v = in.v();
            float[] absV = v.clone();
            for (int i = 0; i < absV.length; i++) {
                absV[i] = Math.abs(absV[i]);
            }
            AttentionProblem whole = AttentionProblem.of(c.dtype(), c.b(), c.hq(), c.hkv(), s, s, c.d(), c.causal());
            try (SymTensor tq = upload(shardOf(q, c.b(), c.hq(), c.d(), c, rank), c.dtype(), c.b(), c.hq(), c.shard(), c.d());
                 SymTensor tk = upload(shardOf(k, c.b(), c.hkv(), c.d(), c, rank), c.dtype(), c.b(), c.hkv(), c.shard(), c.d());
                 SymTensor tv = upload(shardOf(v, c.b(), c.hkv(), c.d(), c, rank), c.dtype(), c.b(), c.hkv(), c.shard(), c.d());
                 SymTensor to = heap.empty(c.dtype(), c.b(), c.hq(), c.shard(), c.d());
                 SymTensor tl = heap.empty(DType.F32, c.b(), c.hq(), c.shard());
                 SymTensor gq = upload(q, c.dtype(), c.b(), c.hq(), s, c.d());
                 SymTensor gk = upload(k, c.dtype(), c.b(), c.hkv(), s, c.d());
                 SymTensor gv = upload(v, c.dtype(), c.b(), c.hkv(), s, c.d());
                 SymTensor gabs = upload(absV, c.dtype(), c.b(), c.hkv(), s, c.d());
                 SymTensor go = heap.empty(c.dtype(), c.b(), c.hq(), s, c.d());
                 SymTensor ga = heap.empty(c.dtype(), c.b(), c.hq(), s, c.d());
                 SymTensor gl = heap.empty(DType.F32, c.b(), c.hq(), s);
                 RingAttention ring = RingAttention.create(iris, attention, c.shardProblem(), c.sharding())) {
                for (SymTensor t : new SymTensor[] {to, tl, go, ga, gl}) {
                    poison(t);
                }
                ring.forward(tq, tk, tv, to, tl, stream);
                attention.forward(gq, gk, gv, go, gl, c.causal(), stream);
                attention.forward(gq, gk, gabs, ga, null, c.causal(), stream);
                iris.synchronize();
                float[] o = to.toFloatArray();
                float[] lse = tl.toFloatArray();
                float[] lo = go.toFloatArray();
                float[] la = ga.toFloatArray();
                float[] ll = gl.toFloatArray();
                Misses m = new Misses(c.describe() + " vs the single-GPU kernel on the gathered inputs");
                double u = c.dtype().unitRoundoff();
                for (int bh = 0; bh < c.b() * c.hq(); bh++) {
                    for (int i = 0; i < c.shard(); i++) {
                        int pos = c.sharding().globalPosition(rank, world, c.shard(), i);
                        int mine = bh * c.shard() + i;
                        int theirs = bh * s + pos;
                        for (int e = 0; e < c.d(); e++) {
                            double ref = lo[theirs * c.d() + e];
                            double a = la[theirs * c.d() + e] * (1 + 2 * u);
                            m.element("o[" + bh + ", local " + i + " = position " + pos + "," + e + "]", o[mine * c.d() + e], ref,
                                    2 * u * Math.abs(ref) + 4 * u * a + 0x1p-19 * a);
                        }
                        m.lse("[" + bh + ", position " + pos + "]", lse[mine], ll[theirs]);
                    }
                }
                f.add(m.failure());
                f.add(compareShard(c.describe() + ", sampled rows vs CPU", c, rank, q, k, v, o, lse, c.shard() / 16).failure());
                System.out.printf(Locale.ROOT, "attention: rank %d: %s: worst error / bound vs local %.3f%n", rank, c.describe(), m.worst());
            }
        }
        f.throwIfAny();
    }

    /** A ring call captured into a CUDA graph (barriers, copies on the second stream, steps), replayed: equal to eager calls bit for bit. */
    private void ringGraphReplay() throws Exception {
        Failures f = new Failures();
        RingCase c = new RingCase(DType.BF16, 1, 8, 2, 1024, 128, true, Sharding.ZIG_ZAG, world);
        try (SymTensor tq = heap.empty(c.dtype(), c.b(), c.hq(), c.shard(), c.d());
             SymTensor tk = heap.empty(c.dtype(), c.b(), c.hkv(), c.shard(), c.d());
             SymTensor tv = heap.empty(c.dtype(), c.b(), c.hkv(), c.shard(), c.d());
             SymTensor graphOut = heap.empty(c.dtype(), c.b(), c.hq(), c.shard(), c.d());
             SymTensor eagerOut = heap.empty(c.dtype(), c.b(), c.hq(), c.shard(), c.d());
             RingAttention ring = RingAttention.create(iris, attention, c.shardProblem(), c.sharding());
             Stream s = Stream.create()) {
            iris.synchronize();
            iris.hostBarrier();
            s.beginCapture();
            ring.forward(tq, tk, tv, graphOut, null, s);
            try (CudaGraph graph = s.endCapture()) {
                for (int rep = 0; rep < 3; rep++) {
                    refill(seed("ring-graph", rep), tq, tk, tv);
                    poison(graphOut);
                    poison(eagerOut);
                    iris.hostBarrier();
                    graph.launch(s);
                    iris.synchronize(s);
                    ring.forward(tq, tk, tv, eagerOut, null, stream);
                    iris.synchronize();
                    f.add(sameBits("replay " + rep, graphOut.toFloatArray(), eagerOut.toFloatArray()));
                    iris.hostBarrier();
                }
            }
        }
        f.throwIfAny();
    }

    // =============================================================================================
    // flash-decode
    // =============================================================================================

    /** A decode case: this rank's {@code len} tokens of every sequence; every rank's K/V from one seed. */
    record DecodeCase(DType dtype, int b, int hq, int hkv, int d, int len, int chunkLen) {
        FlashDecodeProblem problem() {
            return FlashDecodeProblem.of(dtype, b, hq, hkv, d, len, chunkLen);
        }

        String describe() {
            return String.format(Locale.ROOT, "%s B%d Hq%d Hkv%d D%d len %d per rank, chunks of %d", dtype, b, hq, hkv, d, len, chunkLen);
        }
    }

    /** A decode case's queries [B, Hq, D] and every rank's K and V shards, [rank][B, Hkv, len, D]. */
    record DecodeInputs(DecodeCase c, float[] q, float[][] ks, float[][] vs) {}

    /** A decode case's inputs from one shared seed: every rank builds every rank's shards alike. */
    private DecodeInputs decodeInputs(long seed, DecodeCase c) {
        float[] q = AttentionReference.randomNormal(seed, c.dtype(), c.b() * c.hq() * c.d());
        return new DecodeInputs(c, q, decodeShards(seed + 1, c), decodeShards(seed + 1_000_003, c));
    }

    /** Every rank's K (or V) shard of a decode case, [rank][B, Hkv, len, D], from one shared seed. */
    private float[][] decodeShards(long seed, DecodeCase c) {
        float[][] out = new float[world][];
        for (int r = 0; r < world; r++) {
            out[r] = AttentionReference.randomNormal(seed + 17L * r, c.dtype(), c.b() * c.hkv() * c.len() * c.d());
        }
        return out;
    }

    private SymTensor uploadQ(DecodeInputs in) {
        DecodeCase c = in.c();
        return upload(in.q(), c.dtype(), c.b(), c.hq(), c.d());
    }

    private SymTensor uploadK(DecodeInputs in) {
        DecodeCase c = in.c();
        return upload(in.ks()[rank], c.dtype(), c.b(), c.hkv(), c.len(), c.d());
    }

    private SymTensor uploadV(DecodeInputs in) {
        DecodeCase c = in.c();
        return upload(in.vs()[rank], c.dtype(), c.b(), c.hkv(), c.len(), c.d());
    }

    /** A tensor of one row per (sequence, query head), [B, Hq, D], not written: decode queries or outputs. */
    private SymTensor headRows(DecodeCase c) {
        return heap.empty(c.dtype(), c.b(), c.hq(), c.d());
    }

    /** The shards concatenated along the sequence in rank order: [B, Hkv, world x len, D]. */
    static float[] concat(float[][] shards, int b, int hkv, int len, int d, int takeLen) {
        int w = shards.length;
        float[] out = new float[b * hkv * w * takeLen * d];
        for (int bh = 0; bh < b * hkv; bh++) {
            for (int r = 0; r < w; r++) {
                System.arraycopy(shards[r], bh * len * d, out, ((bh * w + r) * takeLen) * d, takeLen * d);
            }
        }
        return out;
    }

    private Misses compareDecode(String what, DecodeCase c, float[] q, float[] kAll, float[] vAll, float[] o) {
        return compareDecode(what, c, decodeReference(c, q, kAll, vAll), o);
    }

    /** The CPU reference of a case over every rank's whole shards. */
    private Row[] decodeReference(DecodeInputs in) {
        DecodeCase c = in.c();
        return decodeReference(c, in.q(), concat(in.ks(), c.b(), c.hkv(), c.len(), c.d(), c.len()),
                concat(in.vs(), c.b(), c.hkv(), c.len(), c.d(), c.len()));
    }

    /** The CPU reference of every (sequence, query head) of a case over every rank's tokens, [b x hq + h]. */
    private Row[] decodeReference(DecodeCase c, float[] q, float[] kAll, float[] vAll) {
        double scale = AttentionProblem.defaultScale(c.d());
        int skv = world * c.len();
        Row[] rows = new Row[c.b() * c.hq()];
        for (int b = 0; b < c.b(); b++) {
            for (int h = 0; h < c.hq(); h++) {
                rows[b * c.hq() + h] = AttentionReference.row(q, kAll, vAll, c.hq(), c.hkv(), 1, skv, c.d(), b, h, 0, scale, null);
            }
        }
        return rows;
    }

    /** Element e of a decode row may miss the reference by one rounding of o plus 2^-14 sum p |v| / l. */
    private static double decodeBound(DecodeCase c, Row ref, int e) {
        return c.dtype().unitRoundoff() * Math.abs(ref.o()[e]) + 0x1p-14 * ref.magnitude()[e];
    }

    private static Misses compareDecode(String what, DecodeCase c, Row[] refs, float[] o) {
        Misses m = new Misses(what);
        for (int row = 0; row < refs.length; row++) {
            for (int e = 0; e < c.d(); e++) {
                m.element("o[" + row / c.hq() + "," + row % c.hq() + "," + e + "]", o[row * c.d() + e], refs[row].o()[e],
                        decodeBound(c, refs[row], e));
            }
        }
        return m;
    }

    /**
     * Two results of one case against each other: each is within its bound of the reference, so
     * they are within the sum of both bounds of each other.
     */
    private static Misses agreeDecode(String what, DecodeCase c, Row[] refs, float[] a, float[] b) {
        Misses m = new Misses(what);
        for (int row = 0; row < refs.length; row++) {
            for (int e = 0; e < c.d(); e++) {
                int i = row * c.d() + e;
                m.element("o[" + row / c.hq() + "," + row % c.hq() + "," + e + "]", a[i], b[i], 2 * decodeBound(c, refs[row], e));
            }
        }
        return m;
    }

    /**
     * Fused flash-decode and the baseline path (partial, copy-engine all-gather, combine) against the
     * CPU reference over every rank's tokens (ragged last chunks, GQA up to 8 query heads per K/V
     * head, both dtypes and head sizes), and against each other bit for bit.
     */
    private void flashDecodeVsReference() {
        Failures f = new Failures();
        List<DecodeCase> cases = List.of(
                new DecodeCase(DType.BF16, 1, 8, 8, 128, 1000, 256),
                new DecodeCase(DType.BF16, 3, 8, 2, 64, 777, 64),
                new DecodeCase(DType.F16, 2, 32, 8, 128, 4096, 1024),
                new DecodeCase(DType.BF16, 1, 16, 2, 128, 300, 128),
                new DecodeCase(DType.F16, 2, 4, 4, 64, 64, 64));
        for (DecodeCase c : cases) {
            DecodeInputs in = decodeInputs(seedShared("decode", stable(c)), c);
            Row[] refs = decodeReference(in);
            try (FlashDecode decode = FlashDecode.create(iris, c.problem());
                 SymTensor tq = uploadQ(in); SymTensor tk = uploadK(in); SymTensor tv = uploadV(in);
                 SymTensor fused = headRows(c); SymTensor base = headRows(c)) {
                poison(fused);
                poison(base);
                decode.forward(tq, tk, tv, fused, stream);
                decode.baseline(tq, tk, tv, base, stream);
                iris.synchronize();
                float[] of = fused.toFloatArray();
                float[] ob = base.toFloatArray();
                f.add(compareDecode(c.describe() + ", fused", c, refs, of).failure());
                f.add(compareDecode(c.describe() + ", baseline", c, refs, ob).failure());
                f.add(sameBits(c.describe() + ": fused vs baseline", of, ob));
            }
        }
        f.throwIfAny();
    }

    /**
     * The conventional path ({@link FlashDecode#conventional}: partial, merge of each rank's chunks
     * into one entry per query head, all-gather of the entries, combine) against the CPU reference
     * over every rank's tokens, and against the fused kernel within the sum of both bounds: ragged
     * and single-key chunks, one chunk per rank and 79, GQA up to 8, both dtypes and head sizes. Each
     * case runs twice on fresh inputs, the second time through the address overload with a
     * caller's gather, outputs poisoned before each run.
     */
    private void flashDecodeConventionalVsReference() {
        Failures f = new Failures();
        List<DecodeCase> cases = List.of(
                new DecodeCase(DType.BF16, 1, 8, 8, 128, 1000, 256),
                new DecodeCase(DType.F16, 3, 8, 2, 64, 777, 64),
                new DecodeCase(DType.BF16, 2, 32, 8, 128, 4096, 1024),
                new DecodeCase(DType.F16, 1, 16, 2, 128, 301, 128),
                new DecodeCase(DType.BF16, 2, 4, 4, 64, 1, 64),
                new DecodeCase(DType.F16, 1, 8, 1, 64, 5000, 64),
                new DecodeCase(DType.BF16, 2, 16, 2, 64, 65, 64));
        for (DecodeCase c : cases) {
            try (FlashDecode decode = FlashDecode.create(iris, c.problem());
                 SymTensor tq = headRows(c);
                 SymTensor tk = heap.empty(c.dtype(), c.b(), c.hkv(), c.len(), c.d());
                 SymTensor tv = heap.empty(c.dtype(), c.b(), c.hkv(), c.len(), c.d());
                 SymTensor fused = headRows(c); SymTensor conv = headRows(c)) {
                for (int round = 0; round < 2; round++) {
                    DecodeInputs in = decodeInputs(seedShared("decode-conventional", stable(c), round), c);
                    tq.copyFrom(in.q());
                    tk.copyFrom(in.ks()[rank]);
                    tv.copyFrom(in.vs()[rank]);
                    poison(fused);
                    poison(conv);
                    if (round == 0) {
                        decode.conventional(tq, tk, tv, conv, stream);
                    } else {
                        decode.conventional(c.problem(), tq.deviceAddress(), tk.deviceAddress(), tv.deviceAddress(), conv.deviceAddress(),
                                decode::copyEngineGather, stream);
                    }
                    decode.forward(tq, tk, tv, fused, stream);
                    iris.synchronize();
                    Row[] refs = decodeReference(in);
                    String what = c.describe() + ", call " + round;
                    float[] oc = conv.toFloatArray();
                    f.add(compareDecode(what + ", conventional", c, refs, oc).failure());
                    f.add(agreeDecode(what + ": conventional vs fused", c, refs, oc, fused.toFloatArray()).failure());
                }
            }
        }
        f.throwIfAny();
    }

    /**
     * One instance, calls with changing lengths (and so changing chunk counts, which restart the
     * arrival counters): each call against the CPU reference.
     */
    private void flashDecodeLengthsChange() {
        Failures f = new Failures();
        DecodeCase max = new DecodeCase(DType.BF16, 2, 8, 2, 128, 1000, 256);
        DecodeInputs in = decodeInputs(seedShared("decode-lengths", 1), max);
        float[] q = in.q();
        float[][] ks = in.ks();
        float[][] vs = in.vs();
        try (FlashDecode decode = FlashDecode.create(iris, max.problem()); SymTensor tq = uploadQ(in); SymTensor out = headRows(max)) {
            for (int len : new int[] {1000, 700, 1000, 1000, 64, 1, 1000}) {
                DecodeCase c = new DecodeCase(max.dtype(), max.b(), max.hq(), max.hkv(), max.d(), len, max.chunkLen());
                float[][] kLen = new float[world][];
                float[][] vLen = new float[world][];
                for (int r = 0; r < world; r++) {
                    kLen[r] = concat(new float[][] {ks[r]}, c.b(), c.hkv(), max.len(), c.d(), len);
                    vLen[r] = concat(new float[][] {vs[r]}, c.b(), c.hkv(), max.len(), c.d(), len);
                }
                try (SymTensor tk = upload(kLen[rank], c.dtype(), c.b(), c.hkv(), len, c.d());
                     SymTensor tv = upload(vLen[rank], c.dtype(), c.b(), c.hkv(), len, c.d())) {
                    poison(out);
                    decode.forward(tq, tk, tv, out, stream);
                    iris.synchronize();
                    f.add(compareDecode(c.describe() + ", call " + decode.calls(), c, q, concat(kLen, c.b(), c.hkv(), len, c.d(), len),
                            concat(vLen, c.b(), c.hkv(), len, c.d(), len), out.toFloatArray()).failure());
                }
            }
            f.check(decode.counterResets() >= 2, () -> "expected the arrival counters to restart when the chunk count changed, "
                    + "counted " + decode.counterResets() + " restarts");
            // A replay would repeat one call's epoch and combine stale partials: capture is refused.
            long before = decode.calls();
            try (Stream capturing = Stream.create();
                 SymTensor tk = uploadK(in); SymTensor tv = uploadV(in)) {
                capturing.beginCapture();
                try {
                    expectRefused(f, "forward while capturing", "stream is capturing a CUDA graph, and forward's calls cannot be"
                            + " replayed (each has its own epoch); call forward eagerly", () -> decode.forward(tq, tk, tv, out, capturing));
                } finally {
                    capturing.endCapture().close();
                }
            }
            f.check(decode.calls() == before, () -> "a refused forward was counted");
        }
        f.throwIfAny();
    }

    /**
     * B 2, Hq 32, Hkv 8, D 128, 8192 tokens per rank: fused against the baseline bit for bit, and
     * every row against the CPU reference.
     */
    private void flashDecodeLargeVsBaseline() {
        Failures f = new Failures();
        DecodeCase c = new DecodeCase(DType.BF16, 2, 32, 8, 128, 8192,
                FlashDecodeProblem.defaultChunkLen(2, 8, 8192, iris.deviceProperties().multiprocessorCount()));
        DecodeInputs in = decodeInputs(seedShared("decode-large", 1), c);
        try (FlashDecode decode = FlashDecode.create(iris, c.problem());
             SymTensor tq = uploadQ(in); SymTensor tk = uploadK(in); SymTensor tv = uploadV(in);
             SymTensor fused = headRows(c); SymTensor base = headRows(c)) {
            for (int rep = 0; rep < 3; rep++) {
                poison(fused);
                poison(base);
                decode.forward(tq, tk, tv, fused, stream);
                decode.baseline(tq, tk, tv, base, stream);
                iris.synchronize();
                f.add(sameBits(c.describe() + ": fused vs baseline, call " + rep, fused.toFloatArray(), base.toFloatArray()));
            }
            f.add(compareDecode(c.describe() + ", fused", c, decodeReference(in), fused.toFloatArray()).failure());
        }
        f.throwIfAny();
    }

    /**
     * Fused flash-decode (B 2, Hq 16, Hkv 2, so G = 8 query heads per K/V head and 8 combining CTAs
     * per (sequence, head); 16 chunks of 64 keys per rank) while a kernel on another stream holds
     * every SM of this rank's GPU but one ({@link SmHog}, resident before the call starts): five of
     * the call's CTAs fit the free SM at a time, fewer than the combiners of one (sequence, head).
     * Checked against the CPU reference and the baseline path (run after the SMs are let go) bit for
     * bit, with no device timeout, and the SMs still held when the call ended.
     *
     * <p>Why it failed before the CTAs claimed their chunks: the combiners of the first (sequence,
     * head) took every slot of the free SM and waited for the partials of later chunks, whose CTAs
     * could only start once a combiner left. The call ended in a device timeout at wait site 9101
     * (every rank's partials of a (sequence, head)). Now a waiting combiner computes the chunks
     * that no CTA has claimed.
     */
    private void flashDecodeOneSmFree() {
        Failures f = new Failures();
        DecodeCase c = new DecodeCase(DType.BF16, 2, 16, 2, 128, 1024, 64);
        DecodeInputs in = decodeInputs(seedShared("decode-held-sms", stable(c)), c);
        Duration atMost = iris.config().deviceTimeout().multipliedBy(3).plusSeconds(10);
        try (FlashDecode decode = FlashDecode.create(iris, c.problem());
             SymTensor tq = uploadQ(in); SymTensor tk = uploadK(in); SymTensor tv = uploadV(in);
             SymTensor fused = headRows(c); SymTensor base = headRows(c)) {
            f.check(c.problem().group() == 8 && c.problem().chunks() == 16, () -> c.describe() + ": expected G 8 and 16 chunks");
            poison(fused);
            poison(base);
            String what = c.describe() + ", fused, all SMs but one held";
            long start = System.nanoTime();
            try (SmHog hog = SmHog.hold(iris, 1, atMost)) {
                decode.forward(tq, tk, tv, fused, stream);
                iris.synchronize();
                hog.checkStillHolding();
            }
            System.out.printf(Locale.ROOT, "attention: rank %d: %s: %.1f ms%n", rank, what, (System.nanoTime() - start) / 1e6);
            decode.baseline(tq, tk, tv, base, stream);
            iris.synchronize();
            float[] of = fused.toFloatArray();
            f.add(compareDecode(what, c, decodeReference(in), of).failure());
            f.add(sameBits(what + " vs baseline", of, base.toFloatArray()));
        }
        f.throwIfAny();
    }

    // =============================================================================================
    // misuse
    // =============================================================================================

    /** Bad arguments are refused before anything is launched, and every instance stays usable. */
    private void misuse() {
        Failures f = new Failures();
        LocalCase c = new LocalCase(DType.BF16, 1, 4, 2, 256, 256, 64, false);
        Qkv in = c.random(seed("misuse", 0));
        try (LocalTensors t = localTensors(c, in); SymTensor wrong = heap.empty(DType.F16, c.b(), c.hq(), c.sq(), c.d())) {
            SymTensor tq = t.q(), tk = t.k(), tv = t.v(), to = t.o();
            expectRefused(f, "o of another dtype", "expected BF16", () -> attention.forward(tq, tk, tv, wrong, null, false, stream));
            expectRefused(f, "o aliasing q", "overlaps Q", () -> attention.forward(c.problem(),
                    tq.deviceAddress(), tk.deviceAddress(), tv.deviceAddress(), tq.deviceAddress() + 128, 0, stream));
            expectRefused(f, "lse of the wrong shape", "lse", () -> attention.forward(tq, tk, tv, to, wrong, false, stream));
            expectRefused(f, "ring K off the heap", "not inside this rank's symmetric heap", () -> {
                try (RingAttention ring = RingAttention.create(iris, attention, c.problem(), Sharding.CONTIGUOUS);
                     DeviceMemory off = DeviceMemory.allocate(c.problem().kvBytes())) {
                    ring.forward(tq.deviceAddress(), off.address(), tv.deviceAddress(), to.deviceAddress(), 0, stream);
                }
            });
            f.add(runLocal(attention, "after the refused calls", c, in, t).failure());
        }
        f.throwIfAny();
    }

    private static void expectRefused(Failures f, String what, String says, Runnable call) {
        try {
            call.run();
            f.fail(what + ": not refused");
        } catch (IllegalArgumentException e) {
            f.check(e.getMessage().contains(says), () -> what + ": the message '" + e.getMessage() + "' should say '" + says + "'");
        }
    }

    // =============================================================================================
    // helpers
    // =============================================================================================

    /** Random normal Q [B, Hq, Sq, D], K and V [B, Hkv, Skv, D] from seed, seed + 1 and seed + 2 (in their dtype). */
    record Qkv(float[] q, float[] k, float[] v) {
        static Qkv random(long seed, DType dtype, int b, int hq, int hkv, int sq, int skv, int d) {
            return new Qkv(AttentionReference.randomNormal(seed, dtype, b * hq * sq * d),
                    AttentionReference.randomNormal(seed + 1, dtype, b * hkv * skv * d),
                    AttentionReference.randomNormal(seed + 2, dtype, b * hkv * skv * d));
        }
    }

    private SymTensor upload(float[] values, DType t, long... shape) {
        SymTensor x = heap.empty(t, shape);
        x.copyFrom(values);
        return x;
    }

    /** Fresh normal values in q, k and v, from seed, seed + 1 and seed + 2 (in their dtype). */
    private static void refill(long seed, SymTensor q, SymTensor k, SymTensor v) {
        q.copyFrom(AttentionReference.randomNormal(seed, q.dtype(), (int) q.numel()));
        k.copyFrom(AttentionReference.randomNormal(seed + 1, k.dtype(), (int) k.numel()));
        v.copyFrom(AttentionReference.randomNormal(seed + 2, v.dtype(), (int) v.numel()));
    }

    private void poison(SymTensor t) {
        Memcpy.memset(t.deviceAddress(), 0xFF, t.byteSize(), stream);
        iris.synchronize();
    }

    private static SymTensor track(List<SymTensor> tensors, SymTensor t) {
        tensors.add(t);
        return t;
    }

    private static void closeAll(List<SymTensor> tensors) {
        for (int i = tensors.size() - 1; i >= 0; i--) {
            tensors.get(i).close();
        }
    }

    /** Null when equal bit for bit (as floats read from the outputs), else where they differ first. */
    static String sameBits(String what, float[] got, float[] expected) {
        if (got.length != expected.length) {
            return what + ": " + got.length + " elements, expected " + expected.length;
        }
        Misses m = new Misses(what);
        for (int i = 0; i < got.length; i++) {
            m.same("element " + i, got[i], expected[i]);
        }
        return m.failure();
    }

    /** A seed for this rank's own inputs. */
    private long seed(String what, long... parts) {
        return TestSeeds.mix64(seedShared(what, parts) ^ rank);
    }

    /** A seed every rank computes alike (for inputs that form one global sequence). */
    private long seedShared(String what, long... parts) {
        return TestSeeds.derive(runSeed, what, parts);
    }

    /**
     * A case's seed part that every JVM computes alike: a record's own hashCode() mixes in its enum
     * fields' identity hashes, which differ between the ranks' JVMs (and between runs), so ranks that
     * build the same global sequence from it would each build a different one.
     */
    static long stable(Record c) {
        return c.toString().hashCode();
    }

}
