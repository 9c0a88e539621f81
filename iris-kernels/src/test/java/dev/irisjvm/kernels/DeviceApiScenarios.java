package dev.irisjvm.kernels;

import dev.irisjvm.core.DType;
import dev.irisjvm.core.DeviceContext;
import dev.irisjvm.core.HalfFloats;
import dev.irisjvm.core.Iris;
import dev.irisjvm.core.IrisConfig;
import dev.irisjvm.core.IrisDeviceException;
import dev.irisjvm.core.SymTensor;
import dev.irisjvm.core.gpu.DeviceMemory;
import dev.irisjvm.core.gpu.LaunchShape;
import dev.irisjvm.core.internal.Kernel;
import dev.irisjvm.core.internal.KernelArgs;
import dev.irisjvm.core.internal.KernelModule;
import dev.irisjvm.core.internal.Memcpy;
import dev.irisjvm.core.testing.ExpectedDeviceError;
import dev.irisjvm.core.testing.Failures;
import dev.irisjvm.core.testing.ScenarioJob;
import dev.irisjvm.core.testing.ScenarioRunner;
import dev.irisjvm.core.testing.TestSeeds;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.function.Supplier;
import org.bytedeco.javacpp.FloatPointer;

/**
 * The device API (iris/iris.cuh) from user kernels (src/test/cuda/device_api_test.cu) on every
 * rank of a real multi-GPU job, one scenario per function group. Run by {@link DeviceApiGpuTest}
 * through the launcher; the exit code is the number of failed scenarios.
 *
 * <p>Rules every scenario follows: inputs are fresh random values from seeds that mix the run
 * seed (broadcast from rank 0, printed, repeatable with {@code IRIS_TEST_SEED}), the scenario and
 * the owning rank, so a peer regenerates the same values for its reference; outputs are poisoned
 * first (NaN for floats, 0xA5 bytes for integers) and every element is checked, including that
 * elements outside a copied range were left alone; remote access is fenced by {@code
 * iris.barrier()} before (the peer's inputs are ready) and after (the writes are complete) plus
 * {@code iris.synchronize()}. Ranks pair with next = (rank + 1) % N and prev = (rank - 1 + N) % N,
 * so any N >= 2 works. Checks are collected and thrown at the end of a scenario, so a failed check
 * never makes ranks disagree on the number of barriers; every scenario ends with {@code
 * iris.hostBarrier()}.
 */
public final class DeviceApiScenarios extends TeamScenarios {
    /** Every scenario, in run order; the JUnit side expects exactly these names. */
    public static final List<String> SCENARIOS = List.of(
            "device_translate",
            "device_load_store",
            "device_get_put_copy_1d",
            "device_tiles_2d",
            "device_atomics_int32",
            "device_atomics_uint32",
            "device_atomics_int64",
            "device_atomics_uint64",
            "device_atomics_float",
            "device_atomics_double",
            "device_atomics_half",
            "device_atomics_bfloat16",
            "device_signal_wait_pingpong",
            "device_barrier_in_kernel",
            "device_bulk_put_after_store",
            "device_wait_until_cmp",
            "device_wait_local_timeout",
            "device_first_launch_beside_held_sms",
            "device_wait_timeout");

    static final long DEVICE_TIMEOUT_MS = 5_000;
    static final int POISON_I32 = 0xA5A5A5A5;
    static final long POISON_I64 = 0xA5A5A5A5A5A5A5A5L;
    static final int POISON_U8 = 0xA5;

    private final KernelModule module;
    private final KernelArgs args;
    private final byte[] ctx;
    private final int next;
    private final int prev;
    private final long runSeed;

    private DeviceApiScenarios(Iris iris, KernelModule module, KernelArgs args, long runSeed) {
        super(iris, iris.world());
        this.runSeed = runSeed;
        this.module = module;
        this.args = args;
        this.ctx = iris.deviceContext().bytes();
        this.next = (rank + 1) % world;
        this.prev = (rank - 1 + world) % world;
    }

    public static void main(String[] argv) throws Exception {
        IrisConfig config = ScenarioConfigs.of(256L << 20, Duration.ofMillis(DEVICE_TIMEOUT_MS));
        ScenarioJob.run(config, (iris, runSeed) -> {
            try (KernelLibrary lib = KernelLibrary.forClasspath(); KernelArgs args = new KernelArgs()) {
                System.out.println(TestSeeds.banner("device-api", iris, runSeed));
                DeviceApiScenarios s = new DeviceApiScenarios(iris, lib.module("device_api_test"), args, runSeed);
                Map<String, ScenarioRunner.Scenario> bodies = new LinkedHashMap<>();
                bodies.put("device_translate", s::translate);
                bodies.put("device_load_store", s::loadStore);
                bodies.put("device_get_put_copy_1d", s::getPutCopy1d);
                bodies.put("device_tiles_2d", s::tiles2d);
                bodies.put("device_atomics_int32", () -> s.atomics(AType.I32));
                bodies.put("device_atomics_uint32", () -> s.atomics(AType.U32));
                bodies.put("device_atomics_int64", () -> s.atomics(AType.I64));
                bodies.put("device_atomics_uint64", () -> s.atomics(AType.U64));
                bodies.put("device_atomics_float", () -> s.atomics(AType.F32));
                bodies.put("device_atomics_double", () -> s.atomics(AType.F64));
                bodies.put("device_atomics_half", () -> s.atomics(AType.F16));
                bodies.put("device_atomics_bfloat16", () -> s.atomics(AType.BF16));
                bodies.put("device_signal_wait_pingpong", s::pingPong);
                bodies.put("device_barrier_in_kernel", s::barrierInKernel);
                bodies.put("device_bulk_put_after_store", s::bulkPutAfterStore);
                bodies.put("device_wait_until_cmp", s::waitUntilCmp);
                bodies.put("device_wait_local_timeout", s::waitLocalTimeout);
                bodies.put("device_first_launch_beside_held_sms", s::firstLaunchBesideHeldSms);
                bodies.put("device_wait_timeout", s::waitTimeout);  // last: it leaves a device error behind on purpose
                return ScenarioRunner.runTable(bodies, SCENARIOS, s.iris::hostBarrier);
            }
        });
    }

    // =============================================================================================
    // translate
    // =============================================================================================

    /**
     * Every rank puts a random tag into a one-word symmetric tensor; a kernel thread per rank r
     * reports translate(sym, r) and the word there. Pass: the address equals heapBase(r) + the
     * tensor's heap offset (and the host API's deviceAddress(r)), the word equals rank r's tag, the
     * own rank translates to the pointer itself, and slots for ranks >= world stay poisoned.
     */
    private void translate() {
        Failures f = new Failures();
        long[] tags = new long[world];
        for (int r = 0; r < world; r++) {
            tags[r] = notPoison(TestSeeds.mix64(seed("translate", r)));
        }
        try (SymTensor sym = heap.empty(DType.I64, 1);
             SymTensor addresses = heap.empty(DType.I64, DeviceContext.MAX_RANKS);
             SymTensor values = heap.empty(DType.I64, DeviceContext.MAX_RANKS)) {
            sym.copyFrom(new long[] {tags[rank]});
            poison(addresses, Kind.I64);
            poison(values, Kind.I64);
            iris.barrier();
            launch("dat_translate", LaunchShape.of(1, 32),
                    args().putLong(sym.deviceAddress()).putLong(addresses.deviceAddress()).putLong(values.deviceAddress()));
            iris.barrier();
            iris.synchronize();
            long[] a = addresses.toLongArray();
            long[] v = values.toLongArray();
            DeviceContext dc = iris.deviceContext();
            for (int r = 0; r < DeviceContext.MAX_RANKS; r++) {
                final int rr = r;
                if (r < world) {
                    long expected = dc.heapBase(r) + sym.heapOffset();
                    f.check(a[r] == expected, () -> "translate to rank " + rr + " gave 0x" + Long.toHexString(a[rr])
                            + ", expected heapBase(" + rr + ") + offset = 0x" + Long.toHexString(expected));
                    f.check(sym.deviceAddress(r) == expected, () -> "host deviceAddress(" + rr + ") disagrees with heapBase + offset");
                    f.check(v[r] == tags[r], () -> "word at rank " + rr + "'s copy is 0x" + Long.toHexString(v[rr])
                            + ", rank " + rr + " stored 0x" + Long.toHexString(tags[rr]));
                } else {
                    f.check(a[r] == POISON_I64 && v[r] == POISON_I64, () -> "thread " + rr + " >= world " + world + " wrote output");
                }
            }
            f.check(a[rank] == sym.deviceAddress(), () -> "translate to the own rank is not the identity");
            Set<Long> distinct = new HashSet<>();
            for (int r = 0; r < world; r++) distinct.add(a[r]);
            f.check(distinct.size() == world, () -> "translated addresses are not distinct: " + Arrays.toString(Arrays.copyOf(a, world)));
        }
        f.throwIfAny();
    }

    // =============================================================================================
    // load / store
    // =============================================================================================

