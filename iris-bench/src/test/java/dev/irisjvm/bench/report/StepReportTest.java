package dev.irisjvm.bench.report;

import static dev.irisjvm.bench.TextAssertions.assertContains;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.irisjvm.bench.results.StepMeasurement;
import dev.irisjvm.bench.results.StepSweepResult;
import dev.irisjvm.bench.results.StoredResult;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The training-step report from synthetic runs with known answers, Llama-3 70B's MLP on 2 ranks
 * (6 x 2 x 8192 x 8192 x 14336 = 11.54 TFLOP per rank): baseline 18400 µs; fused 16000 → 1.150×,
 * pass at the bound (≥ 1.15); fused 16100 → 1.143×, FAIL; a fused step whose output check failed;
 * a baseline that did not run; and the passing run again with two ranks per GPU.
 */
class StepReportTest {
    static final int M = 8192;
    static final int H = 8192;
    static final int F = 28672;
    static final double FLOPS = 6 * 2.0 * M * H * (F / 2);
    static final double BASELINE_US = 18400;

    @TempDir
    Path dir;

    static StepMeasurement point(String impl, double medianUs, String check) {
        return new StepMeasurement(M, H, F, 2, impl, 40, medianUs, medianUs * 0.98, medianUs * 1.05,
                List.of(medianUs, medianUs * 1.01, medianUs * 0.99, medianUs), FLOPS, 3L * (1 << 27), check);
    }

    /** Every implementation timed, the fused step at {@code fusedUs} with {@code fusedCheck}. */
    static List<StepMeasurement> points(double fusedUs, String fusedCheck) {
        return List.of(point(StepMeasurement.FUSED, fusedUs, fusedCheck),
                point(StepMeasurement.BASELINE, BASELINE_US, StepMeasurement.REFERENCE),
                point(StepMeasurement.CUBLAS_GEMMS, 16560, ""),
                point(StepMeasurement.IRIS_GEMMS, 15600, ""),
                point(StepMeasurement.NCCL, 1840, ""));
    }

    static StepSweepResult run(int maxRanksPerGpu, List<StepMeasurement> ms) {
        return new StepSweepResult("2026-12-03T10:00:00Z", "2 x NVIDIA H200 (132 SMs, 140 GiB, CC 9.0)",
                "CUDA 13.0 (driver 13.0), cuBLAS 13.0.2, NCCL 2.28.3, Java 17.0.15",
                "bin/iris-run -n 2 -- java -cp ... dev.irisjvm.bench.step.StepSweep --out /tmp/w/training-step.json", 2,
                maxRanksPerGpu, 3, 10, 4, 25, ms);
    }

    private StepDocument document(StepSweepResult run) {
        return new StepDocument(run, Document.Context.of(BenchmarkTargets.builtIn()));
    }

    /** The report of {@code run} as {@code iris-bench report training-step} writes it. */
    private String markdown(StepSweepResult run, String name) throws IOException {
        return ReportRuns.reported(dir, ReportKind.STEP, name, run::write, "bin/iris-bench step -n 2");
    }

    @Test
    void targetIsTheIssues() {
        BenchmarkTargets.TrainingStep t = BenchmarkTargets.builtIn().trainingStep();
        assertEquals("issue 25", t.source());
        assertEquals(2, t.world());
        assertEquals(1.15, t.minSpeedup());
        assertEquals(ReportKind.STEP, ReportKind.of("training-step"));
    }

    @Test
    void speedupAndVerdicts() {
        StepDocument.Row atTheBound = document(run(1, points(16000, StepMeasurement.OK))).rows().get(0);
        assertEquals(1.15, atTheBound.speedup(), 1e-12);
        assertEquals("pass", document(run(1, points(16000, StepMeasurement.OK))).status(atTheBound));

        StepDocument slower = document(run(1, points(16100, StepMeasurement.OK)));
        assertEquals(BASELINE_US / 16100, slower.rows().get(0).speedup(), 1e-12);
        assertEquals("**FAIL**", slower.status(slower.rows().get(0)));

        StepDocument wrong = document(run(1, points(12000, "dX: largest difference 0.5 against the baseline's 0.02")));
        assertTrue(Double.isNaN(wrong.rows().get(0).speedup()), "a wrong output has no speedup, however fast");
        assertEquals(Verdict.OUTPUT_FAIL, wrong.status(wrong.rows().get(0)));

        List<StepMeasurement> noBaseline = new ArrayList<>(points(16000, StepMeasurement.OK));
        noBaseline.set(1, StepMeasurement.failed(M, H, F, 2, StepMeasurement.BASELINE, "NCCL failed to start"));
        StepDocument unmeasured = document(run(1, noBaseline));
        assertEquals(Verdict.NOT_MEASURED, unmeasured.status(unmeasured.rows().get(0)));

        StepDocument shared = document(run(2, points(16000, StepMeasurement.OK)));
        assertEquals(SharedGpus.NOT_JUDGED, shared.status(shared.rows().get(0)));
        StepDocument sharedWrong = document(run(2, points(16000, "y: 12 element(s) NaN")));
        assertEquals(Verdict.OUTPUT_FAIL, sharedWrong.status(sharedWrong.rows().get(0)), "a wrong output is wrong on shared GPUs too");
    }

