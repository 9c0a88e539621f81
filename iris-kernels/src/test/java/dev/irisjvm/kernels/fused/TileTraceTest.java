package dev.irisjvm.kernels.fused;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.irisjvm.kernels.fused.TileTrace.Event;
import dev.irisjvm.kernels.fused.TileTrace.Kind;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Reading trace records as fused/trace.cuh lays them out, and the Chrome trace written from them. */
class TileTraceTest {
    /** Writes a record into the slot the kernel would use. */
    private static void put(long[] r, long slot, long start, long end, int what, int sm, int kind, int who) {
        int i = (int) slot * 4;
        r[i] = start;
        r[i + 1] = end;
        r[i + 2] = (what & 0xffffffffL) | (long) sm << 32;
        r[i + 3] = kind | (long) who << 8;
    }

    /** Two tiles, both consumers, on SMs 3 and 5; spare-warp copies of both halves of tile 0. */
    static TileTrace twoTiles() {
        int tiles = 2;
        long[] r = new long[tiles * 6 * 4];
        long t0 = 1_000_000_000L;
        for (int t = 0; t < tiles; t++) {
            for (int c = 0; c < 2; c++) {
                int sm = t == 0 ? 3 : 5;
                put(r, (t * 2 + c) * 2, t0 + 100, t0 + 5_100, t, sm, 0, c);
                put(r, (t * 2 + c) * 2 + 1, t0 + 5_100, t0 + 6_100, t, sm, 1, c);
            }
        }
        put(r, tiles * 4 + 0, t0 + 5_200, t0 + 7_200, 0, 3, 2, 0);
        put(r, tiles * 4 + 1, t0 + 7_200, t0 + 9_200, 0, 3, 2, 1);
        return new TileTrace(FusedOp.ALL_SCATTER, FusedVariant.SPARE_WARPS, 1, 2, 256, 256, 64, tiles, 0, 132, r);
    }

    @Test
    void readsRecords() {
        TileTrace t = twoTiles();
        List<Event> ev = t.events();
        assertEquals(10, ev.size());
        Event copy = ev.stream().filter(e -> e.kind() == Kind.COPY).findFirst().orElseThrow();
        assertEquals(3, copy.sm());
        assertEquals(0, copy.what());
        assertEquals(2000, copy.durationNs());
        assertEquals(1_000_000_100L, t.startNs());
        assertNull(t.verify(true));
    }

    @Test
    void verifyFindsMissingAndWrongRecords() {
        long[] r = twoTiles().records();
        r[(1 * 2 + 1) * 2 * 4] = 0;  // tile 1 consumer 1 compute: unwritten
        r[(1 * 2 + 1) * 2 * 4 + 1] = 0;
        TileTrace t = new TileTrace(FusedOp.ALL_SCATTER, FusedVariant.SPARE_WARPS, 0, 2, 256, 256, 64, 2, 0, 132, r);
        assertEquals("rank 0: 1 of 8 tile records missing or wrong; first: tile 1 consumer 1 mainloop: no record", t.verify(true));
        long[] noCopies = twoTiles().records();
        for (int i = 2 * 4 * 4; i < noCopies.length; i++) noCopies[i] = 0;
        TileTrace quiet = new TileTrace(FusedOp.ALL_SCATTER, FusedVariant.EPILOGUE, 0, 2, 256, 256, 64, 2, 0, 132, noCopies);
        assertNull(quiet.verify(false));
        assertEquals("rank 0: no spare-warp copy records", quiet.verify(true));
    }

    @Test
    void summaryUnionsAndOverlap() {
        TileTrace.Summary s = twoTiles().summary();
        assertEquals(4, s.computeEvents());
        assertEquals(4, s.epilogueEvents());
        assertEquals(2, s.copyEvents());
        assertEquals(9.1, s.spanUs(), 1e-9);          // 100 .. 9200 ns
        assertEquals(5.0, s.computeUs(), 1e-9);       // 100 .. 5100
        assertEquals(4.0, s.communicationUs(), 1e-9); // copies 5200 .. 9200 (spare-warp variant: epilogues are local)
        assertEquals(0.0, s.overlappedUs(), 1e-9);
        assertEquals(0.0, s.hiddenFraction(), 1e-9);
        assertEquals(3, TileTrace.intersection(List.of(new long[] {0, 5}, new long[] {8, 10}), List.of(new long[] {3, 9})));
    }

    @Test
    void chromeJson() {
        String json = twoTiles().toChromeJson();
        assertTrue(json.startsWith("{\"displayTimeUnit\":\"ns\",\"otherData\":{\"operation\":\"GEMM + all-scatter\""), json);
        assertTrue(json.contains("{\"ph\":\"M\",\"pid\":1,\"name\":\"process_name\",\"args\":{\"name\":\"rank 1\"}}"), json);
        assertTrue(json.contains("\"tid\":12,\"name\":\"thread_name\",\"args\":{\"name\":\"sm 003 / consumer 0\"}"), json);
        assertTrue(json.contains("\"tid\":14,\"name\":\"thread_name\",\"args\":{\"name\":\"sm 003 / spare warps\"}"), json);
        assertTrue(json.contains("{\"ph\":\"X\",\"name\":\"mainloop\",\"cat\":\"compute\",\"pid\":1,\"tid\":12,\"ts\":0.000,"
                + "\"dur\":5.000,\"args\":{\"tile\":0,\"consumer\":0,\"sm\":3}}"), json);
        assertTrue(json.contains("\"name\":\"copy tile to peers\",\"cat\":\"copy\",\"pid\":1,\"tid\":14,\"ts\":5.100,\"dur\":2.000"), json);
        assertTrue(json.trim().endsWith("]}"));
        // Balanced braces and brackets: a cheap well-formedness check (no JSON library in this module).
        long open = json.chars().filter(c -> c == '{').count();
        long close = json.chars().filter(c -> c == '}').count();
        assertEquals(open, close);
        assertEquals(json.chars().filter(c -> c == '[').count(), json.chars().filter(c -> c == ']').count());
    }

    @Test
    void bytesRoundTrip() {
        TileTrace t = twoTiles();
        TileTrace back = TileTrace.fromBytes(t.toBytes());
        assertArrayEquals(t.records(), back.records());
        assertEquals(t.rank(), back.rank());
        assertEquals(t.op(), back.op());
        assertEquals(t.variant(), back.variant());
        assertEquals(t.toChromeJson(), back.toChromeJson());
        String both = TileTrace.toChromeJson(List.of(t, new TileTrace(FusedOp.ALL_SCATTER, FusedVariant.SPARE_WARPS, 0, 2, 256, 256,
                64, 2, 0, 132, t.records())));
        assertTrue(both.contains("\"args\":{\"name\":\"rank 0\"}") && both.contains("\"args\":{\"name\":\"rank 1\"}"));
    }

    @Test
    void escapes() {
        assertEquals("a\\\"b\\\\c\\n", TileTrace.escape("a\"b\\c\n"));
    }
}