    /**
     * One element per thread, three element types: float, int64 and iris::vec16 (one 128-bit
     * access). Each rank stores its source into next's destination, loads prev's source into a
     * local buffer, and loads its own source through translate-to-self. Pass, bit for bit: the
     * destination (written by prev) and the peer load equal prev's source, the self load equals
     * the own source, and nothing is left poisoned.
     */
    private void loadStore() {
        Failures f = new Failures();
        record Part(String suffix, Kind kind, int elements, int perItem) {}  // perItem: tensor elements per kernel element
        List<Part> parts = List.of(new Part("f32", Kind.F32, 100_003, 1), new Part("i64", Kind.I64, 100_003, 1),
                new Part("v16", Kind.I64, 2 * 50_001, 2));
        List<SymTensor> all = new ArrayList<>();
        try {
            SymTensor[][] t = new SymTensor[parts.size()][];
            for (int p = 0; p < parts.size(); p++) {
                Part part = parts.get(p);
                t[p] = new SymTensor[4];  // src, stored (written by prev), loaded from prev, loaded from self
                for (int k = 0; k < 4; k++) {
                    t[p][k] = heap.empty(part.kind.dtype, part.elements);
                    all.add(t[p][k]);
                }
                upload(t[p][0], part.kind, randomBits(part.kind, seed("load_store/" + part.suffix, rank), part.elements));
                for (int k = 1; k < 4; k++) poison(t[p][k], part.kind);
            }
            iris.barrier();  // every rank's source is filled and its destination poisoned
            for (int p = 0; p < parts.size(); p++) {
                Part part = parts.get(p);
                long n = part.elements / part.perItem;
                LaunchShape shape = LaunchShape.of((int) Math.min(1024, (n + 255) / 256), 256);
                launch("dat_store_" + part.suffix, shape, args().putLong(t[p][1].deviceAddress()).putLong(t[p][0].deviceAddress()).putLong(n).putInt(next));
                launch("dat_load_" + part.suffix, shape, args().putLong(t[p][2].deviceAddress()).putLong(t[p][0].deviceAddress()).putLong(n).putInt(prev));
                launch("dat_load_" + part.suffix, shape, args().putLong(t[p][3].deviceAddress()).putLong(t[p][0].deviceAddress()).putLong(n).putInt(rank));
            }
            iris.barrier();  // every store into this rank is complete
            iris.synchronize();
            for (int p = 0; p < parts.size(); p++) {
                Part part = parts.get(p);
                long[] fromPrev = randomBits(part.kind, seed("load_store/" + part.suffix, prev), part.elements);
                long[] own = randomBits(part.kind, seed("load_store/" + part.suffix, rank), part.elements);
                compareRange(f, part.suffix + " store by rank " + prev, download(t[p][1], part.kind), part.kind, 0, part.elements, fromPrev, 0);
                compareRange(f, part.suffix + " load from rank " + prev, download(t[p][2], part.kind), part.kind, 0, part.elements, fromPrev, 0);
                compareRange(f, part.suffix + " load from self", download(t[p][3], part.kind), part.kind, 0, part.elements, own, 0);
            }
        } finally {
            closeAll(all);
        }
        f.throwIfAny();
    }

    // =============================================================================================
    // get / put / copy, 1-D
    // =============================================================================================

    /** dstOff, srcOff in elements; chunk 0: one GridGroup copy, else BlockGroup chunks per block. */
    private record Case1D(String name, long dstOff, long srcOff, long count, long chunk, int threads) {}

    private static final List<Case1D> CASES_1D = List.of(
            new Case1D("grid_offsets_0_0", 0, 0, 1_000_003, 0, 256),
            new Case1D("blocks_offsets_0_0", 0, 0, 1_000_003, 65_536, 512),
            new Case1D("grid_offsets_1_1", 1, 1, 1_000_003, 0, 256),
            new Case1D("blocks_offsets_0_1", 0, 1, 1_000_003, 65_536, 512),
            new Case1D("blocks_offsets_3_0_odd_chunk", 3, 0, 100_001, 4_099, 128),
            new Case1D("blocks_odd_chunk_mixed_alignment", 0, 0, 99_999, 1_001, 64),
            new Case1D("tiny_offsets_4_4", 4, 4, 7, 0, 64),
            new Case1D("short_offsets_16_32", 16, 32, 35, 0, 32),
            new Case1D("single_element", 2, 5, 1, 0, 32));
    private static final long GUARD = 64;  // poisoned elements after the largest range

    /**
     * get (local dst = prev's src), put (next's dst = local src) and copy (next's dst = prev's
     * src, so with N >= 3 neither side is this rank), for float and byte elements, over the cases
     * above: 16-byte-aligned ranges (vector body + masked tail: 1000003 = 4k + 3 floats), ranges
     * offset by one element (element path), one side aligned only, odd per-block chunks (blocks of
     * every alignment in one launch), tiny and single-element ranges, the whole grid (GridGroup)
     * and per-block chunks (BlockGroup); plus get into plain DeviceMemory. Pass, bit for bit: the
     * destination range holds the source range of the rank that wrote it (prev for get and put,
     * prev's prev for copy) and every element outside the range still holds the poison.
     */
    private void getPutCopy1d() {
        Failures f = new Failures();
        long len = GUARD;
        for (Case1D c : CASES_1D) len = Math.max(len, Math.max(c.dstOff, c.srcOff) + c.count + GUARD);
        int n = Math.toIntExact(len);
        for (Kind kind : List.of(Kind.F32, Kind.U8)) {
            String suffix = kind == Kind.F32 ? "f32" : "u8";
            Map<Integer, long[]> sources = new HashMap<>();
            try (SymTensor src = heap.empty(kind.dtype, n); SymTensor dst = heap.empty(kind.dtype, n)) {
                upload(src, kind, sourceOf(sources, kind, suffix, rank, n));
                boolean sawVector = false, sawElement = false;
                for (Case1D c : CASES_1D) {
                    long dAddr = dst.deviceAddress() + c.dstOff * kind.bytes;
                    long sAddr = src.deviceAddress() + c.srcOff * kind.bytes;
                    boolean vector = aligned16(dAddr) && aligned16(sAddr) && peersAligned16(dst) && peersAligned16(src);
                    sawVector |= vector;
                    sawElement |= !vector;
                    String path = vector ? "vector path" : "element path";
                    for (String op : List.of("get", "put", "copy")) {
                        poison(dst, kind);
                        iris.barrier();  // peers' sources are filled and this rank's destination is poisoned
                        KernelArgs a = args().putLong(dAddr).putLong(sAddr).putLong(c.count);
                        int writer;  // the rank whose source ends up in this rank's destination
                        switch (op) {
                            case "get" -> {
                                a.putInt(prev);
                                writer = prev;
                            }
                            case "put" -> {
                                a.putInt(next);
                                writer = prev;
                            }
                            default -> {
                                a.putInt(prev).putInt(next);
                                writer = (rank - 2 + 2 * world) % world;
                            }
                        }
                        a.putLong(c.chunk);
                        launch("dat_" + op + "_" + suffix, shape1d(c), a);
                        iris.barrier();  // every write into this rank's destination is complete
                        iris.synchronize();
                        compareRange(f, suffix + " " + op + " " + c.name + " (" + path + ", count " + c.count + ", data of rank " + writer + ")",
                                download(dst, kind), kind, c.dstOff, c.count, sourceOf(sources, kind, suffix, writer, n), c.srcOff);
                    }
                }
                f.check(sawVector && sawElement, () -> suffix + ": the cases did not cover both the vector and the element path"
                        + " (heap alignment changed?)");
                if (kind == Kind.F32) {
                    getIntoDeviceMemory(f, src, sourceOf(sources, kind, suffix, prev, n), n);
                }
            }
        }
        f.throwIfAny();
    }

    /** get with a destination outside the heap (plain device memory), aligned and offset by one. */
    private void getIntoDeviceMemory(Failures f, SymTensor src, long[] prevSource, int n) {
        for (Case1D c : List.of(CASES_1D.get(0), CASES_1D.get(2))) {
            try (DeviceMemory mem = DeviceMemory.allocate((long) n * 4); FloatPointer host = new FloatPointer(n)) {
                Memcpy.memset(mem.address(), 0xFF, (long) n * 4, stream);  // all-ones floats are NaN: the poison
                iris.barrier();
                launch("dat_get_f32", shape1d(c), args().putLong(mem.address() + c.dstOff * 4).putLong(src.deviceAddress() + c.srcOff * 4)
                        .putLong(c.count).putInt(prev).putLong(c.chunk));
                iris.barrier();
                iris.synchronize();
                Memcpy.deviceToHost(host, mem.address(), (long) n * 4, stream);
                iris.synchronize();
                float[] got = new float[n];
                host.get(got);
                long[] bits = new long[n];
                for (int i = 0; i < n; i++) bits[i] = Float.floatToRawIntBits(got[i]) & 0xffffffffL;
                compareRange(f, "f32 get into DeviceMemory " + c.name, bits, Kind.F32, c.dstOff, c.count, prevSource, c.srcOff);
            }
        }
    }

    private static LaunchShape shape1d(Case1D c) {
        if (c.chunk > 0) {
            return LaunchShape.of(Math.toIntExact((c.count + c.chunk - 1) / c.chunk), c.threads);
        }
        long blocks = Math.max(1, Math.min(528, c.count / (c.threads * 16L)));
        return LaunchShape.of((int) blocks, c.threads);
    }

    private long[] sourceOf(Map<Integer, long[]> cache, Kind kind, String suffix, int owner, int n) {
        return cache.computeIfAbsent(owner, o -> randomBits(kind, seed("get_put_copy_1d/" + suffix, o), n));
    }

    private static boolean aligned16(long address) {
        return (address & 15) == 0;
    }

    /** The heap offset is the same everywhere, so alignment only differs if a peer's base does. */
    private boolean peersAligned16(SymTensor t) {
        for (int r = 0; r < world; r++) {
            if (!aligned16(t.deviceAddress(r))) return false;
        }
        return true;
    }

