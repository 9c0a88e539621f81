package dev.irisjvm.bench.attention;

import dev.irisjvm.bench.RunRecord;
import dev.irisjvm.bench.SharedGpu;
import dev.irisjvm.bench.SweepCommand;
import dev.irisjvm.bench.results.AttentionBenchResult.Conventional;
import dev.irisjvm.bench.results.AttentionBenchResult.DecodePoint;
import dev.irisjvm.bench.results.AttentionBenchResult.LocalPoint;
import dev.irisjvm.bench.results.AttentionBenchResult.Portable;
import dev.irisjvm.bench.results.AttentionBenchResult.RingPoint;
import dev.irisjvm.bench.results.AttentionBenchResult;
import dev.irisjvm.bench.rma.RepTimer;
import dev.irisjvm.bench.rma.RmaKernels;
import dev.irisjvm.bench.rma.SizeList;
import dev.irisjvm.bench.rma.TimingStats;
import dev.irisjvm.core.DType;
import dev.irisjvm.core.HalfFloats;
import dev.irisjvm.core.Iris;
import dev.irisjvm.core.IrisConfig;
import dev.irisjvm.core.SymTensor;
import dev.irisjvm.core.SymmetricHeap;
import dev.irisjvm.core.gpu.DeviceMemory;
import dev.irisjvm.core.gpu.DeviceProperties;
import dev.irisjvm.core.gpu.Gpu;
import dev.irisjvm.core.gpu.Stream;
import dev.irisjvm.core.internal.Memcpy;
import dev.irisjvm.kernels.KernelLibrary;
import dev.irisjvm.kernels.attention.Attention;
import dev.irisjvm.kernels.attention.AttentionProblem;
import dev.irisjvm.kernels.attention.Chunks;
import dev.irisjvm.kernels.attention.FlashDecode;
import dev.irisjvm.kernels.attention.FlashDecodeProblem;
import dev.irisjvm.kernels.attention.RingAttention;
import dev.irisjvm.kernels.attention.RingStep;
import dev.irisjvm.kernels.attention.Sharding;
import dev.irisjvm.kernels.baselines.NcclComm;
import dev.irisjvm.kernels.gemm.GemmMainloop;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.IntToLongFunction;
import org.bytedeco.javacpp.BytePointer;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

/**
 * The attention benchmark, one JVM per rank ({@code bin/iris-run -n 2}); {@code bin/iris-bench attention}
 * runs it after PyTorch's SDPA ({@code attention_sdpa.py}) and before the report. Three parts, all
 * BF16, B 1 unless said, 32 query heads, 8 K/V heads, head size 128:
 *
 * <ol>
 * <li><b>local</b>: {@link Attention#forward} on one GPU, S = 4K and 16K, causal and not (rank 0's
 *     figures; every rank runs it on its own GPU); with {@code --portable} also the portable mainloop
 *     ({@code Attention.create(GemmMainloop.PORTABLE)}) as implementation iris-portable on the same
 *     inputs, its output compared with the default one's.</li>
 * <li><b>ring</b>: {@link RingAttention} over all ranks at S = 32K and 128K in all (zig-zag when
 *     causal, contiguous otherwise), against (i) the ring's own launches on local buffers with no
 *     communication, (ii) one local launch of the same per-rank work (Sq = S / W against Skv = S; for
 *     causal, the causal kernel on the whole sequence divided by W), and (iii) NCCL all-gather of K
 *     and V followed by the local computation on the gathered K/V (not causal: grouped per-head
 *     all-gathers into [B, Hkv, S, D] and one local launch; causal zig-zag: one all-gather into
 *     [W][B, Hkv, S/W, D] and the ring's launches on the gathered shards, which carry the global
 *     positions the plain causal kernel cannot express). Also the K/V bytes per rank of both.</li>
 * <li><b>decode</b>: {@link FlashDecode}, batch 1 and 8, 32K to 512K KV tokens per sequence split over
 *     the ranks: the fused kernel against the conventional unfused decode ({@link
 *     FlashDecode#conventional}: partial kernel + merge kernel + NCCL all-gather of one entry per
 *     query head + combine kernel), and against the all-partials path ({@link FlashDecode#baseline}:
 *     partial kernel + NCCL all-gather of every chunk's partial + combine kernel); each step alone;
 *     and, once per run, a device-to-device copy of up to 2 GiB (the largest point's K/V per rank), the
 *     HBM bandwidth the fused kernel's time is judged against (its floor: K/V bytes ÷ that).</li>
 * </ol>
 *
 * <p>Method: inputs standard normal, generated on the GPU; per point {@code --warmup} untimed calls,
 * then {@code --reps} calls queued behind a gate (a kernel waiting on a host flag, so the host's
 * launch cost is not timed), each between its own pair of CUDA events; the median per call counts,
 * and for work spanning ranks the largest of the ranks' medians. Rank 0 writes the JSON. Exit code
 * 0, 2 for bad options, 3 when an output comparison failed (the JSON is complete and says which).
 *
 * <pre>
 * bin/iris-run -n 2 -- java -cp 'iris-bench/target/lib/*' dev.irisjvm.bench.attention.AttentionBench --out attention-bench.json
 * </pre>
 */
