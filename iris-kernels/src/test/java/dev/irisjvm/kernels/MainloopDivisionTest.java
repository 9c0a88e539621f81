package dev.irisjvm.kernels;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * No kernel of a module that runs the Hopper mainloop divides 64-bit integers, read from the PTX
 * each module ships. ptxas calls a subroutine for such a division, whose result it cannot know to be
 * the same in every thread: StreamKScheduler's start and owner had one, the K loops' counts came
 * back in per-thread registers with the stage ring, and whole 64 x 128 tiles ran 10 to 16 % slower,
 * 128 x 128 ones 3 % (GemmPlanTimes, 0bf1d41 against cf0492f), until they were written in 32 bits.
 * The collectives, which move memory and run no mainloop, are not held to it.
 */
class MainloopDivisionTest {
    private static final Pattern WIDE_DIVISION = Pattern.compile("\\b(div|rem)\\.[su]64\\b");

    @ParameterizedTest
    @ValueSource(strings = {"gemm", "gemm_all_scatter", "gemm_reduce", "all_gather_gemm", "moe_expert_gemm", "attention"})
    void noKernelDividesSixtyFourBitIntegers(String module) {
        Map<String, String> functions = FatbinKernels.ptxFunctions(module);
        assertFalse(functions.isEmpty(), module + " ships no PTX");
        List<String> dividing = functions.entrySet().stream()
                .filter(f -> WIDE_DIVISION.matcher(f.getValue()).find())
                .map(Map.Entry::getKey)
                .toList();
        assertTrue(dividing.isEmpty(), () -> module + ": " + dividing.size() + " functions divide 64-bit integers, " + dividing.get(0) + " first");
    }
}
