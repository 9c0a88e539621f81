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
    void aStructPackedWithTooSmallAnAlignmentIsCaught() {
        // (int, CUtensorMap-like 128-byte struct aligned to 64): the struct starts at 64, not 8.
        ParameterLayout tma = new ParameterLayout(new int[] {0, 64}, new int[] {4, 128});
        try (KernelArgs a = new KernelArgs().putInt(7).putBytes(new byte[128], 8)) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> tma.check("gemm", a));
            assertTrue(e.getMessage().contains("kernel 'gemm', argument 1 (128 bytes): packed at byte 8 with 8-byte "
                    + "alignment, the kernel's parameter 1 is at byte 64"), e.getMessage());
        }
        try (KernelArgs a = new KernelArgs().putInt(7).putBytes(new byte[128], 64)) {
            tma.check("gemm", a);
        }
    }

    @Test
    void aTmaStructAfterTheContextIsToldToComeFirst() {
        // (iris::Ctx, iris_gemm_args) as the driver laid it out on an H200: the 64-byte aligned struct at 112.
        ParameterLayout gemm = new ParameterLayout(new int[] {0, 112}, new int[] {112, 320});
        try (KernelArgs a = new KernelArgs().putBytes(new byte[112], 8).putBytes(new byte[320], 64)) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> gemm.check("gemm_all_scatter", a));
            assertTrue(e.getMessage().contains("argument 1 (320 bytes): packed at byte 128 with 64-byte alignment, the kernel's "
                    + "parameter 1 is at byte 112 (parameters after the first are aligned to 16 bytes at most: make the "
                    + "argument that needs 64 the kernel's first parameter)"), e.getMessage());
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