    /** The rounding note names the target of the targets file beside the report, as the verdict does. */
    @Test
    void theRoundingNoteNamesTheTargetOfTheFile() throws IOException {
        String targets = Files.readString(CommittedReportsTest.COMMITTED.resolve(BenchmarkTargets.FILE));
        assertTrue(targets.contains("\"minSpeedup\": 1.15"), targets);
        Path out = Files.createDirectories(dir.resolve("higher"));
        Files.writeString(out.resolve(BenchmarkTargets.FILE), targets.replace("\"minSpeedup\": 1.15", "\"minSpeedup\": 1.2"));
        String md = markdown(run(1, points(16000, StepMeasurement.OK)), "higher");
        assertTrue(md.contains("| 1.150× | ≥ 1.2 × | **FAIL** |"), md);
        assertTrue(md.contains("Speedups to three decimals, so that 1.199 does not read as a passing 1.20;"), md);
    }

    @Test
    void aPassingRunOnOneGpuPerRank() throws IOException {
        String md = markdown(run(1, points(16000, StepMeasurement.OK)), "pass");
        assertContains(md,
                "- **ranks**: 2, one GPU each",
                "M × H × F = 8192 × 8192 × 28672; per rank 4096 tokens (sequence parallel) and F / 2 = 14336",
                "- **timing**: 3 warm-up and 10 timed steps per implementation and round, 4 round(s)",
                "bin/iris-bench step -n 2\n# which ran:\nbin/iris-run -n 2 -- java",
                "[training-step.json](training-step.json)",
                "Issue 25: forward + backward with the fused operations at least 1.15 × as fast",
                "1 of 1 point(s) reach the target.\n",
                "| 8192 × 8192 × 28672 | 2 | 16000 | 18400 | 1.150× | ≥ 1.15 × | pass |",
                "Speedups to three decimals, so that 1.149 does not read as a passing 1.15; a verdict compares the "
                        + "unrounded ratio.");
        // 11.54 TFLOP per rank: 722 TFLOP/s in 16000 µs, 627 in 18400; NCCL alone does no GEMM.
        assertContains(md,
                "| fused | the step: AllGatherGemm, GemmReduceScatter, Gemm | 16000 [15680–16800] | "
                        + "16000 · 16160 · 15840 · 16000 | 722 | 1.15× |",
                "| baseline | the step: cuBLAS and NCCL in sequence | 18400 [18032–19320] | "
                        + "18400 · 18584 · 18216 · 18400 | 627 | 1.00× |",
                "| nccl | the four collectives alone, NCCL | 1840 [1803–1932] | 1840 · 1858 · 1822 · 1840 | — | 10.00× |",
                "## What the overlap bought\n\nThe baseline took 18400 µs per step, the fused step 16000 µs: 2400 µs "
                        + "saved per step, against 1840 µs for NCCL's four collectives alone (130 % of it).",
                "so beyond its own GEMMs the baseline spent 1840 µs and the fused step 400 µs",
                "## Method",
                "all-gather dY → dA = dY·W2 → dW2 += dYᵀ·A → SiLU' → dX = dH·W1 → reduce-scatter into dX → dW1 += dHᵀ·X",
                "All 5 point(s) ran; the fused step's y, dX, dW1 and dW2 matched the baseline's.");
        assertFalse(md.contains("FAIL"), md);
    }

    @Test
    void aQuickShapeIsJudgedWithANote() throws IOException {
        List<StepMeasurement> quick = points(16000, StepMeasurement.OK).stream().map(m -> new StepMeasurement(2048, 2048, 8192, 2,
                m.impl(), m.reps(), m.medianUs() / 16, m.minUs() / 16, m.maxUs() / 16, m.roundMediansUs(), m.flopsPerRank() / 32,
                m.commBytesPerRank() / 16, m.check())).toList();
        String md = markdown(run(1, quick), "quick");
        assertTrue(md.contains("1 of 1 point(s) reach the target. At a shape other than 8192 × 8192 × 28672 the verdict applies "
                + "the same bound to a step the target does not name."), md);
        assertTrue(md.contains("per rank 1024 tokens (sequence parallel) and F / 2 = 4096 (tensor parallel)"), md);
    }

