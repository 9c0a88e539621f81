package dev.irisjvm.runtime.presets;

import org.bytedeco.javacpp.annotation.Platform;
import org.bytedeco.javacpp.annotation.Properties;
import org.bytedeco.javacpp.tools.Info;
import org.bytedeco.javacpp.tools.InfoMap;
import org.bytedeco.javacpp.tools.InfoMapper;

/**
 * JavaCPP configuration for the kernel interface headers ({@code iris/abi/*.h}): each kernel
 * family declares its argument struct, constants and wait sites there once; the build parses them
 * into {@code dev.irisjvm.runtime.abi} (the structs, whose accessors and {@code sizeof} are
 * compiled against the same declaration the device code includes) and
 * {@code dev.irisjvm.runtime.abi.global.KernelAbi} (the constants). Private plumbing, as the
 * runtime binding is.
 */
@Properties(
        value = @Platform(include = {"iris/abi/ctx.h", "iris/abi/core.h", "iris/abi/tma.h", "iris/abi/ccl.h", "iris/abi/gemm.h", "iris/abi/gemm_portable.h",
                "iris/abi/fused.h",
                "iris/abi/attention.h", "iris/abi/flash_decode.h", "iris/abi/moe.h", "iris/abi/rma_bench.h"}),
        target = "dev.irisjvm.runtime.abi",
        global = "dev.irisjvm.runtime.abi.global.KernelAbi")
public class KernelAbiConfig implements InfoMapper {
    @Override
    public void map(InfoMap infoMap) {
        infoMap.put(new Info("IRIS_ABI_CTX_H", "IRIS_ABI_CORE_H", "IRIS_ABI_TMA_H", "IRIS_ABI_CCL_H", "IRIS_ABI_GEMM_H", "IRIS_ABI_GEMM_PORTABLE_H",
                "IRIS_ABI_FUSED_H",
                "IRIS_ABI_ATTENTION_H", "IRIS_ABI_FLASH_DECODE_H", "IRIS_ABI_MOE_H", "IRIS_ABI_RMA_BENCH_H").cppTypes().annotations());
        // Alignment is the C compiler's business: the JNI build computes the offsets Java uses.
        infoMap.put(new Info("IRIS_ABI_ALIGNED").cppText("#define IRIS_ABI_ALIGNED(n)"));
        // The layout checks are for the compilers; Java reads sizes from the generated classes.
        infoMap.put(new Info("__cplusplus").define(false));
    }
}
