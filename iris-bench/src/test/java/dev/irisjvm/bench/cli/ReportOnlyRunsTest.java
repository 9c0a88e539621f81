package dev.irisjvm.bench.cli;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.irisjvm.bench.report.ReportKind;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** {@code --report-only} redraws a report without a GPU, saying what is pending a run. */
class ReportOnlyRunsTest {
    @TempDir
    Path dir;

    @ParameterizedTest
    @CsvSource({"step, STEP, The comparison is pending a run on two GPUs",
            "nodes, NODES, The comparison is pending a run with one GPU per rank"})
    void redrawsWithoutAGpu(String command, ReportKind kind, String pending) throws Exception {
        int rc = IrisBench.commandLine().execute(command, "--report-only", "--out", dir.toString());
        assertTrue(rc == 0 || rc == 3, "exit " + rc);
        String md = Files.readString(dir.resolve(kind.markdown()));
        assertTrue(md.contains(pending), md);
    }
}
