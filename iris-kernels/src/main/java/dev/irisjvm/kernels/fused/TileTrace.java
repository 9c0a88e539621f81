package dev.irisjvm.kernels.fused;

import dev.irisjvm.runtime.abi.global.KernelAbi;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.TreeMap;

/**
 * The per-tile timeline one traced call recorded on one rank ({@link FusedConfig#withTracing}),
 * read back by {@link FusedGemm#readTrace}, and its export as a Chrome / Perfetto trace (JSON,
 * open it in ui.perfetto.dev or chrome://tracing).
 *
 * <p>The records ({@code fused/trace.cuh}): four u64 each, {@code {start_ns, end_ns, what | sm << 32,
 * kind | who << 8}} from the GPU's {@code %globaltimer}, in slots fixed by what they describe, so
 * unwritten slots stay zero:
 * <ul>
 * <li>kind 0, {@link Kind#COMPUTE}: a consumer warpgroup's mainloop for one tile, slot (tile x 2 +
 *     consumer) x 2; {@code what} is the tile's position in the scheduler's sequence, {@code who}
 *     the consumer (0: rows 0-63 of the tile, 1: rows 64-127);</li>
 * <li>kind 1, {@link Kind#EPILOGUE}: the same warpgroup's epilogue for that tile, the next slot: in
 *     the EPILOGUE variants that is where tiles go to the peers;</li>
 * <li>kind 2, {@link Kind#COPY}: the spare producer warps copying a finished tile half to the peers
 *     (slot tiles x 4 + tile x 2 + consumer, {@code who} the consumer), or, in all-gather + GEMM,
 *     pushing one piece of this rank's rows of A into the peers, 128 rows by {@link
 *     FusedWorkspace#PIECE_COLS} columns (slot units x 4 + piece, {@code who} this
 *     rank; units are tiles, or tiles x 2 with split-K).</li>
 * </ul>
 *
 * <p>Chrome trace: one process per rank ({@code pid} = rank), threads "sm NNN / consumer c" (mainloop
 * and epilogue) and "sm NNN / spare warps" (copies), "X" events with {@code ts} and {@code dur} in
 * microseconds from the rank's earliest record: the GPUs' timers are not synchronized with each
 * other, so ranks are aligned at their first record.
 *
 * <pre>{@code
 * try (GemmAllReduce op = GemmAllReduce.create(iris, m, n, kLocal, FusedConfig.defaults().withTracing(true))) {
 *     op.run(a, b, GemmLayout.NK, null, c, stream);
 *     TileTrace t = op.readTrace(stream);
 *     t.writeChromeJson(Path.of("all_reduce.rank" + iris.rank() + ".json"));
 *     // or all ranks in one file: gather t.toBytes() with iris.allGather, then
 *     // TileTrace.writeChromeJson(list, path) on one rank
 * }
 * }</pre>
 */
public final class TileTrace {
    private static final int MAGIC = 0x54524331;  // "TRC1"

    /** What a record describes, in the order of the records' kind codes (iris/abi/fused.h). */
    public enum Kind {
        COMPUTE(KernelAbi.IRIS_FUSED_TRACE_COMPUTE, "mainloop"),
        EPILOGUE(KernelAbi.IRIS_FUSED_TRACE_COMMUNICATE, "epilogue"),
        COPY(KernelAbi.IRIS_FUSED_TRACE_COPY, "spare-warp copy");

        private final int code;
        private final String text;

        Kind(int code, String text) {
            this.code = code;
            this.text = text;
        }

        /** The record's kind code: 0, 1 or 2. */
        public int code() {
            return code;
        }

        public String text() {
            return text;
        }
    }

    /**
     * One written record.
     *
     * @param what the tile's position in the scheduler's sequence, or the all-gather piece
     * @param who  the consumer warpgroup (0 or 1), or for an all-gather piece the rank whose rows it holds
     * @param sm   the SM that ran it
     */
    public record Event(Kind kind, int what, int who, int sm, long startNs, long endNs) {
        public long durationNs() {
            return Math.max(0, endNs - startNs);
        }
    }

