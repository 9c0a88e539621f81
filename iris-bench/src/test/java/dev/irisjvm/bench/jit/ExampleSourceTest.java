package dev.irisjvm.bench.jit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/** The example kernel sources as the benchmark finds them: every one, its example, its kernels. */
class ExampleSourceTest {
    @Test
    void theListHoldsEveryCommittedSourceInExampleOrder() throws IOException {
        try (Stream<Path> files = Files.list(ExampleSourcesOnDisk.FOLDER)) {
            List<String> onDisk = files.map(p -> p.getFileName().toString()).filter(n -> n.endsWith(".cu")).sorted().toList();
            assertEquals(onDisk, ExampleSource.NAMES, "a new example's kernel source belongs in ExampleSource.NAMES");
        }
    }

    @Test
    void theClassPathHoldsTheCommittedText() {
        for (ExampleSource s : ExampleSourcesOnDisk.read()) {
            assertEquals(s.text(), ExampleSource.onClassPath(s.name()).text(), s.name());
        }
    }

    @Test
    void eachSourceNamesAnExampleThatExists() throws Exception {
        assertEquals("Example03GetPutCopy", new ExampleSource("03_get_put_copy.cu", "").example());
        for (String name : ExampleSource.NAMES) {
            Class.forName("dev.irisjvm.examples." + ExampleSource.onClassPath(name).example());
        }
    }

    @Test
    void kernelsAreTheExternCGlobalsOutsideComments() {
        assertEquals(List.of("gemm", "scatter", "gemm_counting", "scatter_when_counted", "gemm_and_scatter"),
                ExampleSource.onClassPath("10_overlap_styles.cu").kernels());
        assertEquals(List.of("gemm_all_scatter"), ExampleSource.onClassPath("08_gemm_all_scatter.cu").kernels());
        assertEquals(List.of("producer", "consumer"), ExampleSource.onClassPath("05_message_passing.cu").kernels());
        assertEquals(List.of("live"), new ExampleSource("99_x.cu", """
                // extern "C" __global__ void commented_out(int* x) {}
                extern "C" __global__ void __launch_bounds__(256, 1)
                    live(int* x) {}
                __device__ void helper(int* x) {}
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
