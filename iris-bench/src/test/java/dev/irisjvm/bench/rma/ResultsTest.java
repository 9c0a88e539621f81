package dev.irisjvm.bench.rma;

import static dev.irisjvm.bench.TextAssertions.assertContains;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.irisjvm.bench.RunRecord;
import dev.irisjvm.bench.results.Measurement;
import dev.irisjvm.kernels.baselines.NcclComm;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The pure logic around results: merging logs, building measurements, the table, the command line. */
class ResultsTest {
    private static Measurement m(String op, int issuer, String check) {
        return new Measurement(op, "iris", 4096, issuer, 1 - issuer, 20, 3.5, 3.0, 9.0, 1.17, 0.0, check);
    }

    @Test
    void logsMergeInPointThenIssuerOrderAndSurviveJson() {
        MeasurementLog rank0 = new MeasurementLog();
        MeasurementLog rank1 = new MeasurementLog();
        rank0.add(1, m("load", 0, "ok"));
        rank1.add(2, m("load", 1, "ok"));
        rank1.add(5, m("all_reduce", 1, "ok"));
        rank0.add(5, m("all_reduce", 0, "ok"));
        List<MeasurementLog.Entry> entries = new java.util.ArrayList<>();
        entries.addAll(MeasurementLog.decode(MeasurementLog.encode(rank1.entries())));
        entries.addAll(MeasurementLog.decode(MeasurementLog.encode(rank0.entries())));
        List<Measurement> merged = MeasurementLog.order(entries);
        assertEquals(4, merged.size());
        assertEquals(m("load", 0, "ok"), merged.get(0));
        assertEquals(m("load", 1, "ok"), merged.get(1));
        assertEquals(0, merged.get(2).issuer());
        assertEquals(1, merged.get(3).issuer());
    }

    @Test
    void pointsUseTheDocumentedUnits() {
        Lockstep.Outcome o = new Lockstep.Outcome(new float[] {0.002f, 0.001f, 0.003f}, "ok");   // ms
        Measurement bw = Points.bandwidth("load", "iris", 2000, 0, 1, o);
        assertEquals(2.0, bw.medianUs(), 1e-6);
        assertEquals(1.0, bw.gbps(), 1e-6);        // 2000 B in 2 us
        Measurement at = Points.atomics("atomic_add", 4000, 0, 1, o);
        assertEquals(32000, at.bytes());
        assertEquals(2.0, at.gops(), 1e-6);        // 4000 ops in 2 us
        assertEquals(0.0, at.gbps());
        Measurement pp = Points.perMessage("ping_pong", 8, 0, 1, 1000, false, o);
        assertEquals(0.002, pp.medianUs(), 1e-9);
        assertEquals(0.0, pp.gbps());
        Measurement failed = Points.bandwidth("load", "iris", 2000, 0, 1, new Lockstep.Outcome(null, "rank 1: run failed"));
        assertEquals(0, failed.reps());
        assertEquals("rank 1: run failed", failed.check());
    }

    @Test
    void tableShowsRatesAndFailedChecks() {
        String table = ResultTable.format(List.of(m("load", 0, "ok"), m("store", 1, "dst: 3 of 256 16-byte words differ")));
        assertContains(table, "1.2 GB/s", "0->1", "dst: 3 of 256");
        assertEquals(3, table.split("\n").length);
    }

    @Test
    void failedChecksExcludeUnavailableNccl() {
        assertFalse(RmaSweep.failedCheck(m("load", 0, "ok")));
        assertTrue(RmaSweep.failedCheck(m("load", 0, "mismatch")));
        assertFalse(RmaSweep.failedCheck(m("send_recv", 0, "nccl unavailable: no libnccl")));
    }

    @Test
    void commandAndDescriptions() {
        picocli.CommandLine cl = new picocli.CommandLine(new RmaSweep());
        cl.parseArgs("--ops", "load,store", "--out", "my results.json");
        String c = RunRecord.command(2, RmaSweep.class, cl.getCommandSpec());
        assertTrue(c.startsWith("bin/iris-run -n 2 -- java -cp 'iris-bench/target/lib/*' dev.irisjvm.bench.rma.RmaSweep "), c);
        assertTrue(c.contains("--ops load,store"), c);
        assertTrue(c.contains("--out 'my results.json'"), c);
        assertEquals("2 x H200", RunRecord.describeDevices(List.of("H200", "H200")));
        assertEquals("H100 + H200", RunRecord.describeDevices(List.of("H100", "H200")));
        assertEquals("NCCL 2.28.3", NcclComm.formatVersion(22803));
    }
}