    /**
     * Busy times of one rank's trace, in microseconds: the union over SMs of the compute intervals,
     * of the communication intervals (epilogues that store to peers in the EPILOGUE variants, and
     * spare-warp copies), and of their intersection (communication while some SM computed).
     */
    public record Summary(int computeEvents, int epilogueEvents, int copyEvents, double spanUs, double computeUs,
                          double communicationUs, double overlappedUs) {
        /** Fraction of the communication time during which some SM was computing; NaN without communication. */
        public double hiddenFraction() {
            return communicationUs > 0 ? overlappedUs / communicationUs : Double.NaN;
        }
    }

    private final FusedOp op;
    private final FusedVariant variant;
    private final int rank;
    private final int world;
    private final int m;
    private final int n;
    private final int k;
    private final int tiles;
    private final long pieces;
    private final int multiprocessors;
    private final long[] records;

    /**
     * @param tiles   the call's tiles, or units with split-K ({@link FusedGemm#units()})
     * @param records 4 x (tiles x 6 + pieces) u64, as the traced kernel wrote them
     */
    public TileTrace(FusedOp op, FusedVariant variant, int rank, int world, int m, int n, int k, int tiles, long pieces,
                     int multiprocessors, long[] records) {
        if (op == null || variant == null || records == null) {
            throw new IllegalArgumentException("TileTrace: op, variant and records must not be null");
        }
        if (records.length % 4 != 0) {
            throw new IllegalArgumentException("TileTrace: " + records.length + " u64 is not a whole number of 4-word records");
        }
        this.op = op;
        this.variant = variant;
        this.rank = rank;
        this.world = world;
        this.m = m;
        this.n = n;
        this.k = k;
        this.tiles = tiles;
        this.pieces = pieces;
        this.multiprocessors = multiprocessors;
        this.records = records.clone();
    }

    public FusedOp op() {
        return op;
    }

    public FusedVariant variant() {
        return variant;
    }

    public int rank() {
        return rank;
    }

    public int world() {
        return world;
    }

    /** Tiles of the call, or its units with split-K (tiles x 2): the records' tile slots. */
    public int tiles() {
        return tiles;
    }

    /** Room for all-gather pieces in the records (those a rank pushes; 0 for the other operations). */
    public long pieces() {
        return pieces;
    }

    /** The raw records (a copy). */
    public long[] records() {
        return records.clone();
    }

    /** Every written record, in order of start time. */
    public List<Event> events() {
        List<Event> out = new ArrayList<>();
        for (int i = 0; i < records.length; i += 4) {
            long start = records[i];
            long end = records[i + 1];
            if (start == 0 && end == 0) {
                continue;  // unwritten slot
            }
            int what = (int) records[i + 2];
            int sm = (int) (records[i + 2] >>> 32);
            int kind = (int) (records[i + 3] & 0xff);
            int who = (int) (records[i + 3] >>> 8);
            if (kind < 0 || kind >= Kind.values().length) {
                throw new IllegalStateException("rank " + rank + ": trace record " + i / 4 + " has kind " + kind
                        + "; expected 0 (compute), 1 (epilogue) or 2 (copy)");
            }
            out.add(new Event(Kind.values()[kind], what, who, sm, start, end));
        }
        out.sort(Comparator.comparingLong(Event::startNs).thenComparingInt(Event::sm));
        return out;
    }

    /** The earliest start of any record, 0 without records. */
    public long startNs() {
        return events().stream().mapToLong(Event::startNs).min().orElse(0);
    }

