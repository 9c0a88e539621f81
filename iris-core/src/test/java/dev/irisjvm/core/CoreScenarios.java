package dev.irisjvm.core;

import static dev.irisjvm.core.testing.Checks.check;
import static dev.irisjvm.core.testing.Checks.exact;

import dev.irisjvm.core.gpu.CudaGraph;
import dev.irisjvm.core.gpu.Stream;
import dev.irisjvm.core.testing.ScenarioRunner;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.List;
import java.util.Random;

/**
 * The host API on every rank of a real multi-GPU job: factories, copies, remote tile operations,
 * barriers, broadcast, heap reuse, graph capture, misuse, device timeouts and repeated init/close.
 * Each check compares with a CPU reference in double precision on fresh random data, and every
 * output is poisoned first. Run by {@link CoreGpuTest} through the launcher.
 */
public final class CoreScenarios {
    /** Every scenario, in the order each rank runs them. */
    public static final List<String> SCENARIOS = List.of("init_identity", "factories", "copies", "store_remote",
            "load_remote", "atomic_add", "barrier_orders_rounds", "broadcast_and_allgather", "heap_reuse",
            "graph_capture", "barriers_on_two_streams", "views", "misuse", "device_barrier_timeout", "checked_mode_divergence", "init_close_cycles",
            "use_after_close", "foreign_heap");

    private static final List<DType> ALL = List.of(DType.values());
    private static final EnumSet<DType> ATOMIC = EnumSet.of(DType.F32, DType.F64, DType.I32, DType.I64, DType.F16, DType.BF16);

    private final Iris iris;
    private final int rank;
    private final int world;
    private final int next;
    private final int prev;
    private final Random random;

    private CoreScenarios(Iris iris) {
        this.iris = iris;
        this.rank = iris.rank();
        this.world = iris.worldSize();
        this.next = (rank + 1) % world;
        this.prev = (rank - 1 + world) % world;
        this.random = new Random(System.nanoTime() ^ (31L * rank));
    }

    public static void main(String[] args) throws Exception {
        IrisConfig config = IrisConfig.fromEnvironment().withHeapSize(512L << 20).withDeviceTimeout(Duration.ofSeconds(10));
        int failed;
        try (Iris iris = Iris.init(config)) {
            CoreScenarios s = new CoreScenarios(iris);
            ScenarioRunner runner = new ScenarioRunner()
                    .add("init_identity", s::initIdentity)
                    .add("factories", s::factories)
                    .add("copies", s::copies)
                    .add("store_remote", s::storeRemote)
                    .add("load_remote", s::loadRemote)
                    .add("atomic_add", s::atomicAdd)
                    .add("barrier_orders_rounds", s::barrierRounds)
                    .add("broadcast_and_allgather", s::broadcast)
                    .add("heap_reuse", s::heapReuse)
                    .add("graph_capture", s::graphCapture)
                    .add("barriers_on_two_streams", s::barriersOnTwoStreams)
                    .add("views", s::views)
                    .add("misuse", s::misuse);
            failed = runner.runAll();
        }
        failed += new ScenarioRunner()
                .add("device_barrier_timeout", () -> barrierTimeout(config))
                .add("checked_mode_divergence", () -> checkedModeDivergence(config))
                .add("init_close_cycles", () -> initCloseCycles(config))
                .add("use_after_close", () -> useAfterClose(config))
                .add("foreign_heap", () -> foreignHeap(config))
                .runAll();
        System.exit(failed);
    }

    /** Ranks agree on who is who, and every heap is mapped. */
    private void initIdentity() {
        byte[][] all = iris.allGather(new byte[] {(byte) rank, (byte) iris.device()});
        check(all.length == world, "allGather returned " + all.length + " entries, world is " + world);
        for (int r = 0; r < world; r++) {
            check(all[r][0] == r, "entry " + r + " came from rank " + all[r][0]);
        }
        DeviceContext ctx = iris.deviceContext();
        for (int r = 0; r < world; r++) {
            check(ctx.heapBase(r) != 0, "heap of rank " + r + " is not mapped");
        }
        check(ctx.bytes().length == DeviceContext.BYTES, "context is " + ctx.bytes().length + " bytes");
        // Every rank names the same GPU for every rank, and counts the ranks on its own GPU from it.
        byte[][] pci = iris.allGather(iris.pciAddressOf(rank).getBytes(java.nio.charset.StandardCharsets.US_ASCII));
        int sharing = 0;
        for (int r = 0; r < world; r++) {
            String theirs = new String(pci[r], java.nio.charset.StandardCharsets.US_ASCII);
            check(theirs.equals(iris.pciAddressOf(r)), "rank " + r + " drives " + theirs + ", this rank thinks " + iris.pciAddressOf(r));
            if (theirs.equals(iris.pciAddressOf(rank))) sharing++;
        }
        check(sharing == iris.ranksOnThisGpu(), sharing + " ranks on this GPU, ranksOnThisGpu() says " + iris.ranksOnThisGpu());
        long[] maxima = gatherLongs(iris.maxRanksPerGpu());
        check(Arrays.stream(maxima).distinct().count() == 1 && maxima[0] >= sharing,
                "maxRanksPerGpu differs or is below this GPU's count: " + Arrays.toString(maxima));
    }

