package dev.irisjvm.core.testing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class GpuRunSummaryTest {

    @Test
    void countsEveryOutcomeOfTheReports(@TempDir Path dir) throws Exception {
        Files.writeString(dir.resolve("TEST-junit-jupiter.xml"), """
                <?xml version="1.0" encoding="UTF-8"?>
                <testsuite name="JUnit Jupiter" tests="4">
                  <testcase name="store_remote" classname="dev.irisjvm.core.CoreGpuTest"/>
                  <testcase name="job exited 0" classname="dev.irisjvm.core.CoreGpuTest"/>
                  <testcase name="ring" classname="A"><skipped message="ring on 3 ranks: needs an even world"/></testcase>
                  <testcase name="gpu" classname="D"><skipped>org.opentest4j.TestAbortedException: Assumption failed: needs 1 GPU, found 0
                    at somewhere</skipped></testcase>
                  <testcase name="sum" classname="B"><failure message="rank 1: FAIL off by 2" type="AssertionError">trace</failure></testcase>
                  <testcase name="init" classname="C"><error>java.lang.IllegalStateException: boom
                    at somewhere</error></testcase>
                </testsuite>
                """);
        GpuRunSummary.Counts counts = GpuRunSummary.read(dir);
        assertEquals(2, counts.passed());
        assertEquals(List.of(new GpuRunSummary.Problem("B sum", "rank 1: FAIL off by 2"),
                new GpuRunSummary.Problem("C init", "java.lang.IllegalStateException: boom\n    at somewhere")),
                counts.failures());
        assertEquals(List.of(new GpuRunSummary.Problem("A ring", "ring on 3 ranks: needs an even world"),
                new GpuRunSummary.Problem("D gpu", "needs 1 GPU, found 0")), counts.skips());

        GpuRunSummary.Summary s = GpuRunSummary.summarize(counts, "abc1234", Instant.parse("2026-12-01T20:15:30.5Z"),
                "NVIDIA H200", 1, 3, "all", null);
        assertEquals("2026-12-01T20:15:30Z", s.date());
        assertEquals(3, s.worldSize());
        assertEquals(3, s.ranksPerGpu(), "three ranks on one GPU");
        assertEquals(1, s.nodes());
        assertEquals(2, s.passed());
        assertEquals(2, s.failed());
        assertEquals(2, s.skipped());
        assertEquals(2, GpuRunSummary.summarize(counts, "c", Instant.EPOCH, "m", 2, 4, "all", null).ranksPerGpu());
        assertEquals(1, GpuRunSummary.summarize(counts, "c", Instant.EPOCH, "m", 8, 2, "all", null).ranksPerGpu());
    }

    @Test
    void partsOfOneRunMergeAndOthersAreRefused(@TempDir Path dir) throws Exception {
        GpuRunSummary.Problem skip = new GpuRunSummary.Problem("A ring", "needs an even world");
        GpuRunSummary.Problem failure = new GpuRunSummary.Problem("B sum", "off by 2");
        Path a = part(dir, "a.json", new GpuRunSummary.Summary("abc", "2026-12-02T03:10:00Z", "NVIDIA H200", 1, 3, 3, 1,
                "first", 10, 0, 1, List.of(), List.of(skip), new RunResidue(0, 0, 0, 600L, 610L)));
        Path b = part(dir, "b.json", new GpuRunSummary.Summary("abc", "2026-12-02T03:20:00Z", "NVIDIA H200", 1, 3, 3, 1,
                "second", 5, 1, 0, List.of(failure), List.of(), new RunResidue(2, 0, 1, 610L, 900L)));
        GpuRunSummary.Summary m = GpuRunSummary.merge(List.of(a, b));
        assertEquals(15, m.passed());
        assertEquals(1, m.failed());
        assertEquals(1, m.skipped());
        assertEquals(List.of(failure), m.failures());
        assertEquals(List.of(skip), m.skips());
        assertEquals("2026-12-02T03:20:00Z", m.date(), "dated by the last part");
        assertEquals("merged: a.json, b.json", m.selection());
        assertEquals(new RunResidue(2, 0, 1, 600L, 900L), m.residue(), "leftovers add up; before is the first part's, after the last's");
        Path other = part(dir, "c.json", new GpuRunSummary.Summary("def", "2026-12-02T03:30:00Z", "NVIDIA H200", 1, 3, 3, 1,
                "third", 1, 0, 0, List.of(), List.of(), null));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> GpuRunSummary.merge(List.of(a, other)));
        assertEquals("c.json ran commit def at world 3 on 1 x NVIDIA H200; a.json ran abc at world 3 on 1 x NVIDIA H200: "
                + "only parts of one run may be merged", e.getMessage());
    }

    private static Path part(Path dir, String name, GpuRunSummary.Summary s) throws IOException {
        Path p = dir.resolve(name);
        new ObjectMapper().writeValue(p.toFile(), s);
        return p;
    }

    @Test
    void theResidueFileIsReadAndASummaryWithoutOneStillReads(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("residue.properties");
        Files.writeString(file, """
                leftover.processes=1
                gpu.processes.before=0
                gpu.processes.after=0
                gpu.memory.used.mib.before=512
                gpu.memory.used.mib.after=
                """);
        assertEquals(new RunResidue(1, 0, 0, 512L, null), RunResidue.read(file), "an empty value is a figure nobody could read");
        Files.writeString(file, "gpu.processes.before=0\n");
        IOException e = assertThrows(IOException.class, () -> RunResidue.read(file));
        assertEquals(file + ": no leftover.processes count", e.getMessage());

        Path old = dir.resolve("old.json");
        Files.writeString(old, """
                {"commit":"abc","date":"2026-12-01T00:00:00Z","gpuModel":"NVIDIA H200","gpuCount":1,"worldSize":2,
                 "ranksPerGpu":2,"nodes":1,"selection":"suite","passed":3,"failed":0,"skipped":0,"failures":[],"skips":[]}
                """);
        GpuRunSummary.Summary merged = GpuRunSummary.merge(List.of(old));
        assertEquals(3, merged.passed());
        assertEquals(null, merged.residue(), "summaries written before the residue was counted have none");
    }

    @Test
    void noReportIsAnError(@TempDir Path dir) {
        assertThrows(IOException.class, () -> GpuRunSummary.read(dir));
    }

    @Test
    void testWorldComesFromTheEnvironmentOrTheGpus() {
        assertEquals(2, GpuTestSupport.worldSize(null, 0));
        assertEquals(2, GpuTestSupport.worldSize(" ", 1));
        assertEquals(4, GpuTestSupport.worldSize(null, 4));
        assertEquals(8, GpuTestSupport.worldSize(null, 16));
        assertEquals(3, GpuTestSupport.worldSize("3", 1));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> GpuTestSupport.worldSize("9", 1));
        assertEquals("IRIS_TEST_WORLD must be a number of ranks in [1, 8], got '9'", e.getMessage());
    }
}