    // =============================================================================================
    // get_tile / put_tile, 2-D
    // =============================================================================================

    /**
     * A rows x cols tile at (srcRow0, srcCol0) of a srcRowsTotal x ldSrc matrix, to (dstRow0,
     * dstCol0) of a dstRowsTotal x ldDst matrix. rowsPerBlock 0: one GridGroup tile.
     */
    private record TileCase(String name, int srcRowsTotal, int ldSrc, int srcRow0, int srcCol0, int dstRowsTotal, int ldDst,
                            int dstRow0, int dstCol0, int rows, int cols, int rowsPerBlock, int threads) {
        TileCase {
            if (srcRow0 + rows > srcRowsTotal || srcCol0 + cols > ldSrc || dstRow0 + rows > dstRowsTotal || dstCol0 + cols > ldDst) {
                throw new IllegalStateException("tile case " + name + " does not fit its matrices");
            }
        }
    }

    private static final List<TileCase> TILE_CASES = List.of(
            // odd column offsets: every row misaligned, element path; 3 row groups per block
            new TileCase("strided_misaligned_blocks", 320, 257, 5, 3, 310, 140, 2, 7, 300, 129, 64, 96),
            // ld and column offsets multiples of 4 floats: every row 16-byte aligned, vector path
            new TileCase("strided_aligned_grid", 70, 512, 3, 0, 66, 320, 1, 4, 64, 256, 0, 256),
            // ld == cols on both sides: the contiguous shortcut
            new TileCase("contiguous_blocks", 50, 100, 0, 0, 50, 100, 0, 0, 50, 100, 16, 128),
            // rows == 1: the 1-D path
            new TileCase("single_row_grid", 4, 1000, 2, 1, 3, 1003, 1, 0, 1, 997, 0, 64),
            // fewer than 32 threads: rows shared by one group
            new TileCase("narrow_few_threads", 100, 33, 0, 1, 90, 50, 5, 10, 80, 31, 40, 16),
            // wide rows, 32 row groups of 32 threads, bands of 4 rows (the last one partial)
            new TileCase("wide_rows_blocks", 20, 4100, 1, 4, 18, 5000, 0, 8, 17, 4096, 4, 1024));

    /**
     * get_tile (local tile = prev's tile) and put_tile (next's tile = local tile) over the cases
     * above, leading dimensions != cols except the contiguous case. Pass, bit for bit: the
     * destination tile holds prev's source tile, and every other element of the destination matrix
     * (the padding between cols and ld, rows above and below) still holds the poison.
     */
    private void tiles2d() {
        Failures f = new Failures();
        for (int ci = 0; ci < TILE_CASES.size(); ci++) {
            TileCase c = TILE_CASES.get(ci);
            int srcLen = c.srcRowsTotal * c.ldSrc;
            long[] ownSource = randomBits(Kind.F32, seed("tiles_2d", ci, rank), srcLen);
            long[] prevSource = randomBits(Kind.F32, seed("tiles_2d", ci, prev), srcLen);
            try (SymTensor src = heap.empty(DType.F32, c.srcRowsTotal, c.ldSrc); SymTensor dst = heap.empty(DType.F32, c.dstRowsTotal, c.ldDst)) {
                upload(src, Kind.F32, ownSource);
                long dTile = dst.deviceAddress() + ((long) c.dstRow0 * c.ldDst + c.dstCol0) * 4;
                long sTile = src.deviceAddress() + ((long) c.srcRow0 * c.ldSrc + c.srcCol0) * 4;
                LaunchShape shape = c.rowsPerBlock > 0
                        ? LaunchShape.of((c.rows + c.rowsPerBlock - 1) / c.rowsPerBlock, c.threads)
                        : LaunchShape.of((int) Math.max(1, Math.min(256, (long) c.rows * c.cols / (c.threads * 8L))), c.threads);
                for (String op : List.of("get_tile", "put_tile")) {
                    poison(dst, Kind.F32);
                    iris.barrier();
                    launch("dat_" + op + "_f32", shape, args().putLong(dTile).putLong(c.ldDst).putLong(sTile).putLong(c.ldSrc)
                            .putLong(c.rows).putLong(c.cols).putInt(op.equals("get_tile") ? prev : next).putLong(c.rowsPerBlock));
                    iris.barrier();
                    iris.synchronize();
                    long[] got = download(dst, Kind.F32);
                    int wrong = 0;
                    String first = null;
                    for (int r = 0; r < c.dstRowsTotal; r++) {
                        for (int col = 0; col < c.ldDst; col++) {
                            long g = got[r * c.ldDst + col];
                            int tr = r - c.dstRow0, tc = col - c.dstCol0;
                            boolean inside = tr >= 0 && tr < c.rows && tc >= 0 && tc < c.cols;
                            long e = inside ? prevSource[(c.srcRow0 + tr) * c.ldSrc + c.srcCol0 + tc] : 0;
                            boolean ok = inside ? g == e : Kind.F32.isPoison(g);
                            if (!ok && wrong++ == 0) {
                                first = "(" + r + ", " + col + ") " + (!inside ? "outside the tile, overwritten with " + Kind.F32.show(g)
                                        : Kind.F32.isPoison(g) ? "unwritten (poison)" : "is " + Kind.F32.show(g) + ", expected " + Kind.F32.show(e));
                            }
                        }
                    }
                    final int w = wrong;
                    final String fst = first;
                    f.check(wrong == 0, () -> "f32 " + op + " " + c.name + " (" + c.rows + " x " + c.cols + ", ld_src " + c.ldSrc
                            + ", ld_dst " + c.ldDst + ", data of rank " + prev + "): " + w + " elements wrong, first at " + fst);
                }
            }
        }
        f.throwIfAny();
    }

    // =============================================================================================
    // atomics
    // =============================================================================================

    static final int ADD = 0, SUB = 1, XCHG = 2, CAS = 3, AND = 4, OR = 5, XOR = 6, MIN = 7, MAX = 8;
    static final String[] OP_NAMES = {"add", "sub", "xchg", "cas", "and", "or", "xor", "min", "max"};
    static final String[] ORDER_NAMES = {"relaxed", "acquire", "release", "acq_rel"};
    static final String[] SCOPE_NAMES = {"gpu", "system"};
    static final int SLOTS = 32;     // slots per (op, order, scope) combination
    static final int OPS = 512;      // operations per combination per participant: 16 per slot
    static final int ATOMIC_THREADS = 128;

    /** Element types of the atomics kernels; values travel as raw bits, zero-extended to a long. */
    enum AType {
        I32("i32", 4, false, false), U32("u32", 4, false, true), I64("i64", 8, false, false), U64("u64", 8, false, true),
        F32("f32", 4, true, false), F64("f64", 8, true, false), F16("f16", 2, true, false), BF16("bf16", 2, true, false);

        final String suffix;
        final int width;
        final boolean floating;
        final boolean unsigned;

        AType(String suffix, int width, boolean floating, boolean unsigned) {
            this.suffix = suffix;
            this.width = width;
            this.floating = floating;
            this.unsigned = unsigned;
        }

        long mask() {
            return width == 8 ? -1L : (1L << (8 * width)) - 1;
        }

        long signBit() {
            return 1L << (8 * width - 1);
        }

        /** The operations atomics.cuh offers for this type. */
        int[] ops() {
            if (this == F16 || this == BF16) return new int[] {ADD};
            if (floating) return new int[] {ADD, SUB, XCHG, CAS, MIN, MAX};
            return new int[] {ADD, SUB, XCHG, CAS, AND, OR, XOR, MIN, MAX};
        }

        /** NaN for floats, 0xA5 bytes for integers. */
        long poison() {
            return switch (this) {
                case F32 -> 0x7FC00000L;
                case F64 -> 0x7FF8000000000000L;
                case F16 -> 0x7E00L;
                case BF16 -> 0x7FC0L;
                default -> POISON_I64 & mask();
            };
        }

        /** Machine epsilon (spacing of 1.0 to the next value). */
        double eps() {
            return switch (this) {
                case F32 -> 0x1p-23;
                case F64 -> 0x1p-52;
                case F16 -> 0x1p-10;
                case BF16 -> 0x1p-7;
                default -> 0;
            };
        }

        double value(long bits) {
            return switch (this) {
                case I32 -> (int) bits;
                case U32 -> bits & 0xffffffffL;
                case I64 -> bits;
                case U64 -> bits >= 0 ? bits : (bits >>> 1) * 2.0 + (bits & 1);
                case F32 -> Float.intBitsToFloat((int) bits);
                case F64 -> Double.longBitsToDouble(bits);
                case F16 -> HalfFloats.f16ToFloat((short) bits);
                case BF16 -> HalfFloats.bf16ToFloat((short) bits);
            };
        }

        /** A double rounded once, to nearest even, into this floating type. */
        long roundBits(double v) {
            return switch (this) {
                case F32 -> Float.floatToRawIntBits((float) v) & 0xffffffffL;
                case F64 -> Double.doubleToRawLongBits(v);
                case F16 -> roundToSmallFloat(v, 10, -14, 65504.0, true);
                case BF16 -> roundToSmallFloat(v, 7, -126, 0x1.FEp127, false);
                default -> throw new IllegalStateException("roundBits on " + this);
            };
        }

        String show(long bits) {
            String hex = "0x" + Long.toHexString(bits & mask());
            return floating ? value(bits) + " (" + hex + ")" : (unsigned ? Long.toUnsignedString(bits) : Long.toString(signed(bits))) + " (" + hex + ")";
        }