    /**
     * Two streams, each with its own {@link DeviceBarrier}. Rank 0 enqueues stream B's barrier, then
     * 50 ms later stores a word into every peer on stream A and enqueues A's barrier; the peers
     * enqueue A's barrier first, then B's, then read the word after A's. With one shared barrier
     * state (Iris.barrier on both streams) each peer's A barrier would pair with rank 0's B barrier,
     * which arrived 50 ms before the store, and read poison. Pass: every peer reads the word.
     */
    private void barriersOnTwoStreams() throws Exception {
        try (Stream a = Stream.create(); Stream b = Stream.create();
             DeviceBarrier onA = iris.newBarrier(); DeviceBarrier onB = iris.newBarrier();
             SymTensor word = iris.heap().empty(DType.I64, 16); SymTensor value = iris.heap().empty(DType.I64, 16)) {
            check(onA.slot() != onB.slot() && onA.slot() > 0, "slots " + onA.slot() + " and " + onB.slot());
            for (int round = 0; round < 3; round++) {
                long expected = random.nextLong() | 1;
                expected = ByteBuffer.wrap(iris.broadcast(ByteBuffer.allocate(8).putLong(expected).array(), 0)).getLong();
                long[] filled = new long[16];
                Arrays.fill(filled, expected);
                value.copyFrom(filled);
                word.copyFrom(new long[16]);  // zero: not yet written
                iris.hostBarrier();
                if (rank == 0) {
                    onB.enqueue(b);
                    Thread.sleep(50);
                    for (int peer = 1; peer < world; peer++) {
                        word.whole().on(peer).storeRemote(value.whole(), a);
                    }
                    onA.enqueue(a);
                } else {
                    onA.enqueue(a);
                    onB.enqueue(b);
                }
                iris.synchronize(a);
                iris.synchronize(b);
                if (rank != 0) {
                    long[] got = word.toLongArray();
                    final long e = expected;
                    check(Arrays.stream(got).allMatch(v -> v == e), "round " + round + ": read " + Long.toHexString(got[0])
                            + " after stream A's barrier, rank 0 stored " + Long.toHexString(e) + " before its own");
                }
                iris.hostBarrier();
            }
        }
    }

    /** Every factory on every dtype it supports, checked element by element on the host. */
    private void factories() {
        SymmetricHeap heap = iris.heap();
        for (DType t : ALL) {
            long n = 1000 + random.nextInt(5000);
            try (SymTensor z = heap.zeros(t, n); SymTensor o = heap.ones(t, 2, n); SymTensor f = heap.full(7, t, n);
                 SymTensor zl = heap.zerosLike(o)) {
                exact(new double[(int) n], z.toDoubleArray(), t + " zeros");
                exact(filled(2 * (int) n, 1), o.toDoubleArray(), t + " ones");
                exact(filled((int) n, 7), f.toDoubleArray(), t + " full(7)");
                check(Arrays.equals(zl.shape(), o.shape()) && zl.dtype() == t, t + " zerosLike shape/dtype");
                exact(new double[2 * (int) n], zl.toDoubleArray(), t + " zerosLike");
            }
            long count = t == DType.U8 ? 200 : t == DType.F16 || t == DType.BF16 ? 256 : 3000;
            try (SymTensor a = heap.arange(t, count)) {
                double[] ref = new double[(int) count];
                for (int i = 0; i < count; i++) ref[i] = i;
                exact(ref, a.toDoubleArray(), t + " arange");
            }
            long lo = t == DType.U8 ? 0 : -3;
            try (SymTensor ri = heap.randint(lo, 50, t, 10_000)) {
                for (double v : ri.toDoubleArray()) {
                    check(v == Math.rint(v) && v >= lo && v < 50, t + " randint value " + v + " outside [" + lo + ", 50)");
                }
            }
            if (t.isFloatingPoint()) {
                int m = 1 << 20;
                try (SymTensor u = heap.uniform(-2, 3, t, m); SymTensor g = heap.randn(t, m); SymTensor r = heap.rand(t, 1000)) {
                    double[] uv = u.toDoubleArray();
                    for (double v : uv) check(v >= -2 && v <= 3, t + " uniform value " + v + " outside [-2, 3)");
                    double mean = Arrays.stream(uv).average().orElseThrow();
                    check(Math.abs(mean - 0.5) < 0.02, t + " uniform(-2, 3) mean " + mean + ", expected 0.5");
                    double[] gv = g.toDoubleArray();
                    double gm = Arrays.stream(gv).average().orElseThrow();
                    double var = Arrays.stream(gv).map(v -> (v - gm) * (v - gm)).sum() / gv.length;
                    check(Math.abs(gm) < 0.01 && Math.abs(var - 1) < 0.02, t + " randn mean " + gm + " variance " + var);
                    for (double v : r.toDoubleArray()) check(v >= 0 && v <= 1, t + " rand value " + v + " outside [0, 1)");
                }
            }
        }
        // An explicit seed gives every rank the same values; the default seeds differ per rank.
        try (SymTensor same = heap.randn(1234, DType.F32, 4096); SymTensor own = heap.randn(DType.F32, 4096)) {
            byte[][] sameAll = iris.allGather(bytesOf(same));
            byte[][] ownAll = iris.allGather(bytesOf(own));
            for (int r = 0; r < world; r++) {
                check(Arrays.equals(sameAll[r], sameAll[rank]), "randn(seed 1234) differs between rank " + r + " and " + rank);
                check(r == rank || !Arrays.equals(ownAll[r], ownAll[rank]), "default randn is identical on ranks " + r + " and " + rank);
            }
        }
        iris.hostBarrier();
    }

