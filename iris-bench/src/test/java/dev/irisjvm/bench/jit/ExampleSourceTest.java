package dev.irisjvm.bench.jit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The example kernel sources as the benchmark finds them: every one, its example, its kernels. The
 * sources' own kernels are not listed here: ExampleKernelsCompileTest (iris-examples) checks them
 * against what NVRTC compiles, and jit.md's style table, which CommittedReportsTest renders from the
 * sources, names the kernels of every style.
 */
class ExampleSourceTest {
    /** Where iris-examples keeps the sources, from iris-bench's folder (the tests' working directory). */
    private static final Path FOLDER = Path.of("../iris-examples/src/main/resources", ExampleSource.FOLDER);

    /** File names only: a source added to iris-examples but not to NAMES would be left out of jit.md. */
    @Test
    void theListHoldsEveryCommittedSourceInExampleOrder() throws IOException {
        try (Stream<Path> files = Files.list(FOLDER)) {
            List<String> onDisk = files.map(p -> p.getFileName().toString()).filter(n -> n.endsWith(".cu")).sorted().toList();
            assertEquals(onDisk, ExampleSource.NAMES, "a new example's kernel source belongs in ExampleSource.NAMES");
        }
    }

    @Test
    void eachSourceIsOnTheClassPathAndNamesAnExampleThatExists() throws Exception {
        assertEquals("Example03GetPutCopy", new ExampleSource("03_get_put_copy.cu", "").example());
        for (String name : ExampleSource.NAMES) {
            assertNotNull(ExampleSource.class.getClassLoader().getResource(ExampleSource.FOLDER + name), name);
            Class.forName("dev.irisjvm.examples." + new ExampleSource(name, "").example());
        }
    }

    /** The forms the examples declare kernels in: launch bounds before the name or on the line above, parameters over lines. */
    @Test
    void kernelsAreTheExternCGlobalsOutsideComments() {
        assertEquals(List.of("live", "gemm", "scatter_when_counted"), new ExampleSource("99_x.cu", """
                // extern "C" __global__ void commented_out(int* x) {}
                extern "C" __global__ void __launch_bounds__(256, 1)
                    live(int* x) {}
                __device__ void helper(int* x) {}
                /* extern "C" __global__ void in_a_block_comment(int* x) {} */
                extern "C" __global__ void __launch_bounds__(IRIS_GEMM_THREADS, 1) gemm(const IRIS_GRID_CONSTANT iris_gemm_args args) {
                }
                extern "C" __global__ void scatter_when_counted(const IRIS_GRID_CONSTANT iris::Ctx ctx,
                                                                uint64_t* flags) {}
                """).kernels());
    }

    @Test
    void linesCountEveryLineAndCodeLinesOnlyCode() {
        ExampleSource s = new ExampleSource("99_x.cu", "// head\n#include <x>\n\nint a;\n");
        assertEquals(4, s.lines());
        assertEquals(2, s.codeLines());
    }

    @Test
    void aNameThatIsNoExampleSourceIsRefused() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> new ExampleSource("load.cu", ""));
        assertTrue(e.getMessage().contains("NN_words.cu"), e.getMessage());
    }
}