        long signed(long bits) {
            return width == 8 ? bits : width == 4 ? (int) bits : (short) bits;
        }

        int compare(long a, long b) {
            if (floating) return Double.compare(value(a), value(b));
            if (unsigned) return Long.compareUnsigned(a, b);
            return Long.compare(signed(a), signed(b));
        }

        long add(long a, long b) {
            if (!floating) return (a + b) & mask();
            return switch (this) {
                case F32 -> Float.floatToRawIntBits(Float.intBitsToFloat((int) a) + Float.intBitsToFloat((int) b)) & 0xffffffffL;
                case F64 -> Double.doubleToRawLongBits(Double.longBitsToDouble(a) + Double.longBitsToDouble(b));
                // the sum of two 16-bit floats of the magnitudes used here is exact in a double,
                // so one rounding gives what the GPU's single-rounding add gives
                default -> roundBits(value(a) + value(b));
            };
        }

        /** What the device writes for an operation that read {@code old}. */
        long apply(int op, long old, long operand, long expected) {
            return switch (op) {
                case ADD -> add(old, operand);
                case SUB -> floating ? add(old, operand ^ signBit()) : (old - operand) & mask();  // T(0) - v is -v exactly
                case XCHG -> operand;
                case CAS -> old == expected ? operand : old;
                case AND -> old & operand;
                case OR -> old | operand;
                case XOR -> old ^ operand;
                case MIN -> compare(operand, old) < 0 ? operand : old;
                case MAX -> compare(operand, old) > 0 ? operand : old;
                default -> throw new IllegalArgumentException("op " + op);
            };
        }

        /**
         * The bits AND / OR operations may touch on one slot (see {@link #operand}): 32-bit
         * types bits 0..15 (pair) or 0..31 (contended), 64-bit types bits 0..31 or 0..63.
         */
        long touchable(boolean contended) {
            int bits = (width == 4 ? 16 : 32) * (contended ? 2 : 1);
            return bits == 64 ? -1L : (1L << bits) - 1;
        }

        /**
         * Initial value of a slot. Integers are never the poison. CAS: odd integers / negative
         * floats, never a desired value. AND: every bit an operation may clear is set; OR: every
         * bit an operation may set is clear; so every AND / OR really changes the slot.
         */
        long initial(int op, Random r, boolean contended) {
            if (!floating) {
                long v;
                do {
                    v = r.nextLong() & mask();
                } while (v == poison() || (v | 1) == poison());
                return switch (op) {
                    case CAS -> v | 1;
                    case AND -> v | touchable(contended);
                    case OR -> v & ~touchable(contended);
                    default -> v;
                };
            }
            return switch (op) {
                case ADD, SUB -> this == F16 ? roundBits(1 + r.nextInt(256) / 256.0)
                        : this == BF16 ? roundBits(1 + r.nextInt(64) / 64.0) : roundBits(uniform(r, 1, 2));
                case XCHG -> roundBits(nonZero(uniform(r, -4, 4)));
                case CAS -> roundBits(uniform(r, -2, -1));
                default -> roundBits(nonZero(uniform(r, -1000, 1000)));  // min, max
            };
        }

        /**
         * Operand of operation i (of OPS) for target index z. Integers are never the poison. CAS:
         * the desired value, unique per operation (id), even, so never an initial value. AND
         * clears one bit, OR sets one, and the operations on one slot all use different bits:
         * operation i is the (i / SLOTS)-th of its slot, so with target index z it owns bit
         * i / SLOTS + 16 z (64-bit types: twice that, or the bit above, at random). Every one of
         * them changes the slot, so a lost update always shows in the final value.
         */
        long operand(int op, Random r, long id, int z, int i) {
            if (!floating) {
                switch (op) {
                    case AND, OR -> {
                        int m = i / SLOTS + 16 * z;
                        int bit = width == 4 ? m : 2 * m + r.nextInt(2);
                        return op == AND ? ~(1L << bit) & mask() : 1L << bit;
                    }
                    case CAS -> {
                        return (id << 1) & mask();
                    }
                    default -> {
                        long v;
                        do {
                            v = r.nextLong() & mask();
                        } while (v == poison());
                        return v;
                    }
                }
            }
            return switch (op) {
                // 16-bit floats: multiples of 2^-8 (f16) / 2^-6 (bf16) in [0.5, 2), exact in the type
                case ADD, SUB -> this == F16 ? roundBits(0.5 + r.nextInt(384) / 256.0)
                        : this == BF16 ? roundBits(0.5 + r.nextInt(96) / 64.0) : roundBits(uniform(r, 0.5, 2));
                case XCHG -> roundBits(nonZero(uniform(r, -4, 4)));
                case CAS -> roundBits(1 + id * 0x1p-20);  // id < 2^20: exact in float and double
                default -> roundBits(nonZero(uniform(r, -1000, 1000)));
            };
        }
    }

    /**
     * Every operation the type offers x every memory order x both scopes, in one launch of the
     * type's kernel (runtime dispatch over (op, order, scope)), twice:
     * <ul>
     * <li>pair: each rank applies 16 operations per slot to next's slots, all scopes. A gpu-scope
     * atomic is only promised atomic among one GPU's threads, so in this mode each rank's slots
     * are touched by exactly one GPU (prev).
     * <li>contended, system scope only: each rank applies operations to its own slots and to
     * next's in the same launch, so every rank's slots take 32 operations per slot from two GPUs
     * at once.
     * </ul>
     * Olds come back through an all-gather, operands are regenerated from seeds. Pass, per slot:
     * (1) the returned old values chain: the multiset {initial} + {f(old_i, v_i)} equals {old_i} +
     * {final}, which holds for any interleaving of atomic read-modify-writes and fails for lost
     * updates, torn or unwritten olds (floats use the type's own rounding: Java float/double
     * arithmetic, 16-bit adds as one rounding of the exact sum); (2) the final value: integer
     * add/sub and all bitwise, min and max exact; float add/sub within (k + 1) * eps * (|init| + sum
     * |v_i|) of the double-precision sum; xchg: the final value is one of the exchanged values;
     * cas: exactly one operation saw the initial value, every other one saw that winner's desired
     * value, and the slot holds it; (3) for xchg, cas, min, max, and, or: every old value is one the
     * slot can have held (the initial value or an operand; for and / or, the initial value with
     * some of the operands' bits cleared / set), so an unwritten (poisoned) old always fails;
     * (4) floats: no old value is NaN (the poison). And / or operations on one slot each own a
     * different bit that the initial value has set / clear, so every one of them changes the slot.
     * These checks were exercised on the CPU against simulated histories with injected lost
     * updates, unwritten, wrong and duplicated olds and a corrupted final value.
     */
    private void atomics(AType t) {
        Failures f = new Failures();
        runAtomics(t, false, f);
        runAtomics(t, true, f);
        f.throwIfAny();
    }

    private void runAtomics(AType t, boolean contended, Failures f) {
        String mode = contended ? "contended" : "pair";
        List<int[]> combos = new ArrayList<>();
        for (int op : t.ops()) {
            for (int order = 0; order < 4; order++) {
                for (int scope = contended ? 1 : 0; scope < 2; scope++) {
                    combos.add(new int[] {op, order, scope});
                }
            }
        }
        int c = combos.size();
        int z = contended ? 2 : 1;
        int[] targets = contended ? new int[] {rank, next} : new int[] {next};
        int[] comboCodes = new int[3 * c];
        for (int i = 0; i < c; i++) System.arraycopy(combos.get(i), 0, comboCodes, 3 * i, 3);

        long[] operands = new long[z * c * OPS];
        long[] compares = new long[z * c * OPS];
        for (int zi = 0; zi < z; zi++) {
            long[] mine = atomicOperands(t, contended, combos, rank, zi);
            long[] ownerInit = atomicInitials(t, contended, combos, targets[zi]);
            System.arraycopy(mine, 0, operands, zi * c * OPS, c * OPS);
            for (int ci = 0; ci < c; ci++) {
                if (combos.get(ci)[0] != CAS) continue;
                for (int i = 0; i < OPS; i++) {
                    compares[(zi * c + ci) * OPS + i] = ownerInit[ci * SLOTS + i % SLOTS];
                }
            }
        }
        long[] myInit = atomicInitials(t, contended, combos, rank);
        long[] poison = new long[z * c * OPS];
        Arrays.fill(poison, t.poison());

        long[] finals;
        long[] myOlds;
        try (SymTensor comboT = heap.empty(DType.I32, comboCodes.length);
             SymTensor slots = allocWidth(t.width, c * SLOTS);
             SymTensor operandT = allocWidth(t.width, z * c * OPS);
             SymTensor compareT = allocWidth(t.width, z * c * OPS);
             SymTensor olds = allocWidth(t.width, z * c * OPS)) {
            comboT.copyFrom(comboCodes);
            uploadWidth(slots, t.width, myInit);
            uploadWidth(operandT, t.width, operands);
            uploadWidth(compareT, t.width, compares);
            uploadWidth(olds, t.width, poison);
            iris.barrier();  // every rank's slots hold their initial values
            LaunchShape shape = new LaunchShape((OPS + ATOMIC_THREADS - 1) / ATOMIC_THREADS, c, z, ATOMIC_THREADS, 1, 1, 0);
            launch("dat_atomics_" + t.suffix, shape, args().putLong(comboT.deviceAddress()).putLong(slots.deviceAddress())
                    .putLong(operandT.deviceAddress()).putLong(compareT.deviceAddress()).putLong(olds.deviceAddress())
                    .putLong(SLOTS).putLong(OPS).putInt(targets[0]).putInt(targets[z - 1]));
            iris.barrier();  // every operation on this rank's slots is complete
            iris.synchronize();
            finals = downloadWidth(slots, t.width);
            myOlds = downloadWidth(olds, t.width);
        }
        byte[][] gathered = iris.allGather(pack(myOlds, t.width));

        // Who operated on this rank's slots: (participant, its target index).
        int[][] participants = contended ? new int[][] {{rank, 0}, {prev, 1}} : new int[][] {{prev, 0}};
        long[][] partOperands = new long[participants.length][];
        long[][] partOlds = new long[participants.length][];
        for (int k = 0; k < participants.length; k++) {
            int p = participants[k][0], zi = participants[k][1];
            partOperands[k] = atomicOperands(t, contended, combos, p, zi);
            long[] all = unpack(gathered[p], t.width);
            partOlds[k] = Arrays.copyOfRange(all, zi * c * OPS, (zi + 1) * c * OPS);
        }

        for (int ci = 0; ci < c; ci++) {
            int op = combos.get(ci)[0];
            String combo = t.suffix + " " + mode + " " + OP_NAMES[op] + "/" + ORDER_NAMES[combos.get(ci)[1]] + "/" + SCOPE_NAMES[combos.get(ci)[2]];
            for (int s = 0; s < SLOTS; s++) {
                long init = myInit[ci * SLOTS + s];
                long fin = finals[ci * SLOTS + s];
                List<long[]> ops = new ArrayList<>();  // {operand, old}
                for (int k = 0; k < participants.length; k++) {
                    for (int i = s; i < OPS; i += SLOTS) {
                        ops.add(new long[] {partOperands[k][ci * OPS + i], partOlds[k][ci * OPS + i]});
                    }
                }
                checkSlot(f, t, op, combo + " slot " + s, init, fin, ops);
            }
        }
    }

