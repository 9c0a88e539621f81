package dev.irisjvm.bench.jit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.irisjvm.bench.jit.OverlapStyles.Plain;
import dev.irisjvm.bench.jit.OverlapStyles.Style;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The device-line counts from the markers: the rule on a made-up source, and bad markers. What the
 * committed sources mark (the paper's four styles, their kernels, shared sections and counts) is
 * jit.md's style table, which CommittedReportsTest renders from the sources and compares with the
 * committed report.
 */
class OverlapStylesTest {
    /**
     * Plain: 3 lines (include, Cfg, gemm). Shared: leaf (2 lines), uses_leaf (2, reaches leaf),
     * unused_by_a (1). Style a: 2 own lines in two sections, names uses_leaf → 2 + 2 + 2 = 6. Style
     * b: 2 own lines, names leaf and unused_by_a → 2 + 2 + 1 = 5.
     */
    static final String SOURCE = """
            // head comment
            #include <iris/gemm.cuh>
            using Cfg = int;

            // shared: leaf
            /// leaf's doc
            __device__ int leaf(int x) {
                return x; }
            // end shared

            // shared: uses_leaf
            __device__ int uses_leaf(int x) {
                return leaf(x) + 1; }  // a trailing comment
            // end shared

            // shared: unused_by_a
            __device__ int unused_by_a(int x) { return x; }
            // end shared

            extern "C" __global__ void gemm(int* c) { c[0] = 0; }

            // style: a
            extern "C" __global__ void a_kernel(int* c) { c[0] = uses_leaf(1); }
            // end style

            // style: b
            /* a block
               comment */
            extern "C" __global__ void b_kernel(int* c) { c[0] = leaf(2); }
            __device__ int b_helper() { return unused_by_a(3); }
            // end style

            // style: a
            __device__ int a_more() { return 4; }  // leaf is named only in this comment
            // end style
            """;

    @Test
    void aStyleAddsItsSectionsAndTheSharedOnesItReaches() {
        OverlapStyles s = OverlapStyles.of(List.of(new ExampleSource("99_styles.cu", SOURCE)));
        assertEquals(List.of(new Style("a", "99_styles.cu", List.of("a_kernel"), List.of("leaf", "uses_leaf"), 2, 6),
                new Style("b", "99_styles.cu", List.of("b_kernel"), List.of("leaf", "unused_by_a"), 2, 5)), s.styles());
        assertEquals(List.of(new Plain("99_styles.cu", 3)), s.plain());
    }

    @Test
    void sourcesWithoutMarkersCountForNothing() {
        OverlapStyles s = OverlapStyles.of(List.of(new ExampleSource("01_load.cu", "#include <x>\nint a;\n")));
        assertEquals(List.of(), s.styles());
        assertEquals(List.of(), s.plain());
    }

    @Test
    void badMarkersAreNamedWithFileAndLine() {
        bad("99_x.cu:2: `// shared: y` inside the style section opened on line 1", "// style: x\n// shared: y\n");
        bad("99_x.cu:1: the style section x is never closed", "// style: x\nint a;\n");
        bad("99_x.cu:1: `// end shared` closes no shared section", "// end shared\n");
        bad("99_x.cu:3: `// end shared` closes no shared section", "// style: x\nint a;\n// end shared\n");
        bad("the shared section y does not define y", "// shared: y\nint z;\n// end shared\n// style: x\nint a = y;\n// end style\n");
        bad("the shared section y is used by no style", "// shared: y\nint y;\n// end shared\n// style: x\nint a;\n// end style\n");
    }

    @Test
    void aStyleLivesInOneFile() {
        ExampleSource one = new ExampleSource("98_x.cu", "// style: x\nint a;\n// end style\n");
        ExampleSource two = new ExampleSource("99_x.cu", "// style: x\nint b;\n// end style\n");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> OverlapStyles.of(List.of(one, two)));
        assertTrue(e.getMessage().contains("99_x.cu: style x is marked in another file too"), e.getMessage());
    }

    private static void bad(String expected, String source) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> OverlapStyles.of(List.of(new ExampleSource("99_x.cu", source))));
        assertTrue(e.getMessage().contains(expected), () -> "'" + e.getMessage() + "' should say '" + expected + "'");
    }
}