    /** Host arrays and NIO buffers into and out of every dtype. */
    private void copies() {
        SymmetricHeap heap = iris.heap();
        int n = 10_000 + random.nextInt(1000);
        for (DType t : ALL) {
            try (SymTensor x = heap.full(Double.NaN, t, n)) {
                double[] values = randomValues(t, n);
                x.copyFrom(values);
                exact(roundTo(t, values), x.toDoubleArray(), t + " copyFrom(double[])");
                ByteBuffer direct = ByteBuffer.allocateDirect((int) x.byteSize()).order(ByteOrder.nativeOrder());
                x.copyTo(direct);
                check(direct.position() == x.byteSize(), t + " copyTo(direct) advanced to " + direct.position());
                ByteBuffer heapBuf = ByteBuffer.allocate((int) x.byteSize());
                x.copyTo(heapBuf);
                check(heapBuf.flip().equals(direct.flip()), t + " copyTo heap and direct buffers differ");
                try (SymTensor y = heap.full(-1, t, n)) {
                    y.copyFrom(direct);
                    exact(roundTo(t, values), y.toDoubleArray(), t + " copyFrom(direct ByteBuffer)");
                }
            }
        }
        try (SymTensor f = heap.empty(DType.F32, n); SymTensor h = heap.empty(DType.BF16, n); SymTensor i = heap.empty(DType.I32, n);
             SymTensor l = heap.empty(DType.I64, n); SymTensor b = heap.empty(DType.U8, n)) {
            float[] fv = new float[n];
            int[] iv = new int[n];
            long[] lv = new long[n];
            byte[] bv = new byte[n];
            for (int k = 0; k < n; k++) {
                fv[k] = (float) random.nextGaussian();
                iv[k] = random.nextInt();
                lv[k] = random.nextLong();
                bv[k] = (byte) random.nextInt();
            }
            f.copyFrom(fv);
            check(Arrays.equals(fv, f.toFloatArray()), "F32 float[] round trip");
            h.copyFrom(fv);
            float[] hb = h.toFloatArray();
            for (int k = 0; k < n; k++) {
                check(hb[k] == HalfFloats.bf16ToFloat(HalfFloats.floatToBf16(fv[k])), "BF16 element " + k);
            }
            i.copyFrom(iv);
            check(Arrays.equals(iv, i.toIntArray()), "I32 int[] round trip");
            l.copyFrom(lv);
            check(Arrays.equals(lv, l.toLongArray()), "I64 long[] round trip");
            b.copyFrom(bv);
            check(Arrays.equals(bv, b.toByteArray()), "U8 byte[] round trip");
        }
        streamWrites(n);
    }

    /** Stream writes land in stream order on exactly their word, eagerly and replayed from a graph. */
    private void streamWrites(int n) {
        try (SymTensor w = iris.heap().empty(DType.I32, n); Stream s = Stream.create()) {
            int[] poison = new int[n];
            Arrays.fill(poison, 0x7fc0dead);
            int at = random.nextInt(n);
            int value = random.nextInt();
            w.copyFrom(poison);
            s.writeValue32(w.deviceAddress() + 4L * at, value);
            s.synchronize();
            int[] expect = poison.clone();
            expect[at] = value;
            check(Arrays.equals(expect, w.toIntArray()), "stream write of " + value + " at word " + at);
            // Captured: the later write wins, and a replay writes again over the poison.
            s.beginCapture();
            s.writeValue32(w.deviceAddress() + 4L * at, value ^ 1);
            s.writeValue32(w.deviceAddress() + 4L * at, value ^ 2);
            try (CudaGraph g = s.endCapture()) {
                for (int replay = 0; replay < 2; replay++) {
                    w.copyFrom(poison);
                    g.launch(s);
                    s.synchronize();
                    expect[at] = value ^ 2;
                    check(Arrays.equals(expect, w.toIntArray()), "replay " + replay + " of captured stream writes at word " + at);
                }
            }
            expect(IllegalArgumentException.class, "4-byte aligned", () -> s.writeValue32(w.deviceAddress() + 2, 1));
        }
    }

    /** Each rank writes random tiles into the next rank's tensor; the next rank checks them and the untouched rest. */
    private void storeRemote() {
        for (DType t : ALL) {
            for (long[] shape : tileShapes()) {
                long rows = shape[0], cols = shape[1], r0 = shape[2], c0 = shape[3], tr = shape[4], tc = shape[5];
                long seed = random.nextLong();
                try (SymTensor dst = iris.heap().full(poison(t), t, rows, cols);
                     SymTensor src = iris.heap().uniform(seed ^ rank, -100, 100, floatOr(t), rows, cols);
                     SymTensor srcT = cast(src, t)) {
                    long[] seeds = gatherLongs(seed);
                    iris.barrier();
                    dst.tile(r0, c0, tr, tc).on(next).storeRemote(srcT.tile(r0, c0, tr, tc));
                    iris.barrier();
                    iris.synchronize();
                    // What prev wrote into this rank: prev's source, regenerated here from its seed.
                    double[] sent;
                    try (SymTensor ref = iris.heap().uniform(seeds[prev] ^ prev, -100, 100, floatOr(t), rows, cols);
                         SymTensor refT = cast(ref, t)) {
                        sent = refT.toDoubleArray();
                    }
                    double[] got = dst.toDoubleArray();
                    double[] expect = windowed(filled((int) (rows * cols), poison(t)), sent, cols, r0, c0, tr, tc);
                    exactAllowNaN(expect, got, t + " storeRemote " + Arrays.toString(shape));
                }
            }
        }
    }

