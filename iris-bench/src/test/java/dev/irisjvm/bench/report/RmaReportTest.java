package dev.irisjvm.bench.report;

import dev.irisjvm.bench.cli.IrisBench;
import static dev.irisjvm.bench.TextAssertions.assertContains;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.irisjvm.bench.results.Measurement;
import dev.irisjvm.bench.results.SweepResult;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The whole report from synthetic data with known answers: matrices, targets, JMH, charts. */
class RmaReportTest {
    private static final byte[] PNG_SIGNATURE = {(byte) 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    private static final String JMH_PKG = "dev.irisjvm.bench.jmh.";

    @TempDir
    Path dir;

    /**
     * 2 ranks up to 1 GiB, the copy engine recorded per direction (as RmaSweep does); store and the
     * barrier benchmark are missing; the rest passes.
     */
    @Test
    void twoRanksWithMissingStoreAndBarrier() throws IOException {
        long[] sizes = {4 * SyntheticRuns.KIB, SyntheticRuns.MIB, 16 * SyntheticRuns.MIB, SyntheticRuns.GIB};
        SweepResult sweep = new SyntheticRuns(2)
                .pairs("load", "iris", sizes, b -> b == SyntheticRuns.GIB ? 380 : 100)
                .pairs("copy_engine_pull", "copy_engine", sizes, b -> b == SyntheticRuns.GIB ? 396 : 200)
                .pairs("copy_engine_push", "copy_engine", sizes, b -> b == SyntheticRuns.GIB ? 420 : 200)
                .pairs("send_recv", "nccl", sizes, b -> 150)
                .local("local_copy_sm", "local", sizes, 1965)
                .local("local_copy", "local", sizes, 1500)
                .latency("ping_pong", "iris", new long[] {8, 4 * SyntheticRuns.KIB}, 1.35)
                .latency("message_passing", "iris", new long[] {8, 4 * SyntheticRuns.KIB}, 3.5)
                .latency("message_passing_ll", "iris", new long[] {8, 4 * SyntheticRuns.KIB}, 1.6)
                .atomics("atomic_add", new long[] {8 * SyntheticRuns.MIB}, 77)
                .collective("all_load", "iris", new long[] {SyntheticRuns.MIB}, 300)
                .build();
        Path sweepFile = write(sweep);
        String launch = SyntheticRuns.jmhFile(
                SyntheticRuns.jmhEntry(JMH_PKG + "LaunchBenchmark.launch", "ss", 256, "{ \"op\" : \"storeRemote\" }",
                        800.0, 768.0, "us/op"),
                SyntheticRuns.jmhEntry(JMH_PKG + "RemoteTileBenchmark.remoteTile", "ss", 10,
                        "{ \"op\" : \"storeRemote\", \"bytes\" : \"1048576\" }", 40.0, 40.0, "us/op"));
        Path jmh0 = Files.writeString(dir.resolve("jmh-rank0.json"), launch);
        Path jmh1 = Files.writeString(dir.resolve("jmh-rank1.json"), launch);
        Path out = dir.resolve("report");

        int rc = run("--sweep", sweepFile.toString(), "--jmh", jmh0.toString(), jmh1.toString(), "--out", out.toString(),
                "--jmh-command", "bin/iris-run -n 2 -- sh -c '... -rff jmh-rank$IRIS_RANK.json'",
                "--run-command", "bin/iris-bench rma -n 2");
        assertEquals(0, rc);
        String md = Files.readString(out.resolve("rma.md"));

        // Header: commands and links to the copied raw files.
        assertContains(md,
                "dev.irisjvm.bench.rma.RmaSweep --out",
                "bin/iris-bench rma -n 2",
                "[rma-sweep.json](rma-sweep.json)",
                "[rma-jmh-rank1.json](rma-jmh-rank1.json)");
        assertTrue(Files.exists(out.resolve("rma-sweep.json")));
        assertTrue(Files.exists(out.resolve("rma-jmh-rank0.json")));
        assertTrue(Files.exists(out.resolve("rma-jmh-rank1.json")));

        // Matrices at the largest size and at 1 MiB; the diagonal of a remote op is empty.
        assertContains(md,
                "### load [iris] at 1 GiB (GB/s)",
                "### load [iris] at 1 MiB (GB/s)",
                "| issuer \\ peer | 0 | 1 |",
                "| 0 | — | 380 |",
                "| 1 | 380 | — |",
                "### ping_pong [iris] at 4 KiB (µs)",
                "### atomic_add [iris] at 8 MiB (G ops/s)",
                "### all_load [iris] at 1 MiB (GB/s)",
                "| issuer \\ peer | all |",
                "### local_copy_sm [local] at 1 GiB (GB/s)",
                "### copy_engine_push [copy_engine] at 1 GiB (GB/s)",
                "| 0 | 1965 | — |");

        // Targets.
        assertTarget(md, "a (load)", "| pass |", "0.960×", "copy_engine_pull");   // 380 / 396: against the pull direction
        assertTarget(md, "a (store)", "not measured", "store [iris] is not in the sweep");
        assertTarget(md, "b (put, flags inline)", "| pass |", "message_passing_ll [iris] at 8 B");
        assertTarget(md, "b (put + release flag)", "**FAIL**", "1.750×");
        assertTarget(md, "c", "| pass |", "3.00 µs");   // 768 µs per batch of 256
        assertTarget(md, "d", "not measured");

        // Size tables, floors, JMH table.
        assertTrue(md.contains("| 1 GiB | 380 |"));
        assertTrue(md.contains("copy engine peer bandwidth, copy_engine_pull [copy_engine] | 1 GiB | 396"), md);
        assertTrue(md.contains("| 1 GiB | 380 | — | 396 | 420 |"), md);   // load, all_load, CE pull, CE push
        assertTrue(md.contains("| RemoteTileBenchmark.remoteTile | bytes=1048576, op=storeRemote | 0 | ss | 20 × 10 | 40.0 | — | us/op | 4.00 | 262 |"), md);
        assertTrue(md.contains("Every one of the"));

        assertPng(out.resolve(SizeTables.BANDWIDTH_PNG));
        assertPng(out.resolve(SizeTables.LATENCY_PNG));
    }

    /** 4 ranks up to 16 MiB, no JMH barrier pass, slow round trip, one failed check. */
    @Test
    void fourRanksWithoutOneGiBAndFailures() throws IOException {
        long[] sizes = {4 * SyntheticRuns.KIB, 64 * SyntheticRuns.KIB, SyntheticRuns.MIB, 16 * SyntheticRuns.MIB};
        SweepResult sweep = new SyntheticRuns(4)
                .pairs("load", "iris", sizes, b -> 300)
                .pairs("store", "iris", sizes, b -> 310)
                .pairs("copy_engine", "copy_engine", sizes, b -> 350)
                .latency("message_passing", "iris", new long[] {8}, 2.5)
                .add(new Measurement("load", "iris", SyntheticRuns.GIB / 1024, 2, 3, 5, 1, 1, 1, 1, 0, "mismatch at element 17"))
                .build();
        Path sweepFile = write(sweep);
        String[] files = new String[4];
        for (int r = 0; r < 4; r++) {
            double launchPerBatch = r == 3 ? 6.0 * 256 : 2.0 * 256;   // rank 3 is slow: the target judges by it
            String json = SyntheticRuns.jmhFile(
                    SyntheticRuns.jmhEntry(JMH_PKG + "LaunchBenchmark.launch", "ss", 256, "{ \"op\" : \"atomicAdd\" }",
                            launchPerBatch, launchPerBatch, "us/op"),
                    SyntheticRuns.jmhEntry(JMH_PKG + "BarrierBenchmark.barrier", "ss", 100, null, 1200, 1200, "us/op"),
                    SyntheticRuns.jmhEntry(JMH_PKG + "BarrierBenchmark.barrierPipelined", "ss", 1, null, 12, 12, "us/op"));
            files[r] = Files.writeString(dir.resolve("jmh-rank" + r + ".json"), json).toString();
        }
        Path out = dir.resolve("report4");
        String[] args = new String[4 + 1 + files.length + 2];
        args[0] = "--sweep";
        args[1] = sweepFile.toString();
        args[2] = "--out";
        args[3] = out.toString();
        args[4] = "--jmh";
        System.arraycopy(files, 0, args, 5, files.length);
        args[args.length - 2] = "--jmh-command";
        args[args.length - 1] = "jmh";
        assertEquals(0, run(args));
        String md = Files.readString(out.resolve("rma.md"));

        assertContains(md, "| issuer \\ peer | 0 | 1 | 2 | 3 |", "| 1 | 300 | — | 300 | 300 |", "### store [iris] at 16 MiB (GB/s)");
        // A second 1 MiB point of rank 2 -> 3 failed its check: left out of the figure, marked, and listed.
        assertTrue(md.contains("| 2 | 300 | 300 | — | 300 ⚠ |"), md);
        assertTrue(md.contains("mismatch at element 17"));

        assertTarget(md, "a (load)", "not measured", "no 1 GiB point");
        assertTarget(md, "a (store)", "not measured");
        assertTarget(md, "b (put + release flag)", "**FAIL**", "1.250×");
        assertTarget(md, "b (put, flags inline)", "not measured");
        assertTarget(md, "c", "**FAIL**", "rank 3");
        assertTarget(md, "d", "**FAIL**", "12.0 µs");
        assertFalse(md.contains("| pass |"));
        // No atomics in this sweep: said, not invented.
        assertTrue(md.contains("No atomic operation is in the sweep."));

        assertPng(out.resolve(SizeTables.BANDWIDTH_PNG));
        assertPng(out.resolve(SizeTables.LATENCY_PNG));
    }

    @Test
    void withoutJmhTheJmhTargetsAreNotMeasured() throws IOException {
        SweepResult sweep = new SyntheticRuns(2)
                .pairs("load", "iris", new long[] {SyntheticRuns.MIB}, b -> 100).build();
        Path out = dir.resolve("nojmh");
        assertEquals(0, run("--sweep", write(sweep).toString(), "--out", out.toString()));
        String md = Files.readString(out.resolve("rma.md"));
        assertTarget(md, "b (put + release flag)", "not measured");
        assertTarget(md, "c", "not measured");
        assertTarget(md, "d", "not measured");
        assertTrue(md.contains("No JMH results were given"));
        assertTarget(md, "a (load)", "no copy-engine op is in the sweep");
    }

    @Test
    void unreadableSweepIsAnError() throws IOException {
        Path bad = Files.writeString(dir.resolve("bad.json"), "{ not json");
        assertEquals(1, run("--sweep", bad.toString(), "--out", dir.resolve("x").toString()));
    }

    private static int run(String... args) {
        String[] all = new String[args.length + 2];
        all[0] = "report";
        all[1] = "rma";
        System.arraycopy(args, 0, all, 2, args.length);
        return IrisBench.commandLine().execute(all);
    }

    private Path write(SweepResult sweep) throws IOException {
        Path f = Files.createTempFile(dir, "sweep", ".json");
        sweep.write(f);
        return f;
    }

    /** Asserts that the targets-table line of target {@code id} says each of {@code parts}. */
    private static void assertTarget(String md, String id, String... parts) {
        String row = Arrays.stream(md.split("\n")).filter(l -> l.startsWith("| " + id + " |")).findFirst()
                .orElseThrow(() -> new AssertionError("no target row " + id + " in\n" + md));
        for (String part : parts) {
            assertTrue(row.contains(part), () -> "'" + row + "' should say '" + part + "'");
        }
    }

    private static void assertPng(Path file) throws IOException {
        assertTrue(Files.exists(file), file + " missing");
        byte[] head = new byte[8];
        try (InputStream in = Files.newInputStream(file)) {
            assertEquals(8, in.read(head));
        }
        assertArrayEquals(PNG_SIGNATURE, head, file + " is not a PNG");
        assertTrue(Files.size(file) > 5_000, file + " is suspiciously small");
    }
}