    static void checkSlot(Failures f, AType t, int op, String where, long init, long fin, List<long[]> ops) {
        int unwritten = 0;
        Map<Long, Integer> bag = new HashMap<>();
        bag.merge(init, 1, Integer::sum);
        bag.merge(fin, -1, Integer::sum);
        for (long[] o : ops) {
            if (o[1] == t.poison()) unwritten++;
            bag.merge(t.apply(op, o[1], o[0], init), 1, Integer::sum);
            bag.merge(o[1], -1, Integer::sum);
        }
        boolean chain = bag.values().stream().allMatch(x -> x == 0);
        // Every old value must be one the slot can have held. xchg, min, max, cas only ever store
        // the initial value or an operand; and / or only clear / set the operands' bits. The
        // poison is none of these, so an old value that was never written fails here for sure.
        long unreachable = 0;
        long firstUnreachable = 0;
        if (op == XCHG || op == MIN || op == MAX || op == CAS || op == AND || op == OR) {
            Set<Long> held = new HashSet<>();
            held.add(init);
            long touched = 0;
            for (long[] o : ops) {
                held.add(o[0]);
                touched |= op == AND ? ~o[0] & t.mask() : o[0];
            }
            for (long[] o : ops) {
                long old = o[1];
                boolean ok = switch (op) {
                    case AND -> (old & ~init) == 0 && (old | touched) == (init | touched);
                    case OR -> (old & init) == init && (old & ~(init | touched)) == 0;
                    default -> held.contains(old);
                };
                if (!ok && unreachable++ == 0) firstUnreachable = old;
            }
        }
        final long nu = unreachable;
        final long fu = firstUnreachable;
        f.check(nu == 0, () -> where + ": " + nu + " returned old values are values the slot never held, first " + t.show(fu)
                + (fu == t.poison() ? " (the poison: never written)" : ""));
        final int u = unwritten;
        f.check(chain, () -> where + ": the " + ops.size() + " returned old values do not chain from " + t.show(init) + " to final "
                + t.show(fin) + (u > 0 ? " (" + u + " old values still hold the poison: never written)" : ""));
        if (t.floating) {  // no NaN is ever stored, so a NaN old value is the poison: never written
            f.check(u == 0, () -> where + ": " + u + " old values were never written (still NaN)");
            f.check(!Double.isNaN(t.value(fin)), () -> where + ": final value is NaN");
        }
        switch (op) {
            case ADD, SUB -> {
                if (t.floating) {
                    double ref = t.value(init), mag = Math.abs(ref);
                    for (long[] o : ops) {
                        ref += op == ADD ? t.value(o[0]) : -t.value(o[0]);
                        mag += Math.abs(t.value(o[0]));
                    }
                    double bound = (ops.size() + 1) * t.eps() * mag;
                    double got = t.value(fin), r = ref;
                    f.check(Math.abs(got - ref) <= bound, () -> where + ": final " + got + ", double-precision reference " + r
                            + ", |error| " + Math.abs(got - r) + " > bound " + bound);
                } else {
                    long expected = init;
                    for (long[] o : ops) expected = op == ADD ? expected + o[0] : expected - o[0];
                    long e = expected & t.mask();
                    f.check(fin == e, () -> where + ": final " + t.show(fin) + ", expected " + t.show(e));
                }
            }
            case AND, OR, XOR, MIN, MAX -> {
                long expected = init;
                for (long[] o : ops) expected = t.apply(op, expected, o[0], 0);
                long e = expected;
                f.check(fin == e, () -> where + ": final " + t.show(fin) + ", expected " + t.show(e));
            }
            case XCHG -> f.check(ops.stream().anyMatch(o -> o[0] == fin), () -> where + ": final " + t.show(fin)
                    + " is none of the exchanged values");
            case CAS -> {
                List<long[]> winners = ops.stream().filter(o -> o[1] == init).toList();
                f.check(winners.size() == 1, () -> where + ": " + winners.size() + " operations saw the initial value "
                        + t.show(init) + ", expected exactly one");
                if (winners.size() == 1) {
                    long desired = winners.get(0)[0];
                    long losersWrong = ops.stream().filter(o -> o[1] != init && o[1] != desired).count();
                    f.check(losersWrong == 0, () -> where + ": " + losersWrong + " failed operations saw something other than the"
                            + " winner's value " + t.show(desired));
                    f.check(fin == desired, () -> where + ": final " + t.show(fin) + ", the winner stored " + t.show(desired));
                }
            }
            default -> throw new IllegalStateException("op " + op);
        }
    }

    private long[] atomicInitials(AType t, boolean contended, List<int[]> combos, int owner) {
        Random r = new Random(seed("atomics/init", t.ordinal(), contended ? 1 : 0, owner));
        long[] out = new long[combos.size() * SLOTS];
        for (int ci = 0; ci < combos.size(); ci++) {
            for (int s = 0; s < SLOTS; s++) out[ci * SLOTS + s] = t.initial(combos.get(ci)[0], r, contended);
        }
        return out;
    }

    /** Participant p's operands for its target z, [combo][op]. */
    private long[] atomicOperands(AType t, boolean contended, List<int[]> combos, int p, int z) {
        Random r = new Random(seed("atomics/operand", t.ordinal(), contended ? 1 : 0, p, z));
        long[] out = new long[combos.size() * OPS];
        for (int ci = 0; ci < combos.size(); ci++) {
            for (int i = 0; i < OPS; i++) {
                long id = ((long) (p * 2 + z) * combos.size() + ci) * OPS + i;  // < 16 * 72 * 512 < 2^20
                out[ci * OPS + i] = t.operand(combos.get(ci)[0], r, id, z, i);
            }
        }
        return out;
    }

    private static double uniform(Random r, double lo, double hi) {
        return lo + (hi - lo) * r.nextDouble();
    }

    private static double nonZero(double v) {
        return Math.abs(v) < 1e-3 ? 1.0 : v;
    }

    /**
     * Rounds a finite double to nearest even in a binary float with {@code mantissaBits} stored
     * significand bits and minimum normal exponent {@code minExp} (f16: 10, -14; bf16: 7, -126);
     * one rounding step, unlike double -> float -> half.
     */
    static long roundToSmallFloat(double v, int mantissaBits, int minExp, double max, boolean f16) {
        long sign = Double.doubleToRawLongBits(v) < 0 ? 0x8000L : 0;  // bit 15 in both formats
        double a = Math.abs(v);
        if (a == 0) return sign;
        int q = Math.max(Math.getExponent(a), minExp) - mantissaBits;  // exponent of one unit in the last place
        double rounded = Math.scalb(Math.rint(Math.scalb(a, -q)), q);
        if (rounded > max) return sign | (f16 ? 0x7C00L : 0x7F80L);
        // rounded is representable in the small type, so these conversions are exact
        short bits = f16 ? HalfFloats.floatToF16((float) rounded) : HalfFloats.floatToBf16((float) rounded);
        return sign | (bits & 0x7FFFL);
    }

    // =============================================================================================
    // signal / wait_until ping-pong
    // =============================================================================================

    static final long PINGPONG_ROUNDS = 5_000;
    /**
     * Rounds where the players share a GPU: each round then waits for a time slice of the other
     * context (about 2 ms on an H200), so 5000 rounds would take 45 s and prove nothing more.
     */
    static final long PINGPONG_ROUNDS_SHARED_GPU = 500;