    /** Each rank pulls random tiles of the next rank's tensor into its own. */
    private void loadRemote() {
        for (DType t : ALL) {
            for (long[] shape : tileShapes()) {
                long rows = shape[0], cols = shape[1], r0 = shape[2], c0 = shape[3], tr = shape[4], tc = shape[5];
                long seed = random.nextLong();
                try (SymTensor src = iris.heap().uniform(seed ^ rank, -100, 100, floatOr(t), rows, cols);
                     SymTensor srcT = cast(src, t);
                     SymTensor dst = iris.heap().full(poison(t), t, rows, cols)) {
                    long[] seeds = gatherLongs(seed);
                    iris.barrier();
                    srcT.tile(r0, c0, tr, tc).on(next).loadRemote(dst.tile(r0, c0, tr, tc));
                    iris.synchronize();
                    double[] theirs;
                    try (SymTensor ref = iris.heap().uniform(seeds[next] ^ next, -100, 100, floatOr(t), rows, cols);
                         SymTensor refT = cast(ref, t)) {
                        theirs = refT.toDoubleArray();
                    }
                    double[] expect = windowed(filled((int) (rows * cols), poison(t)), theirs, cols, r0, c0, tr, tc);
                    exactAllowNaN(expect, dst.toDoubleArray(), t + " loadRemote " + Arrays.toString(shape));
                    iris.barrier();  // the peer must not free its source while this rank reads it
                    iris.synchronize();
                }
            }
        }
    }

    /** Every rank adds its random tile into every rank's accumulator (itself included). */
    private void atomicAdd() {
        for (DType t : ATOMIC) {
            long rows = 300, cols = 257;
            long r0 = 17, c0 = 3, tr = 200, tc = 250;
            long seed = random.nextLong();
            boolean integer = !t.isFloatingPoint();
            try (SymTensor acc = iris.heap().full(integer ? 5 : 0.5, t, rows, cols);
                 SymTensor contrib = integer ? iris.heap().randint(seed ^ rank, -1000, 1000, t, rows, cols)
                         : iris.heap().uniform(seed ^ rank, -1, 1, t, rows, cols)) {
                long[] seeds = gatherLongs(seed);
                iris.barrier();
                for (int k = 0; k < world; k++) {
                    acc.tile(r0, c0, tr, tc).on((rank + k) % world).atomicAdd(contrib.tile(r0, c0, tr, tc));
                }
                iris.barrier();
                iris.synchronize();
                double[] expect = filled((int) (rows * cols), integer ? 5 : 0.5);
                double[] magnitude = filled((int) (rows * cols), integer ? 5 : 0.5);
                for (int r = 0; r < world; r++) {
                    try (SymTensor c = integer ? iris.heap().randint(seeds[r] ^ r, -1000, 1000, t, rows, cols)
                            : iris.heap().uniform(seeds[r] ^ r, -1, 1, t, rows, cols)) {
                        double[] cv = c.toDoubleArray();
                        for (long i = r0; i < r0 + tr; i++) {
                            for (long j = c0; j < c0 + tc; j++) {
                                int k = (int) (i * cols + j);
                                expect[k] += cv[k];
                                magnitude[k] += Math.abs(cv[k]);
                            }
                        }
                    }
                }
                double[] got = acc.toDoubleArray();
                if (integer) {
                    exact(expect, got, t + " atomicAdd");
                } else {
                    // Adds land in any order: each of the world+1 terms may round once, in the accumulator's type.
                    double eps = t == DType.F64 ? 0x1p-52 : t == DType.F32 ? 0x1p-23 : t == DType.F16 ? 0x1p-10 : 0x1p-7;
                    for (int k = 0; k < got.length; k++) {
                        double bound = (world + 1) * eps * magnitude[k];
                        check(Math.abs(got[k] - expect[k]) <= bound, t + " atomicAdd element " + k + " is " + got[k]
                                + ", expected " + expect[k] + " within " + bound);
                    }
                }
                iris.barrier();
                iris.synchronize();
            }
        }
    }

    /** Many rounds of write-to-peer, barrier, check: the barrier orders memory across ranks. */
    private void barrierRounds() {
        try (SymTensor slot = iris.heap().full(-1, DType.I64, 64); SymTensor mine = iris.heap().zeros(DType.I64, 64)) {
            // The fills are local: without this barrier a fast peer's first store could land before
            // this rank's fill of -1 and be overwritten by it (seen once on 2 x H200, 2026-11-30).
            iris.barrier();
            for (int round = 0; round < 200; round++) {
                long[] v = new long[64];
                Arrays.fill(v, round * 1000L + rank);
                mine.copyFrom(v);
                slot.whole().on(next).storeRemote(mine.whole());
                iris.barrier();
                iris.synchronize();
                long[] got = slot.toLongArray();
                for (long g : got) check(g == round * 1000L + prev, "round " + round + ": slot holds " + g + ", expected " + (round * 1000L + prev));
                iris.barrier();  // nobody overwrites the slot before its owner has read it
            }
            iris.synchronize();
        }
    }