    @Test
    void aSlowerRunFailsByThreeDecimals() throws IOException {
        String md = markdown(run(1, points(16100, StepMeasurement.OK)), "fail");
        assertTrue(md.contains("0 of 1 point(s) reach the target."), md);
        assertTrue(md.contains("| 8192 × 8192 × 28672 | 2 | 16100 | 18400 | 1.143× | ≥ 1.15 × | **FAIL** |"), md);

        String slower = markdown(run(1, points(19000, StepMeasurement.OK)), "slower");
        assertTrue(slower.contains("the fused step 19000 µs: 600 µs lost per step, against 1840 µs for NCCL's four collectives "
                + "alone. "), slower);
    }

    @Test
    void aFailedCheckIsAFailureWhateverTheTime() throws IOException {
        String why = "dX: largest difference 0.5 against the baseline's 0.02";
        String md = markdown(run(1, points(12000, why)), "wrong");
        assertTrue(md.contains("| 8192 × 8192 × 28672 | 2 | 12000 | 18400 | — | ≥ 1.15 × | **FAIL** (output check) |"), md);
        assertTrue(md.contains("## Output check\n\n- fused: " + why + "\n"), md);
    }

    @Test
    void aBaselineThatDidNotRunIsNotMeasured() throws IOException {
        List<StepMeasurement> ms = new ArrayList<>(points(16000, StepMeasurement.OK));
        ms.set(1, StepMeasurement.failed(M, H, F, 2, StepMeasurement.BASELINE, "NCCL failed to start"));
        String md = markdown(run(1, ms), "unmeasured");
        assertContains(md,
                "No point could be judged.",
                "| 8192 × 8192 × 28672 | 2 | 16000 | — | — | ≥ 1.15 × | not measured |",
                "| baseline | the step: cuBLAS and NCCL in sequence | not run | — | — | — |",
                "Not measured: it needs the fused step, the baseline and NCCL alone timed.",
                "- baseline: not run: NCCL failed to start");
    }

    @Test
    void sharedGpusShowNoRatioAndNoVerdict() throws IOException {
        String md = markdown(run(2, points(16000, StepMeasurement.OK)), "shared");
        assertContains(md,
                "- **ranks**: 2, sharing GPUs (up to 2 per GPU): nothing is compared",
                "Not judged: the 2 ranks shared GPUs (up to 2 per GPU)",
                "| 8192 × 8192 × 28672 | 2 | ≥ 1.15 × | " + SharedGpus.NOT_JUDGED + " |",
                "these times include the ranks' turns on each GPU and compare nothing",
                "| fused | the step: AllGatherGemm, GemmReduceScatter, Gemm | 16000 [15680–16800] | "
                        + "16000 · 16160 · 15840 · 16000 |\n");
        assertFalse(md.contains("| pass |"), md);
        assertFalse(md.matches("(?s).*\\d\\.\\d\\d\\d?×.*"), "no ratio anywhere:\n" + md);
        assertFalse(md.contains("TFLOP/s per rank") || md.contains("baseline ÷ this") || md.contains("What the overlap bought"), md);
        assertTrue(md.contains("All 5 point(s) ran"), md);
    }

    @Test
    void withoutARunTheComparisonIsPending() throws IOException {
        Path out = dir.resolve("pending");
        String md = ReportRuns.pending(out, ReportKind.STEP, StepDocument.COMMAND, "The floor: the six GEMMs at 0.960 × cuBLAS.\n");
        assertTrue(md.startsWith("# " + StepDocument.TITLE + "\n"), md);
        assertTrue(md.contains("The comparison is pending a run on two GPUs: nothing has been measured yet."), md);
        assertTrue(md.contains("`ncclAllGather`, cuBLAS GEMMs and `ncclReduceScatter` in sequence on one stream"), md);
        assertFalse(md.contains("µs") || md.contains("## Target") || md.contains("pass") || md.contains("FAIL"), md);
    }

    @Test
    void jsonRoundTrip() throws IOException {
        StepSweepResult run = run(2, points(16000, StepMeasurement.OK));
        assertTrue(run.sharedGpu());
        String json = ReportRuns.roundTrip(dir, run, run::write, f -> StoredResult.read(f, StepSweepResult.class));
        assertFalse(json.contains("\"sharedGpu\"") || json.contains("\"timed\"") || json.contains("\"checkFailed\""),
                "derived facts are not stored:\n" + json);
    }
}