    /**
     * Ranks 0 and 1 (others wait on the host, not spinning on the GPU that the players may share)
     * play PINGPONG_ROUNDS rounds (PINGPONG_ROUNDS_SHARED_GPU where ranks share GPUs), once with signal
     * set and once with signal add; each round carries a data word written with store before the
     * signal and read by the receiver after its wait, wait_until and wait_until_backoff taking
     * turns (see dat_pingpong). Pass: every round
     * completed, every data word received equals what the peer sent in that round (so no receiver
     * read the data before the flag published it), and the flag and data words end at the last
     * round's values.
     */
    private void pingPong() {
        Failures f = new Failures();
        long seed = seed("pingpong");  // the same on every rank: each checks what the other sent
        long rounds = iris.sharesGpus() ? PINGPONG_ROUNDS_SHARED_GPU : PINGPONG_ROUNDS;
        int n = (int) rounds;
        boolean plays = rank < 2;
        int peer = 1 - rank;
        try (SymTensor flag = heap.empty(DType.I64, 1); SymTensor data = heap.empty(DType.I64, 1);
             SymTensor received = heap.empty(DType.I64, n); SymTensor completed = heap.empty(DType.I64, 1)) {
            for (int add = 0; add <= 1; add++) {
                String variant = add == 1 ? "signal add" : "signal set";
                flag.copyFrom(new long[] {0});
                data.copyFrom(new long[] {0});
                poison(received, Kind.I64);
                poison(completed, Kind.I64);
                iris.barrier();  // both flags are zero before anyone signals
                if (plays) {
                    launch("dat_pingpong", LaunchShape.of(1, 32), args().putLong(flag.deviceAddress()).putLong(data.deviceAddress())
                            .putLong(rounds).putInt(peer).putInt(rank == 0 ? 1 : 0).putInt(add).putLong(seed)
                            .putLong(received.deviceAddress()).putLong(completed.deviceAddress()));
                }
                iris.synchronize();
                iris.hostBarrier();  // the players are done; nobody resets the flags before that
                if (!plays) continue;
                long done = completed.toLongArray()[0];
                f.check(done == rounds, () -> variant + ": completed " + done + " of " + rounds + " rounds");
                long[] got = received.toLongArray();
                int wrong = 0;
                String first = null;
                for (int i = 0; i < n; i++) {
                    long e = pingpongMessage(seed, peer, i + 1);
                    if (got[i] != e && wrong++ == 0) {
                        first = "round " + (i + 1) + ": got 0x" + Long.toHexString(got[i]) + (got[i] == POISON_I64 ? " (poison: not written)" : "")
                                + ", rank " + peer + " sent 0x" + Long.toHexString(e);
                    }
                }
                final int w = wrong;
                final String fst = first;
                f.check(wrong == 0, () -> variant + ": " + w + " of " + n + " received data words wrong; first " + fst);
                long flagValue = flag.toLongArray()[0];
                long dataValue = data.toLongArray()[0];
                f.check(flagValue == rounds, () -> variant + ": flag ends at " + flagValue + ", expected " + rounds);
                f.check(dataValue == pingpongMessage(seed, peer, n), () -> variant + ": data word ends at 0x" + Long.toHexString(dataValue)
                        + ", expected rank " + peer + "'s last message");
            }
        }
        f.throwIfAny();
    }

    /** The host side of pingpong_msg in device_api_test.cu. */
    static long pingpongMessage(long seed, int sender, long round) {
        return TestSeeds.mix64(seed ^ ((sender + 1L) * 0xD6E8FEB86659FD93L) ^ (round * 0xA0761D6478BD642FL));
    }

    // =============================================================================================
    // barrier inside a user kernel
    // =============================================================================================

    static final int BARRIER_ITERATIONS = 300;
    static final int BARRIER_WORDS = 128;  // threads of the one block, words per source row

    /**
     * One block per rank runs BARRIER_ITERATIONS rounds of (every thread stores its word into
     * every rank's mailbox, iris::barrier, every thread reads every source's word), see
     * dat_barrier_loop. Pass: every barrier returned true, no word read after a barrier was stale
     * or missing (errors[k] == 0), and the sum of the words read in each round equals the host's
     * independent sum of what the sources wrote.
     */
    private void barrierInKernel() {
        Failures f = new Failures();
        long seed = seed("barrier_in_kernel");
        try (SymTensor mailbox = heap.zeros(DType.I64, 2L * world * BARRIER_WORDS);
             SymTensor sums = heap.empty(DType.I64, BARRIER_ITERATIONS);
             SymTensor errors = heap.empty(DType.I32, BARRIER_ITERATIONS);
             SymTensor ok = heap.empty(DType.I32, 1)) {
            poison(sums, Kind.I64);
            poison(errors, Kind.I32);
            poison(ok, Kind.I32);
            iris.barrier();
            launch("dat_barrier_loop", LaunchShape.of(1, BARRIER_WORDS), args().putLong(mailbox.deviceAddress())
                    .putLong(BARRIER_ITERATIONS).putLong(seed).putInt(77).putLong(sums.deviceAddress())
                    .putLong(errors.deviceAddress()).putLong(ok.deviceAddress()));
            iris.barrier();
            iris.synchronize();
            checkOk(f, ok);
            int[] err = errors.toIntArray();
            long[] sum = sums.toLongArray();
            for (int k = 0; k < BARRIER_ITERATIONS; k++) {
                long expected = 0;
                for (int s = 0; s < world; s++) {
                    for (int j = 0; j < BARRIER_WORDS; j++) expected += barrierWord(seed, k, s, rank, j);
                }
                final int kk = k;
                final long e = expected;
                f.check(err[k] == 0, () -> "round " + kk + ": " + (err[kk] == POISON_I32 ? "no result (poison)"
                        : err[kk] + " words read after the barrier were not the ones written before it"));
                f.check(sum[k] == e, () -> "round " + kk + ": sum of words read 0x" + Long.toHexString(sum[kk])
                        + ", expected 0x" + Long.toHexString(e));
            }
        }
        f.throwIfAny();
    }

    /** A kernel's ok word (1: every in-kernel barrier returned true). */
    private static void checkOk(Failures f, SymTensor ok) {
        int okValue = ok.toIntArray()[0];
        f.check(okValue == 1, () -> "ok flag is " + okValue + (okValue == POISON_I32 ? " (poison: kernel did not finish)" : "")
                + ", expected 1");
    }

    /** The host side of barrier_word in device_api_test.cu. */
    static long barrierWord(long seed, long round, int src, int dst, int j) {
        return TestSeeds.mix64(seed + round * 0x9FB21C651E98DF25L + src * 0xC2B2AE3D27D4EB4FL + dst * 0x165667B19E3779F9L
                + j * 0x27D4EB2F165667C5L);
    }

    // =============================================================================================
    // bulk put right after ordinary stores
    // =============================================================================================

    static final int BULK_ROUNDS = 200;
    /**
     * Not a multiple of 2 words: the last 8 bytes of even rounds take bulk_copy's remainder path, and
     * slot 1 (odd rounds) starts 8 bytes past a 16-byte boundary, where cp.async.bulk would fault and
     * bulk_copy must copy with the threads instead.
     */
    static final int BULK_WORDS = 6001;
    static final int BULK_THREADS = 256;
    /** bulk_smem_bytes<2, 4096>() of device_api_test.cu: two 4 KiB stages and their mbarriers. */
    static final int BULK_SHARED_BYTES = 2 * 4096 + 2 * 8;

    /**
     * Every rank writes fresh words with ordinary stores and at once bulk-puts them into the next
     * rank (dat_bulk_put_after_store), BULK_ROUNDS times. Pass: every barrier returned true and no
     * word that arrived was stale (a bulk load that read around the async-proxy fence), in any round.
     */
    private void bulkPutAfterStore() {
        Failures f = new Failures();
        long seed = seed("bulk_put_after_store");
        try (SymTensor src = heap.zeros(DType.I64, BULK_WORDS); SymTensor slots = heap.zeros(DType.I64, 2L * BULK_WORDS);
             SymTensor errors = heap.empty(DType.I32, BULK_ROUNDS); SymTensor ok = heap.empty(DType.I32, 1)) {
            poison(errors, Kind.I32);
            poison(ok, Kind.I32);
            iris.barrier();
            launch("dat_bulk_put_after_store", LaunchShape.of(1, BULK_THREADS).withSharedBytes(BULK_SHARED_BYTES),
                    args().putLong(src.deviceAddress()).putLong(slots.deviceAddress()).putLong(BULK_WORDS).putLong(BULK_ROUNDS)
                            .putLong(seed).putInt(78).putLong(errors.deviceAddress()).putLong(ok.deviceAddress()));
            iris.barrier();
            iris.synchronize();
            checkOk(f, ok);
            int[] err = errors.toIntArray();
            for (int k = 0; k < BULK_ROUNDS; k++) {
                final int kk = k;
                f.check(err[k] == 0, () -> "round " + kk + ": " + (err[kk] == POISON_I32 ? "no result (poison)"
                        : err[kk] + " of " + BULK_WORDS + " words put after ordinary stores arrived stale"));
            }
        }
        f.throwIfAny();
    }

    // =============================================================================================
    // wait_until: every comparison
    // =============================================================================================

    static final int CMP_EQ = 0, CMP_NE = 1, CMP_GE = 2, CMP_GT = 3, CMP_LE = 4, CMP_LT = 5;
    static final String[] CMP_NAMES = {"eq", "ne", "ge", "gt", "le", "lt"};
    static final long SHORT_TIMEOUT_NS = 2_000_000;
    static final int CMP_SITE_BASE = 500;
    static final String[] WAIT_NAMES = {"wait_until", "wait_until_backoff", "wait_until_local", "wait_until_local<Scope::block>"};