    private void broadcast() {
        for (int root = 0; root < world; root++) {
            long v = iris.broadcast(rank == root ? 1000L + root : -1L, root);
            check(v == 1000L + root, "broadcast(long) from root " + root + " gave " + v);
            String s = iris.broadcast(rank == root ? "hello from " + root : null, root);
            check(s.equals("hello from " + root), "broadcast(String) from root " + root + " gave '" + s + "'");
            double d = iris.broadcast(rank == root ? Math.PI * root : 0.0, root);
            check(d == Math.PI * root, "broadcast(double) gave " + d);
        }
        byte[][] all = iris.allGather(new byte[rank + 1]);
        for (int r = 0; r < world; r++) check(all[r].length == r + 1, "allGather entry " + r + " has " + all[r].length + " bytes");
    }

    /** Freed blocks are reused, offsets agree across ranks, and usage returns to where it started. */
    private void heapReuse() {
        SymmetricHeap heap = iris.heap();
        long before = heap.usedBytes();
        SymTensor a = heap.empty(DType.F32, 1 << 20);
        SymTensor b = heap.empty(DType.F32, 1 << 18);
        long aOffset = a.heapOffset();
        a.close();
        SymTensor c = heap.empty(DType.BF16, 1 << 20);  // fits exactly where a was
        check(c.heapOffset() == aOffset, "freed block not reused: a was at " + aOffset + ", c at " + c.heapOffset());
        byte[][] offsets = iris.allGather(ByteBuffer.allocate(16).putLong(b.heapOffset()).putLong(c.heapOffset()).array());
        for (int r = 0; r < world; r++) check(Arrays.equals(offsets[r], offsets[rank]), "offsets differ between ranks " + r + " and " + rank);
        b.close();
        c.close();
        check(heap.usedBytes() == before, "heap usage " + heap.usedBytes() + " after freeing, was " + before);
        try {
            heap.empty(DType.U8, heap.capacity());
            throw new AssertionError("allocating the whole heap did not fail");
        } catch (IrisOutOfMemoryException e) {
            check(e.getMessage().contains("requested") && e.requestedBytes() == heap.capacity(), "OOM message: " + e.getMessage());
        }
    }

    /**
     * Views: rows, chunk, slice and reshape address the owner's elements without a copy (offsets,
     * addresses and data agree with the owner's), a remote store into a peer's chunk view lands in
     * that peer's rows and nowhere else, closing a view frees nothing, a view dies with its owner,
     * and ranges outside the tensor are refused naming the rank.
     */
    private void views() {
        SymmetricHeap heap = iris.heap();
        long used = heap.usedBytes();
        int rowsPerRank = 37;
        int cols = 129;
        long seed = random.nextLong();
        SymTensor gathered = heap.full(Float.NaN, DType.F32, (long) world * rowsPerRank, cols);
        try (SymTensor mine = heap.uniform(seed ^ rank, -10, 10, DType.F32, rowsPerRank, cols)) {
            long allocated = heap.usedBytes();
            SymTensor shard = gathered.chunk(rank, world);
            check(shard.isView() && !gathered.isView(), "chunk is not a view");
            check(shard.heapOffset() == gathered.heapOffset() + (long) rank * rowsPerRank * cols * 4,
                    "chunk(" + rank + ") at offset " + shard.heapOffset() + ", owner at " + gathered.heapOffset());
            check(shard.deviceAddress() == gathered.deviceAddress() + (long) rank * rowsPerRank * cols * 4, "chunk address");
            check(Arrays.equals(shard.shape(), new long[] {rowsPerRank, cols}), "chunk shape " + Arrays.toString(shard.shape()));
            check(heap.usedBytes() == allocated, "a view allocated heap memory");
            iris.barrier();
            for (int r = 0; r < world; r++) {  // this rank's rows into every rank's copy of the gathered buffer
                shard.whole().on(r).storeRemote(mine.whole());
            }
            iris.barrier();
            iris.synchronize();
            long[] seeds = gatherLongs(seed);
            float[] all = gathered.toFloatArray();
            for (int p = 0; p < world; p++) {
                try (SymTensor ref = heap.uniform(seeds[p] ^ p, -10, 10, DType.F32, rowsPerRank, cols)) {
                    float[] expect = ref.toFloatArray();
                    float[] viewed = gathered.chunk(p, world).toFloatArray();
                    for (int i = 0; i < expect.length; i++) {
                        float owned = all[p * rowsPerRank * cols + i];
                        if (Float.compare(owned, expect[i]) != 0 || Float.compare(viewed[i], expect[i]) != 0) {
                            check(false, "rank " + p + "'s rows, element " + i + ": " + owned + " in the owner, " + viewed[i]
                                    + " in the view, expected " + expect[i]);
                        }
                    }
                }
            }
            SymTensor flat = gathered.reshape(-1);
            check(flat.numel() == gathered.numel() && flat.heapOffset() == gathered.heapOffset(), "reshape(-1) " + flat);
            SymTensor middle = flat.slice(5, 1000).reshape(10, -1);
            check(Arrays.equals(middle.shape(), new long[] {10, 100}), "slice(5, 1000).reshape(10, -1) shape " + Arrays.toString(middle.shape()));
            float[] m = middle.toFloatArray();
            for (int i = 0; i < m.length; i++) {
                if (Float.compare(m[i], all[5 + i]) != 0) {
                    check(false, "slice element " + i + ": " + m[i] + ", expected " + all[5 + i]);
                }
            }
            middle.copyFrom(new float[1000]);  // writes through to the owner, and only there
            float[] after = gathered.toFloatArray();
            for (int i = 0; i < after.length; i++) {
                float expect = i >= 5 && i < 1005 ? 0f : all[i];
                if (Float.compare(after[i], expect) != 0) {
                    check(false, "after writing the slice, element " + i + " is " + after[i] + ", expected " + expect);
                }
            }
            expect(IllegalArgumentException.class, "rank " + rank + ": rows(" + world * rowsPerRank,
                    () -> gathered.rows((long) world * rowsPerRank, 1));
            expect(IllegalArgumentException.class, "chunk(0, " + (world * rowsPerRank + 1) + ")",
                    () -> gathered.chunk(0, world * rowsPerRank + 1));
            expect(IllegalArgumentException.class, "slice(-1, 2)", () -> gathered.slice(-1, 2));
            expect(IllegalArgumentException.class, "has " + gathered.numel() + " elements", () -> gathered.reshape(gathered.numel() + 1));
            shard.close();  // a view: frees nothing, not collective
            check(gathered.isLive() && heap.usedBytes() == allocated, "closing a view freed memory");
            iris.barrier();
        }
        SymTensor shard = gathered.chunk(rank, world);
        gathered.close();
        check(!shard.isLive(), "a view outlived its owner");
        expect(IllegalStateException.class, "was freed", shard::toFloatArray);
        check(heap.usedBytes() == used, "heap usage " + heap.usedBytes() + " after closing, was " + used);
    }

