package dev.irisjvm.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.irisjvm.core.CompiledModule;
import dev.irisjvm.core.KernelCompileException;
import dev.irisjvm.core.KernelCompiler;
import dev.irisjvm.core.testing.CubinSymbols;
import dev.irisjvm.core.testing.TestNvrtc;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every example's kernel source compiles for sm_90a, plain and checked, and holds the kernels its
 * example launches: a broken example fails the build on a machine without a GPU.
 */
class ExampleKernelsCompileTest {
    /** Each source and the kernels its example class looks up. */
    static final Map<String, Set<String>> KERNELS = Map.of(
            "01_load.cu", Set.of("load_from_peer"),
            "02_store.cu", Set.of("store_to_peer"),
            "03_get_put_copy.cu", Set.of("get_put_copy"),
            "04_atomics.cu", Set.of("atomics"),
            "05_message_passing.cu", Set.of("producer", "consumer"),
            "06_all_reduce.cu", Set.of("all_reduce_sum"),
            "07_checked_mode.cu", Set.of("out_of_heap"),
            "08_gemm_all_scatter.cu", Set.of("gemm_all_scatter"),
            "10_overlap_styles.cu", Set.of("gemm", "scatter", "gemm_counting", "scatter_when_counted", "gemm_and_scatter"),
            "11_training_step.cu", Set.of("silu_forward", "silu_backward", "mse_loss", "zero_grad", "cast_to_bf16", "sgd_update"));

    @TempDir
    static Path cache;

    @BeforeAll
    static void nvrtc() {
        TestNvrtc.use();
    }

    static List<String> sources() {
        return KERNELS.keySet().stream().sorted().toList();
    }

    @ParameterizedTest
    @MethodSource("sources")
    void compilesForHopperPlainAndChecked(String source) {
        for (boolean checked : new boolean[] {false, true}) {
            CompiledModule m = KernelCompiler.forArchitecture("sm_90a").checked(checked).withCacheDirectory(cache)
                    .compileResource(ExampleKernelsCompileTest.class, source);
            Set<String> symbols = CubinSymbols.globalFunctions(m.image());
            assertTrue(symbols.containsAll(KERNELS.get(source)), source + (checked ? " (checked)" : "") + ": " + symbols);
            assertEquals("", m.log(), source + ": the compiler warned");
        }
    }

    /** The GPU test's launch-check kernels compile cleanly, and its broken variant fails on the line it names. */
    @Test
    void theLaunchCheckKernelsCompileAndTheBrokenVariantNamesItsLine() {
        KernelCompiler compiler = KernelCompiler.forArchitecture("sm_90a").withCacheDirectory(cache);
        CompiledModule m = compiler.compile("launch_checks.cu", KernelLaunchScenarios.SOURCE);
        assertTrue(CubinSymbols.globalFunctions(m.image()).containsAll(Set.of("copy_prefix", "takes_float4")),
                CubinSymbols.globalFunctions(m.image()).toString());
        assertEquals("", m.log(), "the compiler warned");
        String broken = KernelLaunchScenarios.SOURCE.replace("out[i] = in[i]", "out[i] = undeclared_thing + in[i]");
        KernelCompileException e = assertThrows(KernelCompileException.class, () -> compiler.compile("broken.cu", broken));
        assertTrue(e.log().contains("broken.cu(" + KernelLaunchScenarios.BROKEN_LINE + ")"), e.log());
    }
}