    /**
     * What the kernel must have written in any traced call (null if it did, else what is missing or
     * wrong): a compute and an epilogue record for both consumer halves of every tile, {@code start <=
     * end}, SM ids below the GPU's count; with {@code expectCopies}, at least one copy record.
     */
    public String verify(boolean expectCopies) {
        int missing = 0;
        String first = null;
        for (int t = 0; t < tiles; t++) {
            for (int c = 0; c < 2; c++) {
                for (int kind = 0; kind < 2; kind++) {
                    int slot = (t * 2 + c) * 2 + kind;
                    long[] r = {records[slot * 4], records[slot * 4 + 1], records[slot * 4 + 2], records[slot * 4 + 3]};
                    String problem = null;
                    if (r[0] == 0 && r[1] == 0) {
                        problem = "no record";
                    } else if (r[1] < r[0]) {
                        problem = "end " + r[1] + " before start " + r[0];
                    } else if ((int) r[2] != t || (r[3] & 0xff) != kind || (r[3] >>> 8) != c) {
                        problem = "labelled tile " + (int) r[2] + ", kind " + (r[3] & 0xff) + ", consumer " + (r[3] >>> 8);
                    } else if (multiprocessors > 0 && (r[2] >>> 32) >= multiprocessors) {
                        problem = "SM " + (r[2] >>> 32) + " of " + multiprocessors;
                    }
                    if (problem != null) {
                        missing++;
                        if (first == null) {
                            first = "tile " + t + " consumer " + c + " " + Kind.values()[kind].text() + ": " + problem;
                        }
                    }
                }
            }
        }
        long copies = events().stream().filter(e -> e.kind() == Kind.COPY).count();
        if (missing > 0) {
            return "rank " + rank + ": " + missing + " of " + tiles * 4 + " tile records missing or wrong; first: " + first;
        }
        if (expectCopies && copies == 0) {
            return "rank " + rank + ": no spare-warp copy records";
        }
        return null;
    }

    /** Busy times of this rank; see {@link Summary}. */
    public Summary summary() {
        List<Event> ev = events();
        List<long[]> compute = new ArrayList<>();
        List<long[]> comm = new ArrayList<>();
        int[] counts = new int[3];
        boolean epilogueCommunicates = variant == FusedVariant.EPILOGUE && op != FusedOp.ALL_GATHER;
        long lo = Long.MAX_VALUE;
        long hi = Long.MIN_VALUE;
        for (Event e : ev) {
            counts[e.kind().ordinal()]++;
            lo = Math.min(lo, e.startNs());
            hi = Math.max(hi, e.endNs());
            long[] iv = {e.startNs(), e.endNs()};
            switch (e.kind()) {
                case COMPUTE -> compute.add(iv);
                case EPILOGUE -> {
                    if (epilogueCommunicates) comm.add(iv);
                }
                case COPY -> comm.add(iv);
            }
        }
        List<long[]> c = union(compute);
        List<long[]> x = union(comm);
        return new Summary(counts[0], counts[1], counts[2], ev.isEmpty() ? 0 : (hi - lo) / 1e3, length(c) / 1e3,
                length(x) / 1e3, intersection(c, x) / 1e3);
    }

    static List<long[]> union(List<long[]> intervals) {
        List<long[]> sorted = new ArrayList<>(intervals);
        sorted.sort(Comparator.comparingLong(a -> a[0]));
        List<long[]> out = new ArrayList<>();
        for (long[] iv : sorted) {
            if (!out.isEmpty() && iv[0] <= out.get(out.size() - 1)[1]) {
                long[] last = out.get(out.size() - 1);
                last[1] = Math.max(last[1], iv[1]);
            } else {
                out.add(new long[] {iv[0], iv[1]});
            }
        }
        return out;
    }

    static long length(List<long[]> disjoint) {
        return disjoint.stream().mapToLong(iv -> Math.max(0, iv[1] - iv[0])).sum();
    }

    /** Total length of the intersection of two sorted lists of disjoint intervals. */
    static long intersection(List<long[]> a, List<long[]> b) {
        long total = 0;
        int i = 0;
        int j = 0;
        while (i < a.size() && j < b.size()) {
            long lo = Math.max(a.get(i)[0], b.get(j)[0]);
            long hi = Math.min(a.get(i)[1], b.get(j)[1]);
            if (hi > lo) total += hi - lo;
            if (a.get(i)[1] < b.get(j)[1]) i++;
            else j++;
        }
        return total;
    }

    // ---- Chrome / Perfetto JSON --------------------------------------------------------------------

    /** This rank's timeline as a Chrome trace. */
    public String toChromeJson() {
        return toChromeJson(List.of(this));
    }

