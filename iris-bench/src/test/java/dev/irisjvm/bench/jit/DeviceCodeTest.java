package dev.irisjvm.bench.jit;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import org.junit.jupiter.api.Test;

/** The comment stripping under the device-line counts: line comments, block comments, literals. */
class DeviceCodeTest {
    @Test
    void commentOnlyAndBlankLinesAreNoCode() {
        DeviceCode c = DeviceCode.of("""
                // a comment
                #include <iris/iris.cuh>

                    /// a doc comment
                __global__ void k() {}  // trailing
                """);
        assertEquals(List.of("", "#include <iris/iris.cuh>", "", "    ", "__global__ void k() {}  "), c.lines());
        assertEquals(2, c.codeLines(), "the preprocessor line and the kernel");
    }

    @Test
    void blockCommentsSpanLinesAndHideInsideOne() {
        DeviceCode c = DeviceCode.of("a(/*site=*/1001);\n/* one\n   two */ b();\n/* only\n a comment */\nc();");
        assertEquals(List.of("a(1001);", "", " b();", "", "", "c();"), c.lines());
        assertEquals(3, c.codeLines());
    }

    @Test
    void commentMarkersInLiteralsAreText() {
        DeviceCode c = DeviceCode.of("const char* s = \"// not \\\" /* a comment\"; char q = '/'; // comment");
        assertEquals(List.of("const char* s = \"// not \\\" /* a comment\"; char q = '/'; "), c.lines());
    }

    @Test
    void aFinalNewlineEndsTheLastLineAndStartsNone() {
        assertEquals(2, DeviceCode.of("a;\nb;\n").lines().size());
        assertEquals(3, DeviceCode.of("a;\nb;\n\n").lines().size());
        assertEquals(2, DeviceCode.of("a;\nb;").lines().size());
    }
}