@Command(name = "AttentionBench", mixinStandardHelpOptions = true,
        description = "Local attention, ring attention and flash-decode against their baselines, timed with CUDA events.")
public final class AttentionBench extends SweepCommand {
    static final DType TYPE = DType.BF16;
    static final long HEAP_HEADROOM = 256L << 20;
    static final String OK = "ok";
    /**
     * How far the conventional decode's output may be from the fused one's, relative to max |o|: a
     * few BF16 roundings (each at most 2^-8 of the value), as the ring check allows.
     */
    static final double NEAR = 0x1p-6;

    @Mixin
    AttentionBenchOptions options = new AttentionBenchOptions();

    private Iris iris;
    private SymmetricHeap heap;
    private Stream stream;
    private RepTimer timer;
    private Attention attention;
    /** Attention on the portable mainloop (--portable), else null. */
    private Attention portable;
    private NcclComm nccl;
    private int world;
    private int rank;
    private long seed;
    private int failedChecks;

    public static void main(String[] args) {
        main(new AttentionBench(), args);
    }

    @Override
    public Integer call() throws Exception {
        IrisConfig env = IrisConfig.fromEnvironment();
        if (!valid(() -> options.validate(env.worldSize()))) {
            return EXIT_USAGE;
        }
        int gpu = env.deviceAmong(Gpu.deviceCount());
        Gpu.setDevice(gpu);
        DeviceProperties device = Gpu.properties(gpu);
        long heapBytes = heapBytes(options, env.worldSize(), device.multiprocessorCount());
        List<LocalPoint> local = new ArrayList<>();
        List<RingPoint> ring = new ArrayList<>();
        List<DecodePoint> decode = new ArrayList<>();
        AttentionBenchResult.HbmCopy hbmCopy = null;
        String software;
        try (Iris i = Iris.init(env.withHeapSize(heapBytes)); KernelLibrary library = KernelLibrary.forClasspath();
             RmaKernels kernels = new RmaKernels(i, library); Attention a = Attention.create();
             Attention pa = options.portable() ? Attention.create(GemmMainloop.PORTABLE) : null) {
            if (SharedGpu.refuses(i, name())) {
                return SharedGpu.EXIT_SHARED_GPU;
            }
            iris = i;
            heap = i.heap();
            stream = i.stream();
            attention = a;
            portable = pa;
            world = i.worldSize();
            rank = i.rank();
            seed = runSeed(i, options.seed);
            boolean needsNccl = options.parts().contains("ring") || options.parts().contains("decode");
            try (NcclComm n = needsNccl ? NcclComm.open(i) : NcclComm.disabled(i, "not needed"); RepTimer t = new RepTimer(i, kernels, stream, true)) {
                nccl = n;
                timer = t;
                software = RunRecord.software(n.available() ? n.version() : "NCCL unavailable (" + n.reason() + ")");
                say("%s ranks, %s, %s, heap %s, seed %d", world, device.name(), software, SizeList.format(heapBytes), seed);
                if (options.parts().contains("local")) {
                    for (int s : options.localSeqs()) {
                        for (boolean causal : new boolean[] {false, true}) {
                            local.add(local(s, causal));
                        }
                    }
                }
                if (options.parts().contains("ring")) {
                    for (int s : options.ringSeqs()) {
                        for (boolean causal : new boolean[] {false, true}) {
                            ring.add(ring(s, causal));
                        }
                    }
                }
                if (options.parts().contains("decode")) {
                    hbmCopy = hbmCopy(hbmCopyBytes());
                    for (int b : options.decodeBatches()) {
                        for (int len : options.decodeLens()) {
                            decode.add(decode(b, len, device.multiprocessorCount()));
                        }
                    }
                }
            } finally {
                i.synchronize();
            }
        }
        AttentionBenchResult.Sdpa sdpa = null;
        if (options.sdpa != null) {
            try {
                sdpa = AttentionBenchResult.readSdpa(options.sdpa);
            } catch (Exception e) {
                System.err.println("AttentionBench: cannot read " + options.sdpa + ": " + e.getMessage());
            }
        }
        if (rank == 0) {
            AttentionBenchResult result = new AttentionBenchResult(RunRecord.now(),
                    world + " x " + RunRecord.device(device), software, RunRecord.command(world, AttentionBench.class, spec), world,
                    options.warmup, sdpa, local, ring, decode, hbmCopy);
            RunRecord.write(options.out.path(), result::write);
            System.out.println("AttentionBench: wrote " + options.out.path().toAbsolutePath());
        }
        return failedChecks > 0 ? EXIT_CHECK_FAILED : 0;
    }