    /** A barrier and a remote store captured once, replayed with new data each time. */
    private void graphCapture() {
        try (SymTensor src = iris.heap().zeros(DType.F32, 4096); SymTensor dst = iris.heap().full(Float.NaN, DType.F32, 4096);
             Stream s = Stream.create()) {
            iris.barrier();
            iris.synchronize();
            s.beginCapture();
            iris.barrier(s);
            dst.whole().on(next).storeRemote(src.whole(), s);
            iris.barrier(s);
            try (CudaGraph g = s.endCapture()) {
                for (int replay = 0; replay < 5; replay++) {
                    float[] v = new float[4096];
                    for (int i = 0; i < v.length; i++) v[i] = rank * 10_000 + replay * 100 + i % 97;
                    src.copyFrom(v);
                    g.launch(s);
                    iris.synchronize(s);
                    float[] got = dst.toFloatArray();
                    for (int i = 0; i < got.length; i++) {
                        float e = prev * 10_000 + replay * 100 + i % 97;
                        check(got[i] == e, "replay " + replay + " element " + i + " is " + got[i] + ", expected " + e);
                    }
                    iris.barrier();
                    iris.synchronize();
                }
            }
        }
    }

    /** Bad input fails before anything is launched, with a message that names what was wrong. */
    private void misuse() {
        SymmetricHeap heap = iris.heap();
        try (SymTensor a = heap.zeros(DType.F32, 64, 64); SymTensor b = heap.zeros(DType.F64, 64, 64);
             SymTensor c = heap.zeros(DType.F32, 32, 32)) {
            expect(IllegalArgumentException.class, "out of range", () -> a.tile(0, 0, 8, 8).on(world));
            expect(IllegalArgumentException.class, "out of range", () -> a.tile(0, 0, 8, 8).on(-1));
            expect(IndexOutOfBoundsException.class, "outside the tensor", () -> a.tile(60, 0, 8, 8));
            expect(IllegalArgumentException.class, "dtype", () -> a.tile(0, 0, 8, 8).on(next).loadRemote(b.tile(0, 0, 8, 8)));
            expect(IllegalArgumentException.class, "is 4 x 4", () -> a.tile(0, 0, 8, 8).on(next).storeRemote(c.tile(0, 0, 4, 4)));
            expect(IllegalArgumentException.class, "U8", () -> {
                try (SymTensor u = heap.zeros(DType.U8, 16)) {
                    u.whole().on(next).atomicAdd(u.whole());
                }
            });
            expect(IllegalArgumentException.class, "elements", () -> a.copyFrom(new float[5]));
            expect(IllegalArgumentException.class, "dtype", () -> a.copyFrom(new int[4096]));
        }
        SymTensor freed = heap.zeros(DType.F32, 16);
        freed.close();
        expect(IllegalStateException.class, "freed", () -> freed.toFloatArray());
        expect(IllegalStateException.class, "freed", () -> freed.tile(0, 0, 1, 1));
        // A double free names the tensor and the rank; the heap is unchanged by the second call.
        long used = heap.usedBytes();
        expect(IllegalStateException.class, "rank " + rank + ": close: tensor F32[16]@" + freed.heapOffset()
                + " was already freed by close(); a tensor is freed exactly once", freed::close);
        check(heap.usedBytes() == used, "a double free changed the heap: used " + heap.usedBytes() + ", was " + used);
        expect(IllegalArgumentException.class, "shape[1]", () -> heap.zeros(DType.F32, 4, 0));
        expect(IllegalArgumentException.class, "root", () -> iris.broadcast(1L, world));
        iris.hostBarrier();
    }

