package dev.irisjvm.bench.report;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.irisjvm.bench.RunRecord;
import dev.irisjvm.bench.cli.IrisBench;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * {@code iris-bench report KIND} as a user runs it, on a sweep's JSON or on none (no GPU): the
 * markdown it writes; and a run's JSON written and read back.
 */
final class ReportRuns {
    private ReportRuns() {}

    /** A result's own read method. */
    interface JsonReader<T> {
        T read(Path file) throws IOException;
    }

    /** {@code run} written by {@code write} to {@code dir/again.json}: checks that {@code read} gives it back, and returns the JSON. */
    static <T> String roundTrip(Path dir, T run, RunRecord.JsonWriter write, JsonReader<T> read) throws IOException {
        Path file = dir.resolve("again.json");
        write.write(file);
        assertEquals(run, read.read(file));
        return Files.readString(file);
    }

    /**
     * {@code run} written to {@code dir/name.json} and reported into {@code dir/name}, with {@code
     * runCommand} as the command that ran it; checks that the raw JSON was copied beside the report.
     */
    static String reported(Path dir, ReportKind kind, String name, RunRecord.JsonWriter run, String runCommand) throws IOException {
        Path json = dir.resolve(name + ".json");
        run.write(json);
        Path out = dir.resolve(name);
        String md = report(kind, out, "--sweep", json.toString(), "--run-command", runCommand);
        assertTrue(Files.isRegularFile(out.resolve(kind.sweepFile())), "the raw JSON is copied beside the report");
        return md;
    }

    /**
     * The report without a run, into {@code out}, whose findings file holds {@code findings} (none
     * where null); checks what every pending report shows: the {@code command} that measures it, what
     * the benchmark measures, the findings last, and no raw JSON beside it.
     */
    static String pending(Path out, ReportKind kind, String command, String findings) throws IOException {
        if (findings != null) {
            Files.createDirectories(out);
            Files.writeString(out.resolve(kind.findingsFile()), findings);
        }
        String md = report(kind, out);
        assertTrue(md.contains("```\n" + command + "\n```"), md);
        assertTrue(md.contains("## What the benchmark measures"), md);
        assertTrue(findings == null || md.endsWith("## Findings\n\n" + findings + "\n"), md);
        assertFalse(Files.exists(out.resolve(kind.sweepFile())));
        return md;
    }

    /** Runs the report into {@code out} with {@code args}, which writes its markdown (a chart may be missing, see EXIT_NO_CHARTS). */
    private static String report(ReportKind kind, Path out, String... args) throws IOException {
        List<String> all = new ArrayList<>(List.of("report", kind.prefix(), "--out", out.toString()));
        all.addAll(List.of(args));
        int rc = IrisBench.commandLine().execute(all.toArray(String[]::new));
        assertTrue(rc == 0 || rc == Report.EXIT_NO_CHARTS, "exit " + rc);
        return Files.readString(out.resolve(kind.markdown()));
    }
}
