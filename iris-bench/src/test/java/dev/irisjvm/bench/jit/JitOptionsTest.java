package dev.irisjvm.bench.jit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** The benchmark's command line: sources, repetitions, variants, folders. */
class JitOptionsTest {
    private static JitOptions parse(String... args) {
        JitOptions o = new JitOptions();
        new CommandLine(o).parseArgs(args);
        return o;
    }

    private static void invalid(String expected, String... args) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> parse(args).validate());
        assertTrue(e.getMessage().contains(expected), () -> "'" + e.getMessage() + "' should say '" + expected + "'");
    }

    @Test
    void defaultsAreEverySourceBothVariants() {
        JitOptions o = parse();
        o.validate();
        assertEquals(ExampleSource.NAMES, o.sources());
        assertEquals(List.of(false, true), o.variants(), "plain, then checked");
        assertEquals(5, o.coldReps());
        assertEquals(10, o.warmReps());
        assertEquals(Path.of(System.getProperty("java.io.tmpdir")), o.cacheParent());
        assertEquals(Path.of("jit-bench.json"), o.out());
    }

    @Test
    void sourcesAreTakenInExampleOrderOnce() {
        assertEquals(List.of("01_load.cu", "10_overlap_styles.cu"),
                parse("--sources", " 10_overlap_styles.cu, 01_load.cu,10_overlap_styles.cu").sources());
        assertEquals(ExampleSource.NAMES, parse("--sources", "ALL").sources());
    }

    @Test
    void plainOnlyAndFolders() {
        JitOptions o = parse("--plain-only", "--cache-parent", "/scratch/jit", "--out", "x/jit.json", "--cold-reps", "3",
                "--warm-reps", "4");
        o.validate();
        assertEquals(List.of(false), o.variants());
        assertEquals(Path.of("/scratch/jit"), o.cacheParent());
        assertEquals(Path.of("x/jit.json"), o.out());
        assertEquals(3, o.coldReps());
        assertEquals(4, o.warmReps());
    }

    @Test
    void badOptionsAreNamed() {
        invalid("--cold-reps must be >= 3, got 2", "--cold-reps", "2");
        invalid("--warm-reps must be >= 3, got 0", "--warm-reps", "0");
        invalid("--sources: '09_cublas.cu' is not an example kernel source", "--sources", "01_load.cu,09_cublas.cu");
        invalid("--sources names no source", "--sources", " , ");
    }
}
