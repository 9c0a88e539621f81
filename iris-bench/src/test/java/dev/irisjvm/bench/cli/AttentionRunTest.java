package dev.irisjvm.bench.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import org.junit.jupiter.api.Test;

/** {@code iris-bench attention}: SDPA is measured on the shapes the sweep will run. */
class AttentionRunTest {
    private static AttentionRun parse(String... args) {
        return ParsedRun.parse(AttentionRun.class, "attention", args);
    }

    @Test
    void sdpaFollowsTheSweepsShape() {
        assertEquals(List.of("--seqs", "4096,16384", "--head-dim", "128", "--q-heads", "32", "--kv-heads", "8"), parse().sdpaShape(),
                "the sweep's defaults");
        assertEquals(List.of("--seqs", "4096,32768", "--head-dim", "64", "--q-heads", "16", "--kv-heads", "2"),
                parse("--", "--local-seqs", "4096,32768", "--head-dim=64", "--q-heads", "16", "--kv-heads=2").sdpaShape());
        assertEquals(List.of("--seqs", "4096", "--head-dim", "128", "--q-heads", "32", "--kv-heads", "8"), parse("--quick").sdpaShape(),
                "--quick's sequence");
        assertEquals("8192", parse("--quick", "--", "--local-seqs", "8192").sdpaShape().get(1), "given after the options, before --quick's");
    }
}