    /** One rank skips a barrier: the other's wait gives up at the deadline and says which rank it lost. */
    private static void barrierTimeout(IrisConfig base) {
        try (Iris iris = Iris.init(base.withHeapSize(64L << 20).withDeviceTimeout(Duration.ofSeconds(2)))) {
            if (iris.rank() == 0) {
                long start = System.nanoTime();
                iris.barrier();
                try {
                    iris.synchronize();
                    throw new AssertionError("barrier without the other ranks returned normally");
                } catch (IrisDeviceException e) {
                    double s = (System.nanoTime() - start) / 1e9;
                    check(s < 8, "timeout took " + s + " s with a 2 s deadline");
                    check(e.getMessage().contains("rank 0") && e.getMessage().contains("barrier")
                            && e.getMessage().contains("waiting for rank "), "message: " + e.getMessage());
                }
            }
            iris.hostBarrier();
        }
    }

    /** Checked mode: ranks that allocate differently learn it at the first diverging call, which is named. */
    private static void checkedModeDivergence(IrisConfig base) {
        try (Iris iris = Iris.init(base.withHeapSize(64L << 20).withChecked(true))) {
            SymmetricHeap heap = iris.heap();
            try (SymTensor same = heap.zeros(DType.F32, 256)) {
                check(same.numel() == 256, "agreeing allocation");
            }
            long used = heap.usedBytes();
            long n = iris.rank() == 0 ? 1024 : 2048;  // rank 0 asks for less than the others
            try {
                heap.empty(DType.U8, n);
                throw new AssertionError("diverging allocations were not detected");
            } catch (IrisException e) {
                String m = e.getMessage();
                check(m.contains("checked mode: ranks diverged at allocate #") && m.contains("size 1024")
                        && m.contains("size 2048"), "message: " + m);
            }
            check(heap.usedBytes() == used, "the diverged allocation was kept: used " + heap.usedBytes() + ", was " + used);
            iris.hostBarrier();
        }
    }

    /**
     * Free device memory, read while every rank holds the same things: it is a figure of the
     * whole GPU, which other ranks may share.
     */
    private static long[] memoryWhileEveryRankHolds(Iris iris) {
        iris.hostBarrier();
        long[] info = dev.irisjvm.core.gpu.Gpu.memoryInfo();
        iris.hostBarrier();
        return info;
    }

    /** Init and close repeat in one process, and leave device memory where it was. */
    private static void initCloseCycles(IrisConfig base) {
        long[] before = null;
        for (int cycle = 0; cycle < 5; cycle++) {
            try (Iris iris = Iris.init(base.withHeapSize(256L << 20))) {
                if (before == null) {
                    before = memoryWhileEveryRankHolds(iris);
                }
                SymTensor t = iris.heap().randn(DType.F32, 1 << 20);
                iris.barrier();
                iris.synchronize();
                check(t.toFloatArray().length == 1 << 20, "cycle " + cycle);
            }
        }
        try (Iris iris = Iris.init(base.withHeapSize(256L << 20))) {
            long[] after = memoryWhileEveryRankHolds(iris);
            check(Math.abs(after[0] - before[0]) < (64L << 20), "free device memory moved from " + before[0] + " to " + after[0]
                    + " over 5 init/close cycles");
        }
    }

    /** Everything of a closed instance refuses to work, naming the call; a tensor it held is freed already. */
    private static void useAfterClose(IrisConfig base) {
        IrisConfig config = base.withHeapSize(64L << 20);
        Iris first = Iris.init(config);
        int rank = first.rank();
        SymTensor old = first.heap().arange(DType.F32, 64);
        first.close();
        first.close();  // idempotent
        expect(IllegalStateException.class, "rank " + rank + ": heap called after Iris.close()", first::heap);
        expect(IllegalStateException.class, "rank " + rank + ": barrier called after Iris.close()", first::barrier);
        expect(IllegalStateException.class, "rank " + rank + ": synchronize called after Iris.close()", first::synchronize);
        expect(IllegalStateException.class, "rank " + rank + ": hostBarrier called after Iris.close()", first::hostBarrier);
        expect(IllegalStateException.class, "rank " + rank + ": stream called after Iris.close()", first::stream);
        expect(IllegalStateException.class, "was freed by Iris.close()", old::toFloatArray);
        expect(IllegalStateException.class, "was already freed by Iris.close()", old::close);
        try (Iris second = Iris.init(config); SymTensor fresh = second.heap().zeros(DType.F32, 64)) {
            int next = (second.rank() + 1) % second.worldSize();
            expect(IllegalStateException.class, "was freed by Iris.close()", () -> fresh.whole().on(next).storeRemote(old.whole()));
            expect(IllegalStateException.class, "was freed by Iris.close()", () -> old.whole());
            second.hostBarrier();
        }
    }