    /** Several ranks' timelines of the same call in one Chrome trace (one process per rank). */
    public static String toChromeJson(List<TileTrace> ranks) {
        if (ranks == null || ranks.isEmpty()) {
            throw new IllegalArgumentException("TileTrace.toChromeJson: no traces");
        }
        TileTrace first = ranks.get(0);
        StringBuilder sb = new StringBuilder(1 << 16);
        sb.append("{\"displayTimeUnit\":\"ns\",\"otherData\":{");
        field(sb, "operation", first.op.title()).append(',');
        field(sb, "op", first.op.id()).append(',');
        field(sb, "variant", first.variant.kernelName()).append(',');
        sb.append("\"M\":").append(first.m).append(",\"N\":").append(first.n).append(",\"K\":").append(first.k)
                .append(",\"world\":").append(first.world).append(",\"tiles\":").append(first.tiles).append(',');
        field(sb, "time zero", "each rank's earliest record (%globaltimer; GPU clocks are not synchronized)");
        sb.append("},\"traceEvents\":[");
        boolean comma = false;
        for (TileTrace t : ranks) {
            comma = t.appendEvents(sb, comma);
        }
        sb.append("]}\n");
        return sb.toString();
    }

    /** Writes this rank's Chrome trace. */
    public void writeChromeJson(Path file) throws IOException {
        writeChromeJson(List.of(this), file);
    }

    /** Writes several ranks' Chrome trace into one file. */
    public static void writeChromeJson(List<TileTrace> ranks, Path file) throws IOException {
        Path parent = file.toAbsolutePath().getParent();
        if (parent != null) {
            Files.createDirectories(parent);
        }
        Files.writeString(file, toChromeJson(ranks), StandardCharsets.UTF_8);
    }

    private boolean appendEvents(StringBuilder sb, boolean comma) {
        List<Event> ev = events();
        long zero = ev.isEmpty() ? 0 : ev.get(0).startNs();
        comma = meta(sb, comma, "process_name", -1, "rank " + rank);
        comma = metaSort(sb, comma, "process_sort_index", -1, rank);
        TreeMap<Integer, String> threads = new TreeMap<>();
        for (Event e : ev) {
            threads.putIfAbsent(tid(e), threadName(e));
        }
        for (var th : threads.entrySet()) {
            comma = meta(sb, comma, "thread_name", th.getKey(), th.getValue());
            comma = metaSort(sb, comma, "thread_sort_index", th.getKey(), th.getKey());
        }
        for (Event e : ev) {
            if (comma) sb.append(',');
            comma = true;
            sb.append("\n{\"ph\":\"X\",");
            field(sb, "name", eventName(e)).append(',');
            field(sb, "cat", e.kind().name().toLowerCase(Locale.ROOT)).append(',');
            sb.append("\"pid\":").append(rank).append(",\"tid\":").append(tid(e)).append(",\"ts\":")
                    .append(micros(e.startNs() - zero)).append(",\"dur\":").append(micros(e.durationNs())).append(",\"args\":{");
            if (e.kind() == Kind.COPY && op == FusedOp.ALL_GATHER) {
                sb.append("\"piece\":").append(e.what()).append(",\"from_rank\":").append(e.who());
            } else {
                sb.append("\"tile\":").append(e.what()).append(",\"consumer\":").append(e.who());
            }
            sb.append(",\"sm\":").append(e.sm()).append("}}");
        }
        return comma;
    }

    private String eventName(Event e) {
        return switch (e.kind()) {
            case COMPUTE -> "mainloop";
            case EPILOGUE -> variant == FusedVariant.EPILOGUE && op != FusedOp.ALL_GATHER ? "epilogue (stores to peers)"
                    : "epilogue (local store)";
            case COPY -> op == FusedOp.ALL_GATHER ? "push rows of A of rank " + e.who() + " to peers" : "copy tile to peers";
        };
    }

    /** One track per SM and role: consumers 0 and 1, and the spare warps. */
    static int tid(Event e) {
        return e.sm() * 4 + (e.kind() == Kind.COPY ? 2 : e.who());
    }

