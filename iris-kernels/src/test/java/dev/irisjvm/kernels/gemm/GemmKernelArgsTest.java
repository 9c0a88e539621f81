package dev.irisjvm.kernels.gemm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.irisjvm.core.DType;
import dev.irisjvm.core.internal.AbiLayout;
import dev.irisjvm.core.gpu.LaunchShape;
import dev.irisjvm.runtime.abi.iris_gemm_args;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import org.junit.jupiter.api.Test;

/**
 * The argument of users' GEMM kernels (iris/gemm.cuh) without a GPU: its bytes are the struct the
 * kernel reads, at the offsets the compiler gives it, and the launch fits the tile width asked for.
 * Encoding the TMA descriptors needs the driver; the GPU examples cover it (Example08GemmAllScatter).
 */
class GemmKernelArgsTest {
    /** 333 x 264 x 200 into a column block of a 528-column C: 3 x 2 tiles of 128 x 256. */
    private static final GemmProblem PROBLEM = new GemmProblem(new DeviceMatrix(0x1000_0000L, DType.BF16, 333, 200, 200),
            new DeviceMatrix(0x2000_0000L, DType.BF16, 264, 200, 200), GemmLayout.NK, 0,
            new DeviceMatrix(0x3000_0210L, DType.BF16, 333, 264, 528));

    @Test
    void theBytesAreTheStructTheKernelReads() {
        try (GemmArgs args = new GemmArgs()) {
            byte[] bytes = GemmKernelArgs.bytesOf(args.operands(0x3000_0210L, 0x4000_0000L, 333, 264, 200, 528, 8, 0.25f, 3f));
            assertEquals(AbiLayout.size(iris_gemm_args.class), bytes.length);
            assertEquals(448, bytes.length, "iris/abi/gemm.h pins the layout");
            ByteBuffer b = ByteBuffer.wrap(bytes).order(ByteOrder.nativeOrder());
            assertEquals(0x3000_0210L, b.getLong(offset("c")));
            assertEquals(0x4000_0000L, b.getLong(offset("bias")));
            assertEquals(333, b.getInt(offset("m")));
            assertEquals(264, b.getInt(offset("n")));
            assertEquals(200, b.getInt(offset("k")));
            assertEquals(528, b.getInt(offset("ldc")));
            assertEquals(8, b.getInt(offset("group_m")));
            assertEquals(0.25f, b.getFloat(offset("alpha")));
            assertEquals(3f, b.getFloat(offset("beta")));
            assertEquals(292, offset("alpha"), "iris/abi/gemm.h pins the layout");
            assertEquals(296, offset("beta"));
            assertEquals(320, offset("c_map"), "C's tensor map after the members older kernels read, 64-byte aligned");
        }
    }

    @Test
    void theLaunchIsOneBlockPerTileUpToTheSmsWithTheSharedMemoryOfTheFamily() {
        GemmKernelArgs args = new GemmKernelArgs(PROBLEM, 8, Gemm.TILE_N, new byte[GemmKernelArgs.BYTES]);
        assertEquals(6, args.tiles());
        LaunchShape shape = args.launchShape(132);
        assertEquals(6, shape.gridX());
        assertEquals(Gemm.THREADS, shape.blockX());
        assertEquals(Gemm.SHARED_BYTES, shape.sharedBytes());
        assertEquals(4, args.launchShape(4).gridX(), "persistent: at most one block per SM");
        assertEquals(9, new GemmKernelArgs(PROBLEM, 8, Gemm.NARROW_TILE_N, new byte[0]).tiles(), "3 x 3 tiles of 128 x 128");
        assertEquals(6, new GemmKernelArgs(PROBLEM, 8, Gemm.MID_TILE_N, new byte[0]).tiles(), "3 x 2 tiles of 128 x 192");
        assertEquals(64, args.alignment());
        assertThrows(IllegalArgumentException.class, () -> args.launchShape(0));
    }

    @Test
    void aBadGroupOrTileWidthIsRefusedBeforeAnythingIsEncoded() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> GemmKernelArgs.of(PROBLEM, 0, Gemm.TILE_N));
        assertTrue(e.getMessage().contains("groupM"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> GemmKernelArgs.of(PROBLEM, 8, 100));
        assertTrue(e.getMessage().contains("tile width 100"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> GemmKernelArgs.of(null));
    }

    private static int offset(String member) {
        return AbiLayout.offset(iris_gemm_args.class, member);
    }
}
