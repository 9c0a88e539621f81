package dev.irisjvm.bench.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.irisjvm.bench.jit.JitOptions;
import dev.irisjvm.bench.report.JitDocument;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/** {@code iris-bench jit}'s own options, without a GPU: the device, --quick, --report-only. */
class JitRunTest {
    @TempDir
    Path dir;

    @Test
    void aNegativeDeviceIsBadUsage() {
        assertEquals(BenchRun.EXIT_USAGE, IrisBench.commandLine().execute("jit", "--device", "-1", "--out", dir.toString()));
    }

    @Test
    void quickStandsForValidBenchmarkOptions() {
        JitOptions o = new JitOptions();
        new CommandLine(o).parseArgs(new JitRun().quickSweepArgs().toArray(String[]::new));
        o.validate();
        assertEquals(List.of(false), o.variants());
        assertEquals(JitOptions.MIN_REPS, o.coldReps());
    }

    @Test
    void theDeviceGoesToTheBenchmarkAsIrisDevice() {
        JitRun run = new JitRun();
        new CommandLine(run).parseArgs("--device", "3");
        assertEquals(0, run.ranks(), "one JVM, no launcher");
        assertEquals(java.util.Map.of("IRIS_DEVICE", "3"), run.sweepEnvironment());
        assertEquals(java.util.Map.of(), new JitRun().sweepEnvironment());
    }

    @Test
    void reportOnlyRedrawsWithoutAGpu() throws Exception {
        assertEquals(0, IrisBench.commandLine().execute("jit", "--report-only", "--out", dir.toString()));
        assertTrue(Files.readString(dir.resolve(JitDocument.MARKDOWN)).contains("## Device lines each overlap style adds"));
    }
}
