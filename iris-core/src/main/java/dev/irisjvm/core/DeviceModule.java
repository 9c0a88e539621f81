package dev.irisjvm.core;

import dev.irisjvm.core.gpu.LaunchShape;
import dev.irisjvm.core.gpu.Stream;
import dev.irisjvm.core.internal.KernelArgs;
import dev.irisjvm.core.internal.KernelModule;

/**
 * Device code of your own, loaded into the current GPU: a cubin from {@link KernelCompiler}, or a
 * fatbin or cubin compiled ahead of time with nvcc against the shipped headers
 * ({@link KernelCompiler#headersDirectory()}, {@link KernelCompiler#nvccOptions()}). Launches are
 * stream-ordered and checked against the kernel's parameters where the driver reports them (CUDA
 * 12.4 or newer): a wrong count or size raises {@link IllegalArgumentException} naming
 * the kernel and the argument. Close it to unload (safe twice).
 *
 * <pre>{@code
 * try (DeviceModule m = KernelCompiler.forIris(iris).compile("mine.cu", source).load()) {
 *     m.launch("my_kernel", LaunchShape.of(1, 512), iris.stream(), iris.deviceContext(), a, a.numel());
 * }
 * }</pre>
 */
public final class DeviceModule implements AutoCloseable {
    private final KernelModule module;

    private DeviceModule(KernelModule module) {
        this.module = module;
    }

    /** Loads compiled device code (CUDA: fatbin, cubin or PTX; HIP: a code object) into the current device. */
    public static DeviceModule load(byte[] image, String name) {
        return new DeviceModule(KernelModule.load(image, name));
    }

    /**
     * Launches the {@code extern "C"} kernel {@code kernel}. Arguments by position: a
     * {@link DeviceContext} passes the context struct ({@code iris::Ctx}), a {@link SymTensor} its
     * device address (a pointer on this rank), an {@code Integer} an {@code int32_t}, a {@code Long}
     * an {@code int64_t} or {@code uint64_t}, {@code Float}, {@code Double}, {@code Short},
     * {@code Byte} their C types, a {@code byte[]} a struct of 8-byte alignment, and a
     * {@link StructArgument} a struct at its own alignment (such as {@code iris_gemm_args}, 64).
     */
    public void launch(String kernel, LaunchShape shape, Stream stream, Object... args) {
        try (KernelArgs packed = new KernelArgs()) {
            for (Object a : args) {
                if (a instanceof DeviceContext ctx) {
                    packed.putBytes(ctx.bytes(), DeviceContext.ALIGNMENT);
                } else if (a instanceof SymTensor t) {
                    packed.putLong(t.deviceAddress());
                } else if (a instanceof StructArgument struct) {
                    packed.putBytes(struct.bytes(), struct.alignment());
                } else {
                    packed.putAll(a);
                }
            }
            module.kernel(kernel).launch(shape, stream, packed);
        }
    }

    /** Allows a kernel more than 48 KiB of dynamic shared memory per block. */
    public void setMaxDynamicSharedBytes(String kernel, int bytes) {
        module.kernel(kernel).setMaxDynamicSharedBytes(bytes);
    }

    public String name() {
        return module.name();
    }

    @Override
    public void close() {
        module.close();
    }
}
