package dev.irisjvm.core.internal;

import dev.irisjvm.core.gpu.LaunchShape;
import dev.irisjvm.core.gpu.Stream;
import dev.irisjvm.runtime.global.IrisRuntime;
import dev.irisjvm.runtime.iris_function_s;
import org.bytedeco.javacpp.IntPointer;
import org.bytedeco.javacpp.Pointer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One kernel of a {@link KernelModule}. Launches are asynchronous on the given stream; argument
 * and launch errors come back as exceptions naming the kernel. Packed arguments are checked
 * against the kernel's parameters first ({@link ParameterLayout}), where the driver reports them
 * (CUDA 12.4 or newer; not HIP).
 */
public final class Kernel {
    private static final Logger LOG = LoggerFactory.getLogger(Kernel.class);
    private static final ThreadLocal<KernelArgs> SCRATCH = ThreadLocal.withInitial(KernelArgs::new);
    /** The argument offsets of a kernel whose one parameter is a struct: the struct starts at 0. */
    private static final IntPointer ONE_STRUCT = new IntPointer(1).put(0);

    private final KernelModule module;
    private final iris_function_s handle;
    private final String name;
    /** The kernel's parameters, asked once; {@link #NO_LAYOUT} where the driver cannot say. */
    private volatile ParameterLayout layout;
    private static final ParameterLayout NO_LAYOUT = new ParameterLayout(new int[0], new int[0]);

    Kernel(KernelModule module, iris_function_s handle, String name) {
        this.module = module;
        this.handle = handle;
        this.name = name;
    }

    public String name() {
        return name;
    }

    /** Launches with arguments packed in {@code args}. */
    public void launch(LaunchShape shape, Stream stream, KernelArgs args) {
        launch(shape, stream, args, false);
    }

    /**
     * Launches with arguments packed in {@code args}. With {@code overlapPrevious} the kernel may
     * start before the kernel ahead of it on the stream has finished, once every block of that one
     * has executed {@code griddepcontrol.launch_dependents} (programmatic dependent launch; HIP
     * ignores it): only for kernels that execute {@code griddepcontrol.wait} before they touch
     * memory that kernel writes (or read it only after a flag it raises for them) and before they
     * finish (IRIS_LAUNCH_OVERLAP_PREVIOUS in iris_runtime.h).
     */
    public void launch(LaunchShape shape, Stream stream, KernelArgs args, boolean overlapPrevious) {
        module.requireOpen();
        ParameterLayout parameters = parameters();
        if (parameters != NO_LAYOUT) {
            parameters.check(name, args);
        }
        launch(shape, stream, args.buffer(), args.offsets(), args.count(), overlapPrevious);
    }

    /**
     * Launches a kernel whose one parameter is an argument struct (a generated class of
     * {@code iris/abi/*.h}, e.g. {@code iris_ccl_args}), passed by value: the launch copies it, so the
     * caller may refill it at once. {@code overlapPrevious} as above.
     */
    public void launch(LaunchShape shape, Stream stream, Pointer argumentStruct, boolean overlapPrevious) {
        module.requireOpen();
        launch(shape, stream, argumentStruct, ONE_STRUCT, 1, overlapPrevious);
    }

    /** The launch itself; the callers have checked that the module is open. */
    private void launch(LaunchShape shape, Stream stream, Pointer buffer, IntPointer offsets, int count, boolean overlapPrevious) {
        int status = IrisRuntime.iris_launch_ex(handle, shape.gridX(), shape.gridY(), shape.gridZ(),
                shape.blockX(), shape.blockY(), shape.blockZ(), shape.sharedBytes(), StreamHandles.of(stream),
                buffer, offsets, count, overlapPrevious ? IrisRuntime.IRIS_LAUNCH_OVERLAP_PREVIOUS : 0);
        if (status != IrisRuntime.IRIS_SUCCESS) {
            throw NativeCalls.failure(status, "iris_launch(" + name + ")");
        }
    }

    /** Launches with boxed arguments (see {@link KernelArgs#putAll}); convenient off the hot path. */
    public void launch(LaunchShape shape, Stream stream, Object... args) {
        KernelArgs scratch = SCRATCH.get();
        launch(shape, stream, scratch.clear().putAll(args));
    }

    /**
     * The kernel's parameters as the driver reports them, asked at the first launch and kept; the
     * empty {@link #NO_LAYOUT} where it cannot (IRIS_ERROR_UNSUPPORTED: an older driver, or HIP;
     * any other failure of the query is logged once and not checked against either).
     */
    private ParameterLayout parameters() {
        ParameterLayout known = layout;
        if (known != null) {
            return known;
        }
        try (IntPointer count = new IntPointer(1); IntPointer offsets = new IntPointer(KernelArgs.MAX_ARGS);
                IntPointer sizes = new IntPointer(KernelArgs.MAX_ARGS)) {
            int status = IrisRuntime.iris_function_param_info(handle, count, offsets, sizes, KernelArgs.MAX_ARGS);
            if (status == IrisRuntime.IRIS_ERROR_UNSUPPORTED) {
                known = NO_LAYOUT;
            } else if (status != IrisRuntime.IRIS_SUCCESS) {
                // The check is an aid: a driver that cannot answer must not stop the launch itself.
                LOG.warn("kernel {}: its parameters are not checked before launches: {}", name,
                        NativeCalls.failure(status, "iris_function_param_info(" + name + ")").getMessage());
                known = NO_LAYOUT;
            } else {
                int[] o = new int[count.get()];
                int[] z = new int[count.get()];
                offsets.get(o);
                sizes.get(z);
                known = new ParameterLayout(o, z);
            }
        }
        layout = known;
        return known;
    }

    /** Allows more than 48 KiB of dynamic shared memory per block. */
    public void setMaxDynamicSharedBytes(int bytes) {
        module.requireOpen();
        NativeCalls.check(IrisRuntime.iris_function_set_max_dynamic_shared_memory(handle, bytes),
                "iris_function_set_max_dynamic_shared_memory(" + name + ")");
    }

    /** Asks for the largest shared memory carveout, so that as many blocks share an SM as their shared memory allows. */
    public void preferSharedMemory() {
        module.requireOpen();
        NativeCalls.check(IrisRuntime.iris_function_prefer_shared_memory(handle), "iris_function_prefer_shared_memory(" + name + ")");
    }

    /** Blocks of {@code threads} threads and {@code dynamicSharedBytes} of dynamic shared memory that one SM runs at once. */
    public int maxActiveBlocksPerMultiprocessor(int threads, int dynamicSharedBytes) {
        module.requireOpen();
        try (IntPointer blocks = new IntPointer(1)) {
            NativeCalls.check(IrisRuntime.iris_function_max_active_blocks(handle, threads, dynamicSharedBytes, blocks),
                    "iris_function_max_active_blocks(" + name + ", " + threads + " threads, " + dynamicSharedBytes + " bytes)");
            return blocks.get();
        }
    }

    /** Compiler facts about the kernel: registers, static shared memory, spill bytes, block limit. */
    public record Attributes(int registers, int staticSharedBytes, int localBytes, int maxThreadsPerBlock) {}

    public Attributes attributes() {
        module.requireOpen();
        try (IntPointer regs = new IntPointer(1); IntPointer smem = new IntPointer(1);
                IntPointer local = new IntPointer(1); IntPointer maxThreads = new IntPointer(1)) {
            NativeCalls.check(IrisRuntime.iris_function_attributes(handle, regs, smem, local, maxThreads),
                    "iris_function_attributes(" + name + ")");
            return new Attributes(regs.get(), smem.get(), local.get(), maxThreads.get());
        }
    }
}
