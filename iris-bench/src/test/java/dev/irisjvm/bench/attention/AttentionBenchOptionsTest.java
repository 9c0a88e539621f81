package dev.irisjvm.bench.attention;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.irisjvm.core.DType;
import dev.irisjvm.kernels.attention.FlashDecode;
import dev.irisjvm.kernels.attention.FlashDecodeProblem;
import java.util.List;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** The attention benchmark's options: defaults are issue 6's shapes, bad values are named, heap sizing. */
class AttentionBenchOptionsTest {
    private static AttentionBenchOptions parse(String... args) {
        AttentionBenchOptions o = new AttentionBenchOptions();
        new CommandLine(o).parseArgs(args);
        return o;
    }

    @Test
    void defaultsAreTheIssuesShapes() {
        AttentionBenchOptions o = parse();
        o.validate(2);
        assertEquals(List.of(4096, 16384), o.localSeqs());
        assertEquals(List.of(32768, 131072), o.ringSeqs());
        assertEquals(List.of(32768, 65536, 131072, 262144, 524288), o.decodeLens());
        assertEquals(List.of(1, 8), o.decodeBatches());
        assertEquals(List.of("local", "ring", "decode"), List.copyOf(o.parts()));
    }

    @Test
    void rejectsWhatTheKernelsCannotRun() {
        AttentionBenchOptions bad = parse("--ring-seqs", "1000");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> bad.validate(2));
        assertTrue(e.getMessage().contains("--ring-seqs: 1000 is not a multiple of 256 x 2"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> parse("--parts", "ring,nothing").validate(2));
        assertThrows(IllegalArgumentException.class, () -> parse("--head-dim", "96").validate(2));
        assertThrows(IllegalArgumentException.class, () -> parse("--decode-lens", "1001").validate(2));
        assertThrows(IllegalArgumentException.class, () -> parse("--local-seqs", "100").validate(2));
        parse("--decode-lens", "1001").validate(1);
        assertThrows(IllegalArgumentException.class, () -> parse("--decode-chunk-len", "100").validate(2));
        assertThrows(IllegalArgumentException.class, () -> parse("--decode-chunk-len", "2048").validate(2));
    }

    @Test
    void decodeChunkLenOverridesTheLibraryDefault() {
        assertEquals(FlashDecodeProblem.defaultChunkLen(1, 8, 65536, 132), parse().decodeChunkLen(1, 65536, 132));
        assertEquals(832, parse("--decode-chunk-len", "832").decodeChunkLen(1, 65536, 132));
        assertTrue(recorded("--decode-chunk-len", "832").contains("--decode-chunk-len 832"));
    }

    @Test
    void heapHoldsTheLargestPart() {
        AttentionBenchOptions o = parse();
        long heap = AttentionBench.heapBytes(o, 2, 132);
        long decodeKv = 2L * 8 * 8 * 262144 * 128 * 2;   // B 8, 256K tokens per rank: K and V
        assertTrue(heap > decodeKv, "heap " + heap);
        assertTrue(heap < decodeKv * 3 / 2, "heap " + heap);
        assertEquals(0, heap % (1 << 20));
        FlashDecodeProblem largest = FlashDecodeProblem.of(DType.BF16, 8, 32, 8, 128, 262144, o.decodeChunkLen(8, 262144, 132));
        assertTrue(heap > decodeKv + FlashDecode.workspaceBytes(largest, 2), "heap " + heap + " holds the decode workspace too");
    }

    @Test
    void theRecordedCommandRepeatsTheRun() {
        String c = recorded("--parts", "decode", "--seed", "7");
        assertTrue(c.startsWith("bin/iris-run -n 2 -- java -cp 'iris-bench/target/lib/*' dev.irisjvm.bench.attention.AttentionBench"), c);
        assertTrue(c.contains("--parts decode"), c);
        assertTrue(c.contains("--seed 7"), c);
    }

    /** The command AttentionBench records for a run of two ranks with these options. */
    private static String recorded(String... args) {
        CommandLine cl = new CommandLine(new AttentionBench());
        cl.parseArgs(args);
        return dev.irisjvm.bench.RunRecord.command(2, AttentionBench.class, cl.getCommandSpec());
    }
}
