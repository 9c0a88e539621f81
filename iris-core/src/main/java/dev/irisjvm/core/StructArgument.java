package dev.irisjvm.core;

/**
 * A kernel parameter that is a struct passed by value, for {@link DeviceModule#launch}: its bytes as
 * the C compiler lays the struct out, and the alignment the kernel's parameter has, at which the
 * launch places it. Structs that hold a TMA descriptor are 64-byte aligned (iris/abi/tma.h), such
 * as {@code iris_gemm_args}, which {@code dev.irisjvm.kernels.gemm.GemmKernelArgs} fills.
 *
 * <pre>{@code
 * m.launch("my_gemm", args.launchShape(), iris.stream(), iris.deviceContext(), args);   // args: a StructArgument
 * }</pre>
 */
public interface StructArgument {
    /** The struct's bytes, every padding byte included (the launch copies them). */
    byte[] bytes();

    /** The parameter's alignment in bytes: a power of two. */
    int alignment();
}