    /**
     * With the flag at a random value F, wait_until, wait_until_backoff, wait_until_local and its
     * block-scope form (in turn case by case, see dat_wait_cmp) run cases that hold at once for every Cmp
     * (eq F, ne F+-1, ge F and F-1, gt F-1, le F and F+1, lt F+1), then cases that never hold (eq
     * F+1, ne F, ge F+1, gt F, le F-1, lt F) under a 2 ms deadline set in the kernel's copy of the
     * context. Pass: true cases return true, false cases return false, synchronize throws one
     * IrisDeviceException (code 1, no peer) naming this rank and the first false case's site, the
     * whole run takes well under the context's own 5 s deadline, and the status is clear afterwards.
     */
    private void waitUntilCmp() {
        Failures f = new Failures();
        long flagValue = 1000 + new Random(seed("wait_until_cmp", rank)).nextInt(1_000_000);
        long fv = flagValue;
        long[][] trueCases = {{CMP_EQ, fv}, {CMP_NE, fv - 1}, {CMP_NE, fv + 1}, {CMP_GE, fv}, {CMP_GE, fv - 1}, {CMP_GT, fv - 1},
                {CMP_LE, fv}, {CMP_LE, fv + 1}, {CMP_LT, fv + 1}};
        long[][] falseCases = {{CMP_EQ, fv + 1}, {CMP_NE, fv}, {CMP_GE, fv + 1}, {CMP_GT, fv}, {CMP_LE, fv - 1}, {CMP_LT, fv}};
        int n = trueCases.length + falseCases.length;
        long[] cases = new long[2 * n];
        for (int k = 0; k < n; k++) {
            long[] c = k < trueCases.length ? trueCases[k] : falseCases[k - trueCases.length];
            cases[2 * k] = c[0];
            cases[2 * k + 1] = c[1];
        }
        int firstFalseSite = CMP_SITE_BASE + trueCases.length;
        try (SymTensor flag = heap.empty(DType.I64, 1); SymTensor caseT = heap.empty(DType.I64, 2L * n);
             SymTensor results = heap.empty(DType.I32, n)) {
            flag.copyFrom(new long[] {flagValue});
            caseT.copyFrom(cases);
            poison(results, Kind.I32);
            long start = System.nanoTime();
            launch("dat_wait_cmp", LaunchShape.of(1, 32), args().putLong(flag.deviceAddress()).putLong(caseT.deviceAddress())
                    .putLong(results.deviceAddress()).putLong(n).putLong(SHORT_TIMEOUT_NS).putInt(CMP_SITE_BASE));
            ExpectedDeviceError waited = ExpectedDeviceError.synchronize(iris, start);
            IrisDeviceException caught = waited.error();
            double seconds = waited.seconds();
            if (caught == null) {
                f.fail("synchronize returned normally although " + falseCases.length + " waits could never succeed");
            } else {
                IrisDeviceException e = caught;
                String m = String.valueOf(e.getMessage());
                f.check(e.code() == 1, () -> "device error code " + e.code() + ", expected 1 (wait_timeout): " + m);
                f.check(e.peer() == -1, () -> "peer " + e.peer() + ", expected -1 (none given): " + m);
                f.check(m.startsWith("rank " + rank + ":"), () -> "message does not name rank " + rank + ": " + m);
                f.check(m.contains("wait site " + firstFalseSite), () -> "message does not name the first failing wait, site "
                        + firstFalseSite + ": " + m);
            }
            f.check(seconds < 3.0, () -> "took " + seconds + " s: the kernel's 2 ms deadline was not used (context deadline "
                    + DEVICE_TIMEOUT_MS + " ms)");
            int[] got = results.toIntArray();  // synchronizes again: the status must be clear by now
            for (int k = 0; k < n; k++) {
                int expected = k < trueCases.length ? 1 : 0;
                final int kk = k;
                f.check(got[k] == expected, () -> WAIT_NAMES[kk % WAIT_NAMES.length] + "("
                        + CMP_NAMES[(int) cases[2 * kk]] + ", " + cases[2 * kk + 1]
                        + ") with flag " + fv + " returned " + (got[kk] == POISON_I32 ? "nothing (poison)" : got[kk] == 1 ? "true" : got[kk] == 0 ? "false" : got[kk])
                        + ", expected " + (expected == 1));
            }
            iris.checkDeviceStatus();  // throws if the record was not cleared
        }
        f.throwIfAny();
    }

    static final int LOCAL_SITE = 4343;

    /**
     * wait_until_local, at GPU scope and then at block scope, on a flag nobody sets, with nothing
     * else recording an error, under a 2 ms deadline in the kernel's copy of the context. Pass, for
     * each: it returns false after at least twice the deadline (by the GPU's timer) and well under
     * the context's own 5 s, and synchronize throws code 1 naming this rank as the peer and the
     * site (LOCAL_SITE, plus one at block scope); the status is clear afterwards.
     */
    private void waitLocalTimeout() {
        Failures f = new Failures();
        for (int block = 0; block < 2; block++) {
            String name = WAIT_NAMES[2 + block];
            int site = LOCAL_SITE + block;
            try (SymTensor flag = heap.zeros(DType.I64, 1); SymTensor result = heap.empty(DType.I32, 1);
                 SymTensor waitedNs = heap.empty(DType.I64, 1)) {
                poison(result, Kind.I32);
                poison(waitedNs, Kind.I64);
                long start = System.nanoTime();
                launch("dat_wait_local_timeout", LaunchShape.of(1, 32), args().putLong(flag.deviceAddress())
                        .putLong(SHORT_TIMEOUT_NS).putInt(site).putInt(block).putLong(result.deviceAddress())
                        .putLong(waitedNs.deviceAddress()));
                ExpectedDeviceError waited = ExpectedDeviceError.synchronize(iris, start);
                IrisDeviceException caught = waited.error();
                if (caught == null) {
                    f.fail(name + ": synchronize returned normally after a local wait for a flag nobody sets");
                } else {
                    String m = String.valueOf(caught.getMessage());
                    f.check(caught.code() == 1, () -> name + ": device error code " + caught.code() + ", expected 1 (wait_timeout): " + m);
                    f.check(caught.peer() == rank, () -> name + ": peer " + caught.peer() + ", expected this rank " + rank + ": " + m);
                    f.check(m.contains("wait site " + site), () -> name + ": message does not name site " + site + ": " + m);
                }
                f.check(waited.seconds() < 3.0, () -> name + ": took " + waited.seconds() + " s: the kernel's 2 ms deadline was not used");
                int got = result.toIntArray()[0];
                long ns = waitedNs.toLongArray()[0];
                f.check(got == 0, () -> name + " returned " + (got == POISON_I32 ? "nothing (poison)" : got) + ", expected false (0)");
                f.check(ns >= 2 * SHORT_TIMEOUT_NS && ns < 1_000_000_000L, () -> name + " gave up after " + ns
                        + " ns, expected at least twice the deadline, " + 2 * SHORT_TIMEOUT_NS + " ns");
                iris.checkDeviceStatus();  // cleared by the exception
            }
        }
        f.throwIfAny();
    }

    // =============================================================================================
    // wait_until that times out
    // =============================================================================================

    static final int TIMEOUT_SITE = 4242;

    /**
     * Every rank waits (context deadline, 5 s) for its own flag to reach 1; nobody sets it. Pass:
     * synchronize throws IrisDeviceException after 4.9 to 12 s with code 1, peer = next (the peer
     * the wait named), a message that starts with this rank, says the wait timed out and names the
     * site and the peer; the wait returned false; afterwards the status is clear and a device
     * barrier plus synchronize work again.
     */
    private void waitTimeout() {
        Failures f = new Failures();
        try (SymTensor flag = heap.zeros(DType.I64, 1); SymTensor result = heap.empty(DType.I32, 1)) {
            poison(result, Kind.I32);
            iris.barrier();
            iris.synchronize();
            long start = System.nanoTime();
            launch("dat_wait_timeout", LaunchShape.of(1, 32), args().putLong(flag.deviceAddress()).putLong(1L)
                    .putInt(TIMEOUT_SITE).putInt(next).putLong(result.deviceAddress()));
            ExpectedDeviceError waited = ExpectedDeviceError.synchronize(iris, start);
            IrisDeviceException caught = waited.error();
            double seconds = waited.seconds();
            if (caught == null) {
                f.fail("synchronize returned normally after waiting for a flag nobody sets");
            } else {
                IrisDeviceException e = caught;
                String m = String.valueOf(e.getMessage());
                f.check(seconds >= 4.9 && seconds <= 12, () -> "exception after " + seconds + " s, expected about "
                        + DEVICE_TIMEOUT_MS / 1000.0 + " s: " + m);
                f.check(e.code() == 1, () -> "device error code " + e.code() + ", expected 1 (wait_timeout): " + m);
                f.check(e.peer() == next, () -> "peer " + e.peer() + ", expected " + next + ": " + m);
                f.check(m.startsWith("rank " + rank + ":"), () -> "message does not start with the rank: " + m);
                f.check(m.contains("timed out"), () -> "message does not say the wait timed out: " + m);
                f.check(m.contains("wait site " + TIMEOUT_SITE), () -> "message does not name site " + TIMEOUT_SITE + ": " + m);
                f.check(m.contains("waiting for rank " + next), () -> "message does not name the peer " + next + ": " + m);
            }
            int got = result.toIntArray()[0];
            f.check(got == 0, () -> "wait_until returned " + (got == POISON_I32 ? "nothing (poison)" : got) + ", expected false (0)");
            iris.checkDeviceStatus();  // cleared by the exception
            iris.barrier();             // nothing else disturbed: the ranks still meet on the device
            iris.synchronize();
        }
        f.throwIfAny();
    }