    /**
     * A tensor of another Iris instance's heap is refused before anything launches. Each rank opens
     * two one-rank instances on two GPUs in its own process (host-side checks only: the second init
     * makes its GPU current), then closes them.
     */
    private static void foreignHeap(IrisConfig base) {
        int devices = dev.irisjvm.core.gpu.Gpu.deviceCount();
        int mine = base.deviceAmong(devices);
        int other = (mine + 1) % devices;
        IrisConfig single = IrisConfig.fromEnvironment(java.util.Map.of()).withHeapSize(64L << 20);
        Iris a = Iris.init(single.withDevice(mine));
        SymTensor onA = a.heap().zeros(DType.F32, 64);
        try (Iris b = Iris.init(single.withDevice(other)); SymTensor onB = b.heap().zeros(DType.F32, 64)) {
            expect(IllegalArgumentException.class, "rank 0: storeRemote: src belongs to another Iris instance's heap",
                    () -> onB.whole().on(0).storeRemote(onA.whole()));
            expect(IllegalArgumentException.class, "rank 0: loadRemote: dst belongs to another Iris instance's heap",
                    () -> onA.whole().on(0).loadRemote(onB.whole()));
        } finally {
            dev.irisjvm.core.gpu.Gpu.setDevice(mine);
            onA.close();
            a.close();
        }
    }

    // ---- helpers ----------------------------------------------------------------------------------

    /** {rows, cols, row0, col0, tileRows, tileCols}: aligned, odd-sized, single-row and large windows. */
    private List<long[]> tileShapes() {
        return List.of(
                new long[] {64, 64, 0, 0, 64, 64},
                new long[] {100, 37, 3, 5, 90, 31},
                new long[] {1, 100_003, 0, 1, 1, 100_001},
                new long[] {1024, 1000, 128, 8, 512, 960});
    }

    private long[] gatherLongs(long mine) {
        byte[][] all = iris.allGather(ByteBuffer.allocate(8).putLong(mine).array());
        long[] out = new long[world];
        for (int r = 0; r < world; r++) out[r] = ByteBuffer.wrap(all[r]).getLong();
        return out;
    }

    /** Integer tensors get their random values through a float tensor, converted on the host. */
    private static DType floatOr(DType t) {
        return t.isFloatingPoint() ? t : DType.F64;
    }

    private SymTensor cast(SymTensor src, DType t) {
        if (src.dtype() == t) {
            // A copy, not src itself: the caller closes both, and a tensor is freed once.
            SymTensor copy = iris.heap().empty(t, src.shape());
            src.whole().on(rank).loadRemote(copy.whole());
            iris.synchronize();
            return copy;
        }
        double[] v = src.toDoubleArray();
        for (int i = 0; i < v.length; i++) v[i] = Math.floor(v[i]) + (t == DType.U8 ? 100 : 0);
        SymTensor out = iris.heap().empty(t, src.shape());
        out.copyFrom(v);
        return out;
    }

    private static double poison(DType t) {
        return t.isFloatingPoint() ? Double.NaN : 0xA5;
    }

    private static double[] filled(int n, double v) {
        double[] a = new double[n];
        Arrays.fill(a, v);
        return a;
    }

    private static double[] windowed(double[] base, double[] source, long cols, long r0, long c0, long tr, long tc) {
        for (long i = r0; i < r0 + tr; i++) {
            for (long j = c0; j < c0 + tc; j++) {
                base[(int) (i * cols + j)] = source[(int) (i * cols + j)];
            }
        }
        return base;
    }

    /** Exact, where NaN expected matches NaN (the poison left outside the window). */
    private static void exactAllowNaN(double[] expected, double[] actual, String what) {
        check(expected.length == actual.length, what + ": length");
        for (int i = 0; i < expected.length; i++) {
            boolean ok = Double.isNaN(expected[i]) ? Double.isNaN(actual[i]) : expected[i] == actual[i];
            if (!ok) throw new AssertionError(what + ": element " + i + " is " + actual[i] + ", expected " + expected[i]);
        }
    }

    private double[] randomValues(DType t, int n) {
        double[] v = new double[n];
        for (int i = 0; i < n; i++) {
            v[i] = switch (t) {
                case U8 -> random.nextInt(256);
                case I32 -> random.nextInt();
                case I64 -> random.nextInt() * 1024L;
                default -> random.nextGaussian() * 100;
            };
        }
        return v;
    }

    private static double[] roundTo(DType t, double[] v) {
        double[] r = new double[v.length];
        for (int i = 0; i < v.length; i++) {
            r[i] = switch (t) {
                case F32 -> (float) v[i];
                case F16 -> HalfFloats.f16ToFloat(HalfFloats.floatToF16((float) v[i]));
                case BF16 -> HalfFloats.bf16ToFloat(HalfFloats.floatToBf16((float) v[i]));
                default -> v[i];
            };
        }
        return r;
    }

    private static byte[] bytesOf(SymTensor t) {
        ByteBuffer b = ByteBuffer.allocate((int) t.byteSize());
        t.copyTo(b);
        return b.array();
    }

    private static void expect(Class<? extends Throwable> type, String fragment, Runnable action) {
        try {
            action.run();
        } catch (Throwable t) {
            check(type.isInstance(t), "expected " + type.getSimpleName() + ", got " + t);
            check(t.getMessage() != null && t.getMessage().contains(fragment),
                    "message '" + t.getMessage() + "' does not mention '" + fragment + "'");
            return;
        }
        throw new AssertionError("expected " + type.getSimpleName() + " mentioning '" + fragment + "', nothing was thrown");
    }
}
