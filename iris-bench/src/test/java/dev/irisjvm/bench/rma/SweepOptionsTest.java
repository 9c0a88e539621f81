package dev.irisjvm.bench.rma;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.irisjvm.bench.OptionsUnderTest;
import java.util.List;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

class SweepOptionsTest {
    private static final OptionsUnderTest<SweepOptions> OPTIONS = new OptionsUnderTest<>(SweepOptions::new, SweepOptions::validate);

    @Test
    void defaults() {
        SweepOptions o = OPTIONS.valid();
        assertEquals(4096, o.minBytes);
        assertEquals(1L << 30, o.maxBytes);
        assertEquals(4, o.sweep.factor);
        assertEquals(20, o.repsFor(4096));
        assertEquals(5, o.repsFor(256L << 20));
        assertEquals(RmaOp.values().length, o.ops().size());
        assertTrue(o.gate());
        assertEquals(null, o.seed.given());
        assertEquals(10, o.sizes().size());
        assertEquals(8L, o.messageSizes().get(0));
        assertEquals(1L << 20, o.messageSizes().get(o.messageSizes().size() - 1));
    }

    @Test
    void sizesAndListsParse() {
        SweepOptions o = OPTIONS.valid("--min-bytes", "1k", "--max-bytes", "64m", "--factor", "8", "--ops", "load, ping_pong,load",
                "--reps", "7", "--large-reps", "9", "--no-gate", "--seed", "42");
        assertEquals(List.of(1024L, 8192L, 65536L, 524288L, 4194304L, 33554432L, 67108864L), o.sizes());
        assertEquals(List.of(RmaOp.LOAD, RmaOp.PING_PONG), o.ops());
        assertEquals(7, o.repsFor(1L << 30));   // never more than --reps
        assertFalse(o.gate());
        assertEquals(42L, o.seed.given());
    }

    @Test
    void checkOnlyRunsEveryPointOnceWithoutWarmUpOrGate() {
        SweepOptions o = OPTIONS.valid("--check-only", "--reps", "7", "--warmup", "2");
        assertTrue(o.checkOnly());
        assertEquals(1, o.repsFor(4096));
        assertEquals(1, o.repsFor(1L << 30));
        assertEquals(0, o.warmup());
        assertFalse(o.gate());
        assertTrue(OPTIONS.valid().gate());
        assertFalse(OPTIONS.valid().checkOnly());
        assertEquals(2, OPTIONS.valid("--warmup", "2").warmup());
    }

    @Test
    void autoHeapFitsTheAllPeerBuffers() {
        SweepOptions o = OPTIONS.parse("--max-bytes", "1g");
        assertEquals(3L * (1L << 30) + (64L << 20), o.heapBytes(2));
        assertEquals(9L * (1L << 30) + (64L << 20), o.heapBytes(8));
        assertEquals(2L << 30, OPTIONS.parse("--heap", "2g").heapBytes(2));
    }

    @Test
    void messageIterationsAreClamped() {
        SweepOptions o = OPTIONS.parse();
        assertEquals(1000, o.messageIterations(8));
        assertEquals(64, o.messageIterations(1 << 20));
        assertEquals(50, o.messageIterations(16L << 20));
        assertEquals(77, OPTIONS.parse("--mp-iterations", "77").messageIterations(8));
    }

    @Test
    void validationNamesTheOption() {
        OPTIONS.rejects("--max-bytes", "--min-bytes", "1m", "--max-bytes", "4k");
        OPTIONS.rejects("--factor", "--factor", "1");
        OPTIONS.rejects("--threads", "--threads", "100");
        OPTIONS.rejects("--mp-threads", "--mp-threads", "33");
        OPTIONS.rejects("unknown op 'lod'", "--ops", "load,lod");
        OPTIONS.rejects("--reps", "--reps", "0");
        OPTIONS.rejects("--tile-cols", "--tile-cols", "12");
        OPTIONS.rejects("--tile-cols", "--tile-ld", "1000");
        assertThrows(CommandLine.ParameterException.class, () -> OPTIONS.parse("--max-bytes", "lots"));
    }

}
