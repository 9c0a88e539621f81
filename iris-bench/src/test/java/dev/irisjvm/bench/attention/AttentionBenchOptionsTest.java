package dev.irisjvm.bench.attention;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.irisjvm.bench.OptionsUnderTest;
import dev.irisjvm.core.DType;
import dev.irisjvm.kernels.attention.FlashDecode;
import dev.irisjvm.kernels.attention.FlashDecodeProblem;
import java.util.List;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** The attention benchmark's options: defaults are issue 6's shapes, bad values are named, heap sizing. */
class AttentionBenchOptionsTest {
    private static final OptionsUnderTest<AttentionBenchOptions> OPTIONS = new OptionsUnderTest<>(AttentionBenchOptions::new, o -> o.validate(2));

    @Test
    void defaultsAreTheIssuesShapes() {
        AttentionBenchOptions o = OPTIONS.valid();
        assertEquals(List.of(4096, 16384), o.localSeqs());
        assertEquals(List.of(32768, 131072), o.ringSeqs());
        assertEquals(List.of(32768, 65536, 131072, 262144, 524288), o.decodeLens());
        assertEquals(List.of(1, 8), o.decodeBatches());
        assertEquals(List.of("local", "ring", "decode"), List.copyOf(o.parts()));
    }

    @Test
    void rejectsWhatTheKernelsCannotRun() {
        OPTIONS.rejects("--ring-seqs: 1000 is not a multiple of 256 x 2", "--ring-seqs", "1000");
        OPTIONS.rejects("--parts", "--parts", "ring,nothing");
        OPTIONS.rejects("--head-dim", "--head-dim", "96");
        OPTIONS.rejects("--decode-lens", "--decode-lens", "1001");
        OPTIONS.rejects("--local-seqs", "--local-seqs", "100");
        OPTIONS.parse("--decode-lens", "1001").validate(1);
        OPTIONS.rejects("--decode-chunk-len", "--decode-chunk-len", "100");
        OPTIONS.rejects("--decode-chunk-len", "--decode-chunk-len", "2048");
    }

    @Test
    void decodeChunkLenOverridesTheLibraryDefault() {
        assertEquals(FlashDecodeProblem.defaultChunkLen(1, 8, 65536, 132), OPTIONS.parse().decodeChunkLen(1, 65536, 132));
        assertEquals(832, OPTIONS.parse("--decode-chunk-len", "832").decodeChunkLen(1, 65536, 132));
        assertTrue(recorded("--decode-chunk-len", "832").contains("--decode-chunk-len 832"));
    }

    @Test
    void heapHoldsTheLargestPart() {
        AttentionBenchOptions o = OPTIONS.parse();
        long heap = AttentionBench.heapBytes(o, 2, 132);
        long decodeKv = 2L * 8 * 8 * 262144 * 128 * 2;   // B 8, 256K tokens per rank: K and V
        assertTrue(heap > decodeKv, "heap " + heap);
        assertTrue(heap < decodeKv * 3 / 2, "heap " + heap);
        assertEquals(0, heap % (1 << 20));
        FlashDecodeProblem largest = FlashDecodeProblem.of(DType.BF16, 8, 32, 8, 128, 262144, o.decodeChunkLen(8, 262144, 132));
        assertTrue(heap > decodeKv + FlashDecode.workspaceBytes(largest, 2), "heap " + heap + " holds the decode workspace too");
    }

    @Test
    void thePortableMainloopIsTimedOnlyWhenAskedFor() {
        assertFalse(OPTIONS.valid().portable());
        assertTrue(OPTIONS.valid("--portable").portable());
        assertTrue(recorded("--parts", "local", "--portable").contains("--portable"));
    }

    /** --portable writes the local part's output a second time: the heap holds one more O (B 1, 32 heads, S 16K, D 128). */
    @Test
    void heapHoldsThePortableOutputToo() {
        long o = 32L * 16384 * 128 * 2;
        long plain = AttentionBench.heapBytes(OPTIONS.parse("--parts", "local"), 1, 132);
        long portable = AttentionBench.heapBytes(OPTIONS.parse("--parts", "local", "--portable"), 1, 132);
        assertTrue(portable - plain >= o, "heap " + plain + " without --portable, " + portable + " with it");
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