    // ---- local -------------------------------------------------------------------------------------

    private LocalPoint local(int s, boolean causal) {
        AttentionProblem p = AttentionProblem.of(TYPE, 1, options.qHeads, options.kvHeads, s, s, options.headDim, causal);
        List<SymTensor> made = new ArrayList<>();
        try {
            SymTensor q = track(made, heap.randn(seed + s, TYPE, 1, p.qHeads(), s, p.headDim()));
            SymTensor k = track(made, heap.randn(seed + s + 1, TYPE, 1, p.kvHeads(), s, p.headDim()));
            SymTensor v = track(made, heap.randn(seed + s + 2, TYPE, 1, p.kvHeads(), s, p.headDim()));
            SymTensor o = track(made, heap.empty(TYPE, 1, p.qHeads(), s, p.headDim()));
            SymTensor lse = track(made, heap.empty(DType.F32, 1, p.qHeads(), s));
            TimingStats t = time(options.reps, () -> attention.forward(q, k, v, o, lse, causal, stream));
            Portable onPortable = portable == null ? null : localPortable(p, q, k, v, o, lse, made);
            LocalPoint point = new LocalPoint("bf16", 1, p.qHeads(), p.kvHeads(), s, p.headDim(), causal, t.reps(), t.medianUs(), t.minUs(),
                    t.maxUs(), p.flops() / (t.medianUs() * 1e6), onPortable);
            say("local S %d%s: %.1f us, %.1f TFLOP/s%s", s, causal ? " causal" : "", t.medianUs(), point.tflops(), onPortable == null ? ""
                    : String.format(Locale.ROOT, "; %s %.1f us, %.1f TFLOP/s; %s", AttentionBenchResult.IRIS_PORTABLE,
                            onPortable.medianUs(), onPortable.tflops(), onPortable.check()));
            return point;
        } finally {
            iris.synchronize();
            closeAll(made);
        }
    }

    /**
     * The portable mainloop on the local point's inputs, timed like the default one; then both once
     * more into poisoned outputs, the portable output compared with the default one's as ring
     * attention's is with the all-gather path's.
     */
    private Portable localPortable(AttentionProblem p, SymTensor q, SymTensor k, SymTensor v, SymTensor o, SymTensor lse,
                                   List<SymTensor> made) {
        boolean causal = p.causal();
        SymTensor o2 = track(made, heap.empty(TYPE, 1, p.qHeads(), p.qLen(), p.headDim()));
        TimingStats t = time(options.reps, () -> portable.forward(q, k, v, o2, lse, causal, stream));
        Memcpy.memset(o.deviceAddress(), 0xFF, o.byteSize(), stream);
        Memcpy.memset(o2.deviceAddress(), 0xFF, o2.byteSize(), stream);
        attention.forward(q, k, v, o, lse, causal, stream);
        portable.forward(q, k, v, o2, lse, causal, stream);
        iris.synchronize();
        String check = compare(o2, o, "portable - iris");
        if (!check.startsWith(OK)) {
            failedChecks++;
        }
        return new Portable(t.reps(), t.medianUs(), t.minUs(), t.maxUs(), p.flops() / (t.medianUs() * 1e6), check);
    }

    // ---- ring --------------------------------------------------------------------------------------

