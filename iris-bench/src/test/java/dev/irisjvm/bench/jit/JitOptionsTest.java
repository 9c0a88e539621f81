package dev.irisjvm.bench.jit;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.irisjvm.bench.OptionsUnderTest;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The benchmark's command line: sources, repetitions, variants, folders. */
class JitOptionsTest {
    private static final OptionsUnderTest<JitOptions> OPTIONS = new OptionsUnderTest<>(JitOptions::new, JitOptions::validate);

    @Test
    void defaultsAreEverySourceBothVariants() {
        JitOptions o = OPTIONS.valid();
        assertEquals(ExampleSource.NAMES, o.sources());
        assertEquals(List.of(false, true), o.variants(), "plain, then checked");
        assertEquals(5, o.coldReps());
        assertEquals(10, o.warmReps());
        assertEquals(Path.of(System.getProperty("java.io.tmpdir")), o.cacheParent());
    }

    @Test
    void sourcesAreTakenInExampleOrderOnce() {
        assertEquals(List.of("01_load.cu", "10_overlap_styles.cu"),
                OPTIONS.parse("--sources", " 10_overlap_styles.cu, 01_load.cu,10_overlap_styles.cu").sources());
        assertEquals(ExampleSource.NAMES, OPTIONS.parse("--sources", "ALL").sources());
    }

    @Test
    void plainOnlyAndFolders() {
        JitOptions o = OPTIONS.valid("--plain-only", "--cache-parent", "/scratch/jit", "--out", "x/jit.json", "--cold-reps", "3",
                "--warm-reps", "4");
        assertEquals(List.of(false), o.variants());
        assertEquals(Path.of("/scratch/jit"), o.cacheParent());
        assertEquals(Path.of("x/jit.json"), o.out());
        assertEquals(3, o.coldReps());
        assertEquals(4, o.warmReps());
    }

    @Test
    void badOptionsAreNamed() {
        OPTIONS.rejects("--warm-reps must be >= 3, got 0", "--warm-reps", "0");
        OPTIONS.rejects("--sources: '09_cublas.cu' is not an example kernel source", "--sources", "01_load.cu,09_cublas.cu");
        OPTIONS.rejects("--sources names no source", "--sources", " , ");
    }
}
