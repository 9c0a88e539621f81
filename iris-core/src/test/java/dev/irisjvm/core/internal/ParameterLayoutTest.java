package dev.irisjvm.core.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** The launch check against a kernel's parameters, with the parameter lists given directly. */
class ParameterLayoutTest {
    /** (const iris::Ctx ctx, float* buffer, uint64_t n, int flags): 112 + 8 + 8 + 4 bytes. */
    private static final ParameterLayout KERNEL = new ParameterLayout(new int[] {0, 112, 120, 128}, new int[] {112, 8, 8, 4});

    private static KernelArgs args() {
        return new KernelArgs().putBytes(new byte[112], 8).putLong(0x7f00_0000_0000L);
    }

    @Test
    void argumentsAsDeclaredPass() {
        try (KernelArgs a = args().putLong(4096).putInt(1)) {
            KERNEL.check("my_kernel", a);
        }
    }

    @Test
    void aWrongCountNamesBothCounts() {
        try (KernelArgs a = args().putLong(4096)) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> KERNEL.check("my_kernel", a));
            assertTrue(e.getMessage().contains("kernel 'my_kernel' takes 4 parameter(s)")
                    && e.getMessage().contains("the launch passes 3 argument(s)"), e.getMessage());
        }
    }

    @Test
    void anIntForAUint64NamesThePositionAndBothSizes() {
        try (KernelArgs a = args().putInt(4096).putInt(1)) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> KERNEL.check("my_kernel", a));
            assertTrue(e.getMessage().contains("kernel 'my_kernel', argument 2: the launch passes 4 byte(s), the kernel's "
                    + "parameter 2 has 8"), e.getMessage());
        }
    }

    @Test
    void offsetsAreTheDriversAndNotChecked() {
        // As an H200 reported them: (iris_gemm_args) with the struct at 48, (iris::Ctx, iris_gemm_args) with it at 112;
        // KernelArgs packs the struct at 0 and at 128. Each argument reaches the driver by its own pointer.
        ParameterLayout alone = new ParameterLayout(new int[] {48}, new int[] {320});
        ParameterLayout second = new ParameterLayout(new int[] {0, 112}, new int[] {112, 320});
        try (KernelArgs a = new KernelArgs().putBytes(new byte[320], 64);
             KernelArgs b = new KernelArgs().putBytes(new byte[112], 8).putBytes(new byte[320], 64)) {
            alone.check("gemm", a);
            second.check("gemm_all_scatter", b);
        }
    }

    @Test
    void aKernelWithoutParametersTakesNoArguments() {
        ParameterLayout none = new ParameterLayout(new int[0], new int[0]);
        try (KernelArgs a = new KernelArgs()) {
            none.check("tick", a);
            a.putInt(1);
            assertThrows(IllegalArgumentException.class, () -> none.check("tick", a));
        }
        assertEquals(0, none.count());
    }
}
