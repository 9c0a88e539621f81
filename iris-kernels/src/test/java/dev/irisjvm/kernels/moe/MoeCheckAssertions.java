package dev.irisjvm.kernels.moe;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.irisjvm.core.DType;
import dev.irisjvm.kernels.moe.MoeChecks.Operand;

/** What the tests of the MoE checks share: the operands they check, and how a refusal is asserted. */
final class MoeCheckAssertions {
    private MoeCheckAssertions() {}

    /** A live tensor argument of this heap, shown as "name(dtype)". */
    static Operand t(String name, DType dtype, long... shape) {
        return new Operand(name, dtype, shape, true, true, name + "(" + dtype + ")");
    }

    /** {@code call} throws an IllegalArgumentException whose message contains {@code fragment}. */
    static void assertMessage(String fragment, Runnable call) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, call::run);
        assertTrue(e.getMessage().contains(fragment), e.getMessage());
    }
}
