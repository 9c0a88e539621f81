package dev.irisjvm.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.irisjvm.bench.attention.AttentionBench;
import dev.irisjvm.bench.ccl.CclSweep;
import dev.irisjvm.bench.fused.FusedSweep;
import dev.irisjvm.bench.gemm.GemmSweep;
import dev.irisjvm.bench.report.CclSettings;
import dev.irisjvm.bench.rma.RmaSweep;
import java.util.List;
import java.util.concurrent.Callable;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** The command every sweep records parses back to the same options, whatever the sweep. */
class RunRecordTest {
    @Test
    void everySweepsRecordedOptionsParseBackToTheSameOptions() {
        roundTrip(new RmaSweep(), "--max-bytes", "16m", "--ops", "store,all_reduce", "--threads", "256", "--seed", "-5",
                "--no-gate", "--heap", "4g");
        roundTrip(new CclSweep(), "--max-bytes", "16m", "--ops", "all_reduce,broadcast", "--algorithms", "ring", "--dtype", "f16",
                "--seed", "42", "--no-graph", "--no-nccl", "--no-overlap-launches");
        roundTrip(new GemmSweep(), "--shapes", "64x64x64:kn,128x256x64", "--dtype", "f16", "--out-dtype", "f32", "--reps", "25",
                "--seed", "42", "--no-cublas", "--l2-factor", "1.5");
        roundTrip(new GemmSweep(), "--rounds", "3", "--no-cublaslt", "--cublaslt-workspace-mib", "64");
        roundTrip(new FusedSweep(), "--quick", "--reps", "25", "--no-trace");
        roundTrip(new AttentionBench(), "--parts", "decode", "--decode-chunk-len", "832", "--seed", "7");
    }

    @Test
    void defaultsAreSpelledOutAsTheyAreWritten() {
        List<String> ccl = options(new CclSweep());
        assertEquals("never", ccl.get(ccl.indexOf("--copy-engine-bytes") + 1));
        assertEquals("bf16", ccl.get(ccl.indexOf("--dtype") + 1));
        assertTrue(!ccl.contains("--help") && !ccl.contains("--no-nccl"), ccl.toString());
        CclSettings s = CclSettings.fromCommand(String.join(" ", options(new CclSweep(), "--dtype", "f32", "--eager-calls", "1")));
        assertEquals("f32", s.dtype());
        assertEquals(1, s.eagerCalls());
    }

    @Test
    void commandsNameTheLauncherWhenThereAreRanks() {
        CommandLine cl = new CommandLine(new GemmSweep());
        cl.parseArgs("--suite", "models", "--out", "my results.json");
        String c = RunRecord.command(0, GemmSweep.class, cl.getCommandSpec());
        assertTrue(c.startsWith("java -cp 'iris-bench/target/lib/*' dev.irisjvm.bench.gemm.GemmSweep --suite models --dtype bf16 "), c);
        assertTrue(c.contains("--out 'my results.json'"), c);
        cl = new CommandLine(new CclSweep());
        cl.parseArgs();
        assertTrue(RunRecord.command(4, CclSweep.class, cl.getCommandSpec())
                .startsWith("bin/iris-run -n 4 -- java -cp 'iris-bench/target/lib/*' dev.irisjvm.bench.ccl.CclSweep --min-bytes 1k"));
    }

    private static List<String> options(Callable<Integer> sweep, String... args) {
        CommandLine cl = new CommandLine(sweep);
        cl.parseArgs(args);
        return RunRecord.options(cl.getCommandSpec());
    }

    private static void roundTrip(Callable<Integer> sweep, String... args) {
        List<String> recorded = options(sweep, args);
        try {
            List<String> again = options(sweep.getClass().getDeclaredConstructor().newInstance(), recorded.toArray(String[]::new));
            assertEquals(recorded, again, sweep.getClass().getSimpleName());
        } catch (ReflectiveOperationException e) {
            throw new AssertionError(e);
        }
        for (String a : args) {
            if (a.startsWith("--")) {
                assertTrue(recorded.contains(a), a + " in " + recorded);
            }
        }
    }
}
