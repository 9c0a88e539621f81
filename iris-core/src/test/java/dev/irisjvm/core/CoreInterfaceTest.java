package dev.irisjvm.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.irisjvm.core.testing.CubinSymbols;
import dev.irisjvm.runtime.abi.global.KernelAbi;
import dev.irisjvm.runtime.abi.iris_barrier_args;
import dev.irisjvm.runtime.abi.iris_fill_args;
import dev.irisjvm.runtime.abi.iris_tile_args;
import dev.irisjvm.runtime.global.IrisRuntime;
import java.io.IOException;
import java.io.InputStream;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The host API's side of iris/abi/core.h: every kernel CoreKernels looks up is in iris-native's
 * fatbins (and their checked variants) for every architecture, and each call fills the fields its
 * kernel reads. Runs without a GPU (the generated structs are host memory).
 */
class CoreInterfaceTest {

    @Test
    void everyKernelCoreKernelsLooksUpIsCompiledForEveryArchitecture() throws IOException {
        for (var module : CoreKernels.kernelNames().entrySet()) {
            List<String> files = module.getKey().equals(CoreKernels.FILL_MODULE)
                    ? List.of(module.getKey() + ".fatbin")
                    : List.of(module.getKey() + ".fatbin", module.getKey() + ".checked.fatbin");
            for (String file : files) {
                try (InputStream in = IrisRuntime.class.getResourceAsStream("/dev/irisjvm/runtime/kernels/" + file)) {
                    assertNotNull(in, file + " is not on the class path");
                    List<Set<String>> images = CubinSymbols.perImage(in.readAllBytes());
                    assertFalse(images.isEmpty(), file + " holds no cubin");
                    for (Set<String> image : images) {
                        assertTrue(image.containsAll(module.getValue()), file + " lacks one of " + module.getValue() + ": " + image);
                    }
                }
            }
        }
        assertEquals(4 + 6, CoreKernels.kernelNames().get(CoreKernels.TILE_OPS_MODULE).size(),
                "a copy per element width, an atomic add per type but U8");
    }

    @Test
    void callsFillTheFieldsTheirKernelsRead() {
        DeviceContext ctx = new DeviceContext(1, 2, 1L << 20, 7, 0, 0, 0, new long[] {0x1000_0000L, 0x2000_0000L});
        try (CoreArgs args = new CoreArgs()) {
            iris_tile_args t = args.tile(ctx.bytes(), 0x1000_0100L, 64, 0, 0x1000_0200L, 32, 1, 5, 6);
            assertEquals(0x1000_0100L, t.dst().address());
            assertEquals(64, t.ld_dst());
            assertEquals(0, t.dst_rank());
            assertEquals(0x1000_0200L, t.src().address());
            assertEquals(32, t.ld_src());
            assertEquals(1, t.src_rank());
            assertEquals(5, t.rows());
            assertEquals(6, t.cols());
            assertEquals(1, t.ctx().rank());
            assertEquals(2, t.ctx().world());
            assertEquals(0x2000_0000L, t.ctx().bases(1));

            iris_fill_args f = args.fill(0x3000, 100, 0xABCDL);
            assertEquals(0x3000, f.dst().address());
            assertEquals(100, f.n());
            assertEquals(0xABCDL, f.pattern());

            f = args.arange(0x4000, 10, DType.BF16, 2.5, -0.5);
            assertEquals(0x4000, f.dst().address());
            assertEquals(KernelAbi.IRIS_DTYPE_BF16, f.dtype());
            assertEquals(2.5, f.a());
            assertEquals(-0.5, f.b());

            f = args.random(0x5000, 11, DType.I64, KernelAbi.IRIS_DISTRIBUTION_INTEGER, -3, 9, 42);
            assertEquals(11, f.n());
            assertEquals(KernelAbi.IRIS_DTYPE_I64, f.dtype());
            assertEquals(KernelAbi.IRIS_DISTRIBUTION_INTEGER, f.distribution());
            assertEquals(-3, f.a());
            assertEquals(9, f.b());
            assertEquals(42, f.seed());

            iris_barrier_args b = args.barrier(ctx.bytes(), CoreKernels.SITE_BARRIER);
            assertEquals(KernelAbi.IRIS_CORE_SITE_BARRIER, b.site());
            assertEquals(1, b.ctx().rank());
        }
    }
}
