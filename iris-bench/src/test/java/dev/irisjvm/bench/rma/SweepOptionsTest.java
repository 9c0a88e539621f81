package dev.irisjvm.bench.rma;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

class SweepOptionsTest {
    private static SweepOptions parse(String... args) {
        SweepOptions o = new SweepOptions();
        new CommandLine(o).parseArgs(args);
        return o;
    }

    @Test
    void defaults() {
        SweepOptions o = parse();
        o.validate();
        assertEquals(4096, o.minBytes);
        assertEquals(1L << 30, o.maxBytes);
        assertEquals(4, o.factor);
        assertEquals(20, o.repsFor(4096));
        assertEquals(5, o.repsFor(256L << 20));
        assertEquals(RmaOp.values().length, o.ops().size());
        assertEquals(Path.of("rma-sweep.json"), o.out());
        assertTrue(o.gate());
        assertEquals(null, o.seed());
        assertEquals(10, o.sizes().size());
        assertEquals(8L, o.messageSizes().get(0));
        assertEquals(1L << 20, o.messageSizes().get(o.messageSizes().size() - 1));
    }

    @Test
    void sizesAndListsParse() {
        SweepOptions o = parse("--min-bytes", "1k", "--max-bytes", "64m", "--factor", "8", "--ops", "load, ping_pong,load",
                "--reps", "7", "--large-reps", "9", "--no-gate", "--seed", "42");
        o.validate();
        assertEquals(List.of(1024L, 8192L, 65536L, 524288L, 4194304L, 33554432L, 67108864L), o.sizes());
        assertEquals(List.of(RmaOp.LOAD, RmaOp.PING_PONG), o.ops());
        assertEquals(7, o.repsFor(1L << 30));   // never more than --reps
        assertFalse(o.gate());
        assertEquals(42L, o.seed());
    }

    @Test
    void autoHeapFitsTheAllPeerBuffers() {
        SweepOptions o = parse("--max-bytes", "1g");
        assertEquals(3L * (1L << 30) + (64L << 20), o.heapBytes(2));
        assertEquals(9L * (1L << 30) + (64L << 20), o.heapBytes(8));
        assertEquals(2L << 30, parse("--heap", "2g").heapBytes(2));
    }

    @Test
    void messageIterationsAreClamped() {
        SweepOptions o = parse();
        assertEquals(1000, o.messageIterations(8));
        assertEquals(64, o.messageIterations(1 << 20));
        assertEquals(50, o.messageIterations(16L << 20));
        assertEquals(77, parse("--mp-iterations", "77").messageIterations(8));
    }

    @Test
    void validationNamesTheOption() {
        assertMessage("--max-bytes", "--min-bytes", "1m", "--max-bytes", "4k");
        assertMessage("--factor", "--factor", "1");
        assertMessage("--threads", "--threads", "100");
        assertMessage("--mp-threads", "--mp-threads", "33");
        assertMessage("unknown op 'lod'", "--ops", "load,lod");
        assertMessage("--reps", "--reps", "0");
        assertMessage("--tile-cols", "--tile-cols", "12");
        assertMessage("--tile-cols", "--tile-ld", "1000");
        assertThrows(CommandLine.ParameterException.class, () -> parse("--max-bytes", "lots"));
    }

    private static void assertMessage(String fragment, String... args) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> parse(args).validate());
        assertTrue(e.getMessage().contains(fragment), e.getMessage());
    }
}