    private RingPoint ring(int total, boolean causal) {
        int shard = total / world;
        Sharding sharding = causal ? Sharding.ZIG_ZAG : Sharding.CONTIGUOUS;
        int hq = options.qHeads;
        int hkv = options.kvHeads;
        int d = options.headDim;
        AttentionProblem p = AttentionProblem.of(TYPE, 1, hq, hkv, shard, shard, d, causal);
        long kvBytes = p.kvBytes();
        List<SymTensor> made = new ArrayList<>();
        List<AutoCloseable> other = new ArrayList<>();
        try {
            SymTensor q = track(made, heap.randn(seed + 11L * total, TYPE, 1, hq, shard, d));
            SymTensor k = track(made, heap.randn(seed + 11L * total + 1, TYPE, 1, hkv, shard, d));
            SymTensor v = track(made, heap.randn(seed + 11L * total + 2, TYPE, 1, hkv, shard, d));
            SymTensor o = track(made, heap.empty(TYPE, 1, hq, shard, d));
            SymTensor lse = track(made, heap.empty(DType.F32, 1, hq, shard));
            SymTensor o2 = track(made, heap.empty(TYPE, 1, hq, shard, d));
            SymTensor lse2 = track(made, heap.empty(DType.F32, 1, hq, shard));
            SymTensor gk = track(made, heap.empty(TYPE, 1, hkv, total, d));
            SymTensor gv = track(made, heap.empty(TYPE, 1, hkv, total, d));
            RingAttention ringAttention = RingAttention.create(iris, attention, p, sharding);
            other.add(ringAttention);
            // The F32 state and the last launch's ready word (localRing's layout), raised once: the
            // local runs have no copy to wait for.
            DeviceMemory state = DeviceMemory.allocate(p.qRows() * d * 4 + 2 * p.qRows() * 4 + 1024);
            other.add(state);
            long ready = localRingParts(p, state.address())[3];
            Memcpy.memset(ready, 0, 8, stream);
            stream.writeValue32(ready, 1);

            // 1. Ring attention.
            TimingStats ringT = time(options.reps, () -> ringAttention.forward(q, k, v, o, lse, stream));
            // 2. The ring's launches on local buffers (this rank's K/V stand in for every source).
            Runnable local = localRing(p, sharding, q.deviceAddress(), o2.deviceAddress(), lse2.deviceAddress(), state.address(),
                    src -> k.deviceAddress(), src -> v.deviceAddress());
            TimingStats stepsT = time(options.reps, local);
            // 3. All-gather of K and V with NCCL, then the local computation on the gathered K/V.
            double gatherUs = 0;
            double allGatherUs = 0;
            double localUs = 0;
            String check = "not checked (NCCL unavailable: " + nccl.reason() + ")";
            if (nccl.available()) {
                long[] in;
                long[] out;
                long count;
                Runnable compute;
                if (!causal) {
                    // One all-gather per (sequence, head): rank r's rows land at r x shard of that head's [S, D].
                    int heads = hkv;
                    in = new long[2 * heads];
                    out = new long[2 * heads];
                    long headIn = (long) shard * d * 2;
                    long headOut = (long) total * d * 2;
                    for (int h = 0; h < heads; h++) {
                        in[h] = k.deviceAddress() + h * headIn;
                        out[h] = gk.deviceAddress() + h * headOut;
                        in[heads + h] = v.deviceAddress() + h * headIn;
                        out[heads + h] = gv.deviceAddress() + h * headOut;
                    }
                    count = (long) shard * d;
                    AttentionProblem whole = p.withKvLen(total);
                    compute = () -> attention.forward(whole, q.deviceAddress(), gk.deviceAddress(), gv.deviceAddress(), o2.deviceAddress(),
                            lse2.deviceAddress(), stream);
                } else {
                    // One all-gather each of K and V: [W][B, Hkv, S/W, D]; then the ring's launches on the gathered
                    // shards (the plain causal kernel cannot follow zig-zag positions).
                    in = new long[] {k.deviceAddress(), v.deviceAddress()};
                    out = new long[] {gk.deviceAddress(), gv.deviceAddress()};
                    count = p.kvRows() * d;
                    compute = localRing(p, sharding, q.deviceAddress(), o2.deviceAddress(), lse2.deviceAddress(), state.address(),
                            src -> gk.deviceAddress() + src * kvBytes, src -> gv.deviceAddress() + src * kvBytes);
                }
                TimingStats agT = time(options.reps, () -> {
                    nccl.groupAllGather(in, out, count, TYPE, stream);
                    compute.run();
                });
                TimingStats gT = time(options.reps, () -> nccl.groupAllGather(in, out, count, TYPE, stream));
                allGatherUs = maxOverRanks(agT.medianUs());
                gatherUs = maxOverRanks(gT.medianUs());
                // The single local launch of the same per-rank work (the gathered buffers hold S rows per head).
                if (!causal) {
                    localUs = maxOverRanks(time(options.reps, compute).medianUs());
                } else {
                    localUs = maxOverRanks(wholeCausalOverWorld(total, gk, gv));
                }
                // Ring attention's output against the all-gather path's, on the same inputs.
                Memcpy.memset(o.deviceAddress(), 0xFF, o.byteSize(), stream);
                Memcpy.memset(o2.deviceAddress(), 0xFF, o2.byteSize(), stream);
                ringAttention.forward(q, k, v, o, lse, stream);
                nccl.groupAllGather(in, out, count, TYPE, stream);
                compute.run();
                iris.synchronize();
                check = compare(o, o2, "ring - all-gather");
                if (!check.startsWith(OK)) {
                    failedChecks++;
                }
            }
            long ringKv = ringAttention.kvBytesPerRank();
            long agKv = 2 * kvBytes + 2 * world * kvBytes;
            double ringUs = maxOverRanks(ringT.medianUs());
            double stepsUs = maxOverRanks(stepsT.medianUs());
            double perRankFlops = AttentionProblem.of(TYPE, 1, hq, hkv, total, total, d, causal).flops() / world;
            RingPoint point = new RingPoint("bf16", 1, hq, hkv, d, causal, total, shard, sharding.name(), ringT.reps(), ringUs, stepsUs, localUs,
                    allGatherUs, gatherUs, ringKv, agKv, perRankFlops / (ringUs * 1e6), check);
            say("ring S %d%s: ring %.0f us, steps %.0f us, local %.0f us, all-gather + local %.0f us (gather %.0f us); %s", total,
                    causal ? " causal" : "", ringUs, stepsUs, localUs, allGatherUs, gatherUs, check);
            return point;
        } finally {
            iris.synchronize();
            for (int i = other.size() - 1; i >= 0; i--) {
                try {
                    other.get(i).close();
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            }
            closeAll(made);
        }
    }

    /** The causal kernel on the whole sequence (Sq = Skv = S) divided by world: the same FLOPs as one rank's share. */
    private double wholeCausalOverWorld(int total, SymTensor kWhole, SymTensor vWhole) {
        int hq = options.qHeads;
        int d = options.headDim;
        try (SymTensor q = heap.randn(seed + 7, TYPE, 1, hq, total, d); SymTensor o = heap.empty(TYPE, 1, hq, total, d)) {
            AttentionProblem whole = AttentionProblem.of(TYPE, 1, hq, options.kvHeads, total, total, d, true);
            double us = time(options.reps, () -> attention.forward(whole, q.deviceAddress(), kWhole.deviceAddress(), vWhole.deviceAddress(),
                    o.deviceAddress(), 0, stream)).medianUs() / world;
            iris.synchronize();
            return us;
        }
    }

    /** Largest |a - b| over a sample of both outputs against a bound of 2^-6 max |b|; {@code difference} names a - b. */
    private String compare(SymTensor a, SymTensor b, String difference) {
        long n = a.numel();
        int window = (int) Math.min(n, 1 << 18);
        double maxDiff = 0;
        double maxAbs = 0;
        long sampled = 0;
        boolean nan = false;
        for (long start : new long[] {0, (n - window) / 2, n - window}) {
            float[] x = window(a, start, window);
            float[] y = window(b, start, window);
            for (int i = 0; i < window; i++) {
                if (Float.isNaN(x[i]) || Float.isNaN(y[i])) {
                    nan = true;
                }
                maxDiff = Math.max(maxDiff, Math.abs(x[i] - y[i]));
                maxAbs = Math.max(maxAbs, Math.abs(y[i]));
            }
            sampled += window;
        }
        String text = String.format(Locale.ROOT, "max |%s| %.3g, max |o| %.3g over %d sampled elements", difference, maxDiff, maxAbs,
                sampled);
        if (nan) {
            return "FAIL: NaN (unwritten output); " + text;
        }
        return (maxDiff <= 0x1p-6 * maxAbs ? OK + ": " : "FAIL: ") + text;
    }

    /** {@code count} BF16 elements of {@code t} from element {@code start}, as floats. */
    private float[] window(SymTensor t, long start, int count) {
        try (BytePointer p = new BytePointer((long) count * 2)) {
            Memcpy.deviceToHost(p, t.deviceAddress() + start * 2, (long) count * 2, stream);
            iris.synchronize();
            ByteBuffer b = p.asByteBuffer().order(ByteOrder.LITTLE_ENDIAN);
            float[] out = new float[count];
            for (int i = 0; i < count; i++) {
                out[i] = HalfFloats.bf16ToFloat(b.getShort(2 * i));
            }
            return out;
        }
    }

    // ---- decode ------------------------------------------------------------------------------------

    private DecodePoint decode(int batch, int totalLen, int multiprocessors) {
        int len = totalLen / world;
        int hq = options.qHeads;
        int hkv = options.kvHeads;
        int d = options.headDim;
        int chunkLen = options.decodeChunkLen(batch, len, multiprocessors);
        FlashDecodeProblem p = FlashDecodeProblem.of(TYPE, batch, hq, hkv, d, len, chunkLen);
        List<SymTensor> made = new ArrayList<>();
        try (FlashDecode decode = FlashDecode.create(iris, p)) {
            try {
                SymTensor q = track(made, heap.randn(seed + 31L * totalLen + batch, TYPE, batch, hq, d));
                SymTensor k = track(made, heap.randn(seed + 31L * totalLen + batch + 1, TYPE, batch, hkv, len, d));
                SymTensor v = track(made, heap.randn(seed + 31L * totalLen + batch + 2, TYPE, batch, hkv, len, d));
                SymTensor fused = track(made, heap.empty(TYPE, batch, hq, d));
                SymTensor conv = track(made, heap.empty(TYPE, batch, hq, d));
                SymTensor base = track(made, heap.empty(TYPE, batch, hq, d));
                long qa = q.deviceAddress();
                long ka = k.deviceAddress();
                long va = v.deviceAddress();
                long send = decode.sendBuffer().deviceAddress();
                long gathered = decode.gatheredBuffer().deviceAddress();
                long mergedSend = decode.mergedSendBuffer().deviceAddress();
                long mergedGathered = decode.mergedGatheredBuffer().deviceAddress();
                FlashDecode.PartialsGather gather = nccl.available()
                        ? (s, r, f, st) -> nccl.allGather(s, r, f, DType.F32, st)
                        : null;  // without NCCL: the copy-engine gather (said in the check columns)
                int reps = options.decodeReps;
                TimingStats fusedT = time(reps, () -> decode.forward(p, qa, ka, va, fused.deviceAddress(), stream));
                iris.barrier(stream);
                TimingStats convT = time(reps, () -> decode.conventional(p, qa, ka, va, conv.deviceAddress(), gather, stream));
                TimingStats baseT = time(reps, () -> decode.baseline(p, qa, ka, va, base.deviceAddress(), gather, stream));
                TimingStats partialT = time(reps, () -> decode.partial(p, qa, ka, va, send, stream));
                TimingStats mergeT = time(reps, () -> decode.merge(p, send, mergedSend, stream));
                TimingStats mergedGatherT = nccl.available()
                        ? time(reps, () -> nccl.allGather(mergedSend, mergedGathered, p.mergedFloats(), DType.F32, stream)) : null;
                TimingStats mergedCombineT = time(reps, () -> decode.combineMerged(p, mergedGathered, world, conv.deviceAddress(), stream));
                TimingStats gatherT = nccl.available() ? time(reps, () -> nccl.allGather(send, gathered, p.slotFloats(), DType.F32, stream)) : null;
                TimingStats combineT = time(reps, () -> decode.combine(p, gathered, world, base.deviceAddress(), stream));
                // The checks: every path once more into poisoned outputs.
                iris.barrier(stream);
                for (SymTensor out : List.of(fused, conv, base)) {
                    Memcpy.memset(out.deviceAddress(), 0xFF, out.byteSize(), stream);
                }
                decode.forward(p, qa, ka, va, fused.deviceAddress(), stream);
                decode.conventional(p, qa, ka, va, conv.deviceAddress(), gather, stream);
                decode.baseline(p, qa, ka, va, base.deviceAddress(), gather, stream);
                iris.synchronize();
                float[] of = fused.toFloatArray();
                String gatheredBy = gather == null ? " (gathered with the copy engine: NCCL unavailable, " + nccl.reason() + ")" : "";
                String check = sameBits(of, base.toFloatArray()) + gatheredBy;
                String convCheck = near(conv.toFloatArray(), of) + gatheredBy;
                Conventional conventional = new Conventional(maxOverRanks(convT.medianUs()), maxOverRanks(mergeT.medianUs()),
                        mergedGatherT == null ? 0 : maxOverRanks(mergedGatherT.medianUs()), maxOverRanks(mergedCombineT.medianUs()),
                        convCheck);
                DecodePoint point = new DecodePoint("bf16", batch, hq, hkv, d, totalLen, len, chunkLen, p.chunks(), fusedT.reps(),
                        maxOverRanks(fusedT.medianUs()), conventional, maxOverRanks(baseT.medianUs()), maxOverRanks(partialT.medianUs()),
                        gatherT == null ? 0 : maxOverRanks(gatherT.medianUs()), maxOverRanks(combineT.medianUs()), check);
                if (!point.checksPassed()) {
                    failedChecks++;
                }
                say("decode B %d, %d tokens (%d per rank, chunks of %d): fused %.1f us, conventional %.1f us (%.2fx), all partials %.1f us"
                        + " (%.2fx); %s; %s", batch, totalLen, len, chunkLen, point.fusedUs(), conventional.us(), point.speedup(),
                        point.allPartialsUs(), point.allPartialsSpeedup(), convCheck, check);
                return point;
            } finally {
                iris.synchronize();
                closeAll(made);
            }
        }
    }

    /**
     * The bytes of the HBM copy: the K and V bytes per rank of the run's largest decode point (as
     * {@link DecodePoint#kvBytesPerRank}), kept between 256 MiB, past which a copy runs at the
     * memory's full rate, and 2 GiB, so that its two buffers fit beside the largest point's heap.
     */
    private long hbmCopyBytes() {
        long most = 256L << 20;
        for (int b : options.decodeBatches()) {
            for (int len : options.decodeLens()) {
                most = Math.max(most, DecodePoint.kvBytes(b, options.kvHeads, len / world, options.headDim, TYPE.byteSize()));
            }
        }
        return Math.min(most, 2L << 30);
    }

    /**
     * A device-to-device copy of {@code bytes} on this rank's GPU, timed as the decode points are
     * (warm-up, gated calls between CUDA events, the median), the slowest rank's: what the GPU's
     * memory streams in this run, which the decode floor divides the K/V bytes by. The source holds
     * a pattern, not zeros.
     */
    private AttentionBenchResult.HbmCopy hbmCopy(long bytes) {
        try (DeviceMemory src = DeviceMemory.allocate(bytes); DeviceMemory dst = DeviceMemory.allocate(bytes)) {
            try {
                Memcpy.memset(src.address(), 0x5A, bytes, stream);
                Memcpy.memset(dst.address(), 0xFF, bytes, stream);
                TimingStats t = time(options.decodeReps, () -> Memcpy.deviceToDevice(dst.address(), src.address(), bytes, stream));
                AttentionBenchResult.HbmCopy copy = new AttentionBenchResult.HbmCopy(bytes, maxOverRanks(t.medianUs()));
                say("HBM copy of %s: %.1f us, %.0f GB/s (read and write)", SizeList.format(bytes), copy.us(), copy.gbps());
                return copy;
            } finally {
                iris.synchronize();   // nothing may still use the buffers when they are freed
            }
        }
    }

    /** "ok" when the fused output equals the all-partials path's bit for bit (the same combination), else where not. */
    private static String sameBits(float[] fused, float[] allPartials) {
        for (int i = 0; i < fused.length; i++) {
            if (Float.isNaN(fused[i]) || Float.floatToRawIntBits(fused[i]) != Float.floatToRawIntBits(allPartials[i])) {
                return String.format(Locale.ROOT, "FAIL: element %d: fused %s, all partials %s", i, fused[i], allPartials[i]);
            }
        }
        return OK + ": fused equals the all-partials path bit for bit (" + fused.length + " elements)";
    }

    /**
     * "ok" when the conventional output is within {@link #NEAR} max |fused| of the fused output at
     * every element: the two combine in different orders and round to BF16 apart (the GPU tests hold
     * each to the CPU reference).
     */
    static String near(float[] conventional, float[] fused) {
        double maxDiff = 0;
        double maxAbs = 0;
        for (int i = 0; i < fused.length; i++) {
            if (Float.isNaN(conventional[i]) || Float.isNaN(fused[i])) {
                return String.format(Locale.ROOT, "FAIL: element %d: conventional %s, fused %s", i, conventional[i], fused[i]);
            }
            maxDiff = Math.max(maxDiff, Math.abs(conventional[i] - fused[i]));
            maxAbs = Math.max(maxAbs, Math.abs(fused[i]));
        }
        boolean near = maxDiff <= NEAR * maxAbs;
        return String.format(Locale.ROOT, "%s: max |conventional - fused| %.3g %s 2^%d max |o| (max |o| %.3g, %d elements)",
                near ? OK : "FAIL", maxDiff, near ? "<=" : ">", Math.getExponent(NEAR), maxAbs, fused.length);
    }

    // ---- helpers -----------------------------------------------------------------------------------

    /** Times {@code reps} calls after the warm-up ones; this rank's statistics. */
    private TimingStats time(int reps, Runnable call) {
        float[] ms = timer.run(options.warmup, reps, r -> {}, r -> call.run(), true);
        return TimingStats.ofMillis(ms, 1);
    }

    /** The largest of every rank's value (a collective over the rendezvous). */
    private double maxOverRanks(double value) {
        byte[][] all = iris.allGather(ByteBuffer.allocate(8).putDouble(value).array());
        double max = value;
        for (byte[] b : all) {
            max = Math.max(max, ByteBuffer.wrap(b).getDouble());
        }
        return max;
    }

    private void say(String format, Object... args) {
        if (rank == 0) {
            System.out.printf(Locale.ROOT, "AttentionBench: " + format + "%n", args);
        }
    }

    private static SymTensor track(List<SymTensor> made, SymTensor t) {
        made.add(t);
        return t;
    }

    private static void closeAll(List<SymTensor> made) {
        for (int i = made.size() - 1; i >= 0; i--) {
            made.get(i).closeIfLive();
        }
        made.clear();
    }

    /**
     * Ring attention's launches without its copies ({@link Attention#ring}), on buffers this rank
     * holds: step s reads the K and V that the functions give for source rank (rank - s) mod world;
     * {@code state} holds the F32 state and the last launch's ready word, already raised ({@link
     * #localRingParts}).
     */
    private Runnable localRing(AttentionProblem p, Sharding sharding, long q, long o, long lse, long state,
                               IntToLongFunction kOfSource, IntToLongFunction vOfSource) {
        long[] parts = localRingParts(p, state);
        long rowMax = parts[1];
        long rowSum = parts[2];
        long ready = parts[3];
        Chunks mine = sharding.chunks(rank, world, p.qLen());
        RingStep[] steps = new RingStep[world];
        for (int s = 0; s < world; s++) {
            int src = Math.floorMod(rank - s, world);
            steps[s] = new RingStep(p, q, kOfSource.applyAsLong(src), vOfSource.applyAsLong(src), o, lse, state, rowMax, rowSum, s > 0,
                    s == world - 1, mine, sharding.chunks(src, world, p.qLen()));
        }
        return () -> attention.ring(iris.deviceContext(), steps, ready, stream);
    }

    /** localRing's state buffer from {@code state} on: oAcc, rowMax, rowSum, the ready word (256-byte aligned). */
    private static long[] localRingParts(AttentionProblem p, long state) {
        long rowMax = align(state + p.qRows() * p.headDim() * 4);
        long rowSum = align(rowMax + p.qRows() * 4);
        return new long[] {state, rowMax, rowSum, align(rowSum + p.qRows() * 4)};
    }

    private static long align(long address) {
        return (address + 255) & ~255L;
    }

    /** Heap for the largest part: its tensors, plus headroom for the allocator and the workspaces. */
    static long heapBytes(AttentionBenchOptions o, int world, int multiprocessors) {
        long most = 0;
        long e = 2;  // BF16
        long d = o.headDim;
        java.util.Set<String> parts = o.parts();
        if (parts.contains("local")) {
            for (int s : o.localSeqs()) {
                long q = o.qHeads * s * d * e;
                long kv = o.kvHeads * s * d * e;
                // --portable keeps a second O, so that the two outputs can be compared.
                long outputs = o.portable() ? 2 : 1;
                most = Math.max(most, (1 + outputs) * q + 2 * kv + (long) o.qHeads * s * 4);
            }
        }
        if (parts.contains("ring")) {
            for (int total : o.ringSeqs()) {
                long shard = total / world;
                long q = o.qHeads * shard * d * e;
                long kv = o.kvHeads * shard * d * e;
                long lse = o.qHeads * shard * 4;
                long whole = o.qHeads * (long) total * d * e;
                most = Math.max(most, 3 * q + 2 * kv + 2 * lse + 2 * world * kv + 2 * whole);
            }
        }
        if (parts.contains("decode")) {
            for (int b : o.decodeBatches()) {
                for (int total : o.decodeLens()) {
                    long len = total / world;
                    long kv = b * o.kvHeads * len * d * e;
                    int chunkLen = o.decodeChunkLen(b, (int) len, multiprocessors);
                    FlashDecodeProblem p = FlashDecodeProblem.of(DType.BF16, b, o.qHeads, o.kvHeads, o.headDim, (int) len, chunkLen);
                    most = Math.max(most, 2 * kv + FlashDecode.workspaceBytes(p, world) + 4L * b * o.qHeads * d * e);
                }
            }
        }
        long bytes = most + most / 16 + HEAP_HEADROOM;
        return (bytes + (1L << 20) - 1) >> 20 << 20;
    }
}