    private static String threadName(Event e) {
        return String.format(Locale.ROOT, "sm %03d / %s", e.sm(), e.kind() == Kind.COPY ? "spare warps" : "consumer " + e.who());
    }

    private boolean meta(StringBuilder sb, boolean comma, String name, int tid, String value) {
        if (comma) sb.append(',');
        sb.append("\n{\"ph\":\"M\",\"pid\":").append(rank).append(tid >= 0 ? ",\"tid\":" + tid : "").append(',');
        field(sb, "name", name).append(",\"args\":{");
        field(sb, "name", value).append("}}");
        return true;
    }

    private boolean metaSort(StringBuilder sb, boolean comma, String name, int tid, int index) {
        if (comma) sb.append(',');
        sb.append("\n{\"ph\":\"M\",\"pid\":").append(rank).append(tid >= 0 ? ",\"tid\":" + tid : "").append(',');
        field(sb, "name", name).append(",\"args\":{\"sort_index\":").append(index).append("}}");
        return true;
    }

    private static String micros(long ns) {
        return String.format(Locale.ROOT, "%.3f", ns / 1e3);
    }

    private static StringBuilder field(StringBuilder sb, String name, String value) {
        return sb.append('"').append(escape(name)).append("\":\"").append(escape(value)).append('"');
    }

    static String escape(String s) {
        StringBuilder b = new StringBuilder(s.length() + 8);
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> b.append("\\\"");
                case '\\' -> b.append("\\\\");
                case '\n' -> b.append("\\n");
                case '\r' -> b.append("\\r");
                case '\t' -> b.append("\\t");
                default -> {
                    if (c < 0x20) b.append(String.format(Locale.ROOT, "\\u%04x", (int) c));
                    else b.append(c);
                }
            }
        }
        return b.toString();
    }

    // ---- moving traces between ranks ---------------------------------------------------------------

    /** A compact binary form, e.g. for {@code iris.allGather} so that one rank writes every rank's trace. */
    public byte[] toBytes() {
        ByteBuffer b = ByteBuffer.allocate(4 * 10 + 8 * 2 + 8 * records.length).order(ByteOrder.LITTLE_ENDIAN);
        b.putInt(MAGIC).putInt(op.ordinal()).putInt(variant.ordinal()).putInt(rank).putInt(world).putInt(m).putInt(n).putInt(k)
                .putInt(tiles).putInt(multiprocessors).putLong(pieces).putLong(records.length);
        for (long r : records) {
            b.putLong(r);
        }
        return b.array();
    }

    /** The inverse of {@link #toBytes()}. */
    public static TileTrace fromBytes(byte[] bytes) {
        ByteBuffer b = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
        if (bytes.length < 56 || b.getInt() != MAGIC) {
            throw new IllegalArgumentException("TileTrace.fromBytes: not a trace (" + bytes.length + " bytes)");
        }
        FusedOp op = FusedOp.values()[b.getInt()];
        FusedVariant variant = FusedVariant.values()[b.getInt()];
        int rank = b.getInt();
        int world = b.getInt();
        int m = b.getInt();
        int n = b.getInt();
        int k = b.getInt();
        int tiles = b.getInt();
        int sms = b.getInt();
        long pieces = b.getLong();
        long count = b.getLong();
        if (count < 0 || count * 8 != b.remaining()) {
            throw new IllegalArgumentException("TileTrace.fromBytes: " + count + " records announced, " + b.remaining() + " bytes left");
        }
        long[] records = new long[(int) count];
        for (int i = 0; i < records.length; i++) {
            records[i] = b.getLong();
        }
        return new TileTrace(op, variant, rank, world, m, n, k, tiles, pieces, sms, records);
    }

    @Override
    public String toString() {
        Summary s = summary();
        return String.format(Locale.ROOT, "TileTrace(rank %d, %s %s, %d tiles: %d mainloops, %d epilogues, %d copies over %.1f µs)",
                rank, op.id(), variant.kernelName(), tiles, s.computeEvents(), s.epilogueEvents(), s.copyEvents(), s.spanUs());
    }
}