    // =============================================================================================
    // helpers
    // =============================================================================================

    /**
     * A kernel of a module loaded just now, launched for the first time while other work holds all
     * SMs but one, runs on the free one at once: its code reached the context when it was looked up.
     * Loaded lazily at its first launch instead, the launch would wait for the running kernels, here
     * until the hog lets go by its deadline.
     */
    private void firstLaunchBesideHeldSms() {
        Failures f = new Failures();
        long value = notPoison(TestSeeds.mix64(seed("first_launch_beside_held_sms", rank)));
        try (KernelLibrary fresh = KernelLibrary.forIris(iris); SymTensor out = heap.empty(DType.I64, 1)) {
            Kernel store = fresh.module(SmHog.MODULE).kernel("rt_store");  // a module of its own: none of it has run
            poison(out, Kind.I64);
            try (SmHog hog = SmHog.hold(iris, 1, Duration.ofSeconds(20))) {
                store.launch(LaunchShape.of(1, 32), stream, args.clear().putLong(out.deviceAddress()).putLong(value));
                stream.synchronize();
                hog.checkStillHolding();
            }
            long got = out.toLongArray()[0];
            f.check(got == value, () -> "rt_store wrote 0x" + Long.toHexString(got) + ", expected 0x" + Long.toHexString(value));
        }
        f.throwIfAny();
    }

    private KernelArgs args() {
        return args.clear().putBytes(ctx, DeviceContext.ALIGNMENT);
    }

    private void launch(String kernel, LaunchShape shape, KernelArgs a) {
        module.kernel(kernel).launch(shape, stream, a);
    }

    private long seed(String what, long... parts) {
        return TestSeeds.derive(runSeed, what, parts);
    }

    private static long notPoison(long v) {
        return v == POISON_I64 ? v ^ 1 : v;
    }

    private static void closeAll(List<SymTensor> tensors) {
        for (int i = tensors.size() - 1; i >= 0; i--) tensors.get(i).close();
    }

    /** How the data-movement scenarios hold a tensor's elements: raw bits, zero-extended. */
    enum Kind {
        F32(DType.F32, 4), I32(DType.I32, 4), I64(DType.I64, 8), U8(DType.U8, 1);

        final DType dtype;
        final int bytes;

        Kind(DType dtype, int bytes) {
            this.dtype = dtype;
            this.bytes = bytes;
        }

        boolean isPoison(long bits) {
            return switch (this) {
                case F32 -> Float.isNaN(Float.intBitsToFloat((int) bits));
                case I32 -> bits == (POISON_I32 & 0xffffffffL);
                case I64 -> bits == POISON_I64;
                case U8 -> bits == POISON_U8;
            };
        }

        String show(long bits) {
            return switch (this) {
                case F32 -> Float.intBitsToFloat((int) bits) + " (0x" + Integer.toHexString((int) bits) + ")";
                default -> "0x" + Long.toHexString(bits);
            };
        }
    }

    /** Random elements that are never the poison (floats: any bit pattern but NaN). */
    private static long[] randomBits(Kind kind, long seed, int n) {
        Random r = new Random(seed);
        long[] out = new long[n];
        for (int i = 0; i < n; i++) {
            long v;
            do {
                v = switch (kind) {
                    case F32 -> {
                        int b = r.nextInt();
                        if (Float.isNaN(Float.intBitsToFloat(b))) b &= 0xBFFFFFFF;  // exponent no longer all ones
                        yield b & 0xffffffffL;
                    }
                    case I32 -> r.nextInt() & 0xffffffffL;
                    case I64 -> r.nextLong();
                    case U8 -> r.nextInt(256);
                };
            } while (kind.isPoison(v));
            out[i] = v;
        }
        return out;
    }

    private static void upload(SymTensor t, Kind kind, long[] bits) {
        switch (kind) {
            case F32 -> {
                float[] v = new float[bits.length];
                for (int i = 0; i < v.length; i++) v[i] = Float.intBitsToFloat((int) bits[i]);
                t.copyFrom(v);
            }
            case I32 -> {
                int[] v = new int[bits.length];
                for (int i = 0; i < v.length; i++) v[i] = (int) bits[i];
                t.copyFrom(v);
            }
            case I64 -> t.copyFrom(bits.clone());
            case U8 -> {
                byte[] v = new byte[bits.length];
                for (int i = 0; i < v.length; i++) v[i] = (byte) bits[i];
                t.copyFrom(v);
            }
        }
    }

    private static long[] download(SymTensor t, Kind kind) {
        return switch (kind) {
            case F32 -> {
                float[] v = t.toFloatArray();
                long[] out = new long[v.length];
                for (int i = 0; i < v.length; i++) out[i] = Float.floatToRawIntBits(v[i]) & 0xffffffffL;
                yield out;
            }
            case I32 -> {
                int[] v = t.toIntArray();
                long[] out = new long[v.length];
                for (int i = 0; i < v.length; i++) out[i] = v[i] & 0xffffffffL;
                yield out;
            }
            case I64 -> t.toLongArray();
            case U8 -> {
                byte[] v = t.toByteArray();
                long[] out = new long[v.length];
                for (int i = 0; i < v.length; i++) out[i] = v[i] & 0xff;
                yield out;
            }
        };
    }

    private static void poison(SymTensor t, Kind kind) {
        int n = Math.toIntExact(t.numel());
        switch (kind) {
            case F32 -> {
                float[] v = new float[n];
                Arrays.fill(v, Float.NaN);
                t.copyFrom(v);
            }
            case I32 -> {
                int[] v = new int[n];
                Arrays.fill(v, POISON_I32);
                t.copyFrom(v);
            }
            case I64 -> {
                long[] v = new long[n];
                Arrays.fill(v, POISON_I64);
                t.copyFrom(v);
            }
            case U8 -> {
                byte[] v = new byte[n];
                Arrays.fill(v, (byte) POISON_U8);
                t.copyFrom(v);
            }
        }
    }

    /**
     * got[dOff, dOff + count) must equal src[sOff, sOff + count) bit for bit, everything else in
     * got must still be poison.
     */
    private static void compareRange(Failures f, String what, long[] got, Kind kind, long dOff, long count, long[] src, long sOff) {
        int wrong = 0;
        String first = null;
        for (int i = 0; i < got.length; i++) {
            boolean inside = i >= dOff && i < dOff + count;
            boolean ok;
            if (inside) {
                long e = src[(int) (sOff + i - dOff)];
                ok = got[i] == e;
                if (!ok && wrong == 0) {
                    first = "element " + i + " " + (kind.isPoison(got[i]) ? "unwritten (poison)" : "is " + kind.show(got[i]))
                            + ", expected " + kind.show(e);
                }
            } else {
                ok = kind.isPoison(got[i]);
                if (!ok && wrong == 0) {
                    first = "element " + i + " outside [" + dOff + ", " + (dOff + count) + ") was overwritten with " + kind.show(got[i]);
                }
            }
            if (!ok) wrong++;
        }
        final int w = wrong;
        final String fst = first;
        f.check(wrong == 0, () -> what + ": " + w + " of " + got.length + " elements wrong; first: " + fst);
    }

    /** Symmetric tensors for raw elements of 2, 4 or 8 bytes (2-byte ones as byte pairs). */
    private SymTensor allocWidth(int width, int n) {
        return switch (width) {
            case 2 -> heap.empty(DType.U8, 2L * n);
            case 4 -> heap.empty(DType.I32, n);
            case 8 -> heap.empty(DType.I64, n);
            default -> throw new IllegalArgumentException("width " + width);
        };
    }

    private static void uploadWidth(SymTensor t, int width, long[] bits) {
        switch (width) {
            case 2 -> t.copyFrom(pack(bits, 2));
            case 4 -> {
                int[] v = new int[bits.length];
                for (int i = 0; i < v.length; i++) v[i] = (int) bits[i];
                t.copyFrom(v);
            }
            default -> t.copyFrom(bits.clone());
        }
    }

    private static long[] downloadWidth(SymTensor t, int width) {
        return switch (width) {
            case 2 -> unpack(t.toByteArray(), 2);
            case 4 -> {
                int[] v = t.toIntArray();
                long[] out = new long[v.length];
                for (int i = 0; i < v.length; i++) out[i] = v[i] & 0xffffffffL;
                yield out;
            }
            default -> t.toLongArray();
        };
    }

    /** Little-endian, {@code width} bytes per value: the device's layout. */
    static byte[] pack(long[] bits, int width) {
        byte[] out = new byte[bits.length * width];
        for (int i = 0; i < bits.length; i++) {
            for (int b = 0; b < width; b++) out[i * width + b] = (byte) (bits[i] >>> (8 * b));
        }
        return out;
    }

    static long[] unpack(byte[] bytes, int width) {
        long[] out = new long[bytes.length / width];
        for (int i = 0; i < out.length; i++) {
            long v = 0;
            for (int b = 0; b < width; b++) v |= (bytes[i * width + b] & 0xffL) << (8 * b);
            out[i] = v;
        }
        return out;
    }
}
