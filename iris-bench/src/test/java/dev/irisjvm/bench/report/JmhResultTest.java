package dev.irisjvm.bench.report;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class JmhResultTest {
    @TempDir
    Path dir;

    @Test
    void singleShotScoresAreDividedByTheBatch() {
        JmhResult r = new JmhResult(0, "a.B.c", "ss", Map.of(), 256.0, 10.0, "us/op", 128.0, 20, 128);
        assertEquals(1.0, r.microsPerOp(r.median()).getAsDouble(), 1e-12);
        assertEquals(2.0, r.microsPerOp(r.score()).getAsDouble(), 1e-12);
    }

    @Test
    void averageTimeAndThroughputConvertToMicros() {
        JmhResult avgt = new JmhResult(0, "a.B.c", "avgt", Map.of(), 2500.0, 1.0, "ns/op", 2400.0, 5, 1);
        assertEquals(2.4, avgt.microsPerOp(avgt.median()).getAsDouble(), 1e-12);
        JmhResult thrpt = new JmhResult(0, "a.B.c", "thrpt", Map.of(), 0.5, 0.1, "ops/us", 0.25, 5, 1);
        assertEquals(4.0, thrpt.microsPerOp(thrpt.median()).getAsDouble(), 1e-12);
        assertTrue(thrpt.errorMicrosPerOp().isEmpty());
    }

    @Test
    void readsJmhJsonWithNaNAndRankFromTheName() throws IOException {
        Path f = Files.writeString(dir.resolve("out-rank12.json"), SyntheticRuns.jmhFile(
                SyntheticRuns.jmhEntry("dev.irisjvm.bench.jmh.BarrierBenchmark.barrier", "ss", 100, null, 700, 650, "us/op")));
        assertEquals(12, JmhResults.rankOf(f));
        List<JmhResult> rs = JmhResults.read(f, JmhResults.rankOf(f));
        assertEquals(1, rs.size());
        JmhResult r = rs.get(0);
        assertEquals("BarrierBenchmark.barrier", r.simpleName());
        assertEquals("BarrierBenchmark", r.className());
        assertTrue(Double.isNaN(r.scoreError()));
        assertEquals(6.5, r.microsPerOp(r.median()).getAsDouble(), 1e-12);
        assertEquals(-1, JmhResults.rankOf(Path.of("result.json")));
    }
}
