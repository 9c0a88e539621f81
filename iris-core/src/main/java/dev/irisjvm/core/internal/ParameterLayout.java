package dev.irisjvm.core.internal;

/**
 * A kernel's parameters as its compiler laid them out (the driver reports them: CUDA 12.4's
 * {@code cuKernelGetParamInfo}), and the check of packed arguments against them. Parameters are laid
 * out in order, each at its natural alignment, exactly as {@link KernelArgs} packs; so an argument
 * of the right size at another offset was packed with another alignment than the parameter's.
 *
 * <pre>{@code
 * ParameterLayout layout = new ParameterLayout(new int[] {0, 8}, new int[] {8, 4});   // (float*, int)
 * layout.check("my_kernel", new KernelArgs().putLong(address).putInt(n));               // passes
 * layout.check("my_kernel", new KernelArgs().putInt(n).putLong(address));               // throws
 * }</pre>
 */
public record ParameterLayout(int[] offsets, int[] sizes) {
    /**
     * The largest alignment a parameter after the first gets: an iris_gemm_args (64-byte aligned for
     * its TMA descriptors) after the 112-byte iris_ctx was laid out at byte 112 on an H200 (CUDA 13).
     */
    static final int MAX_PARAMETER_ALIGNMENT = 16;

    public ParameterLayout {
        if (offsets.length != sizes.length) {
            throw new IllegalArgumentException(offsets.length + " offsets for " + sizes.length + " sizes");
        }
    }

    public int count() {
        return sizes.length;
    }

    /**
     * Throws {@link IllegalArgumentException} naming the kernel, the argument's position (from 0) and
     * both sizes (or offsets) at the first argument that does not fit its parameter.
     */
    public void check(String kernel, KernelArgs args) {
        if (args.count() != count()) {
            throw new IllegalArgumentException(NativeCalls.rankLabel() + ": kernel '" + kernel + "' takes " + count()
                    + " parameter(s) " + describe() + ", the launch passes " + args.count() + " argument(s)");
        }
        for (int i = 0; i < count(); i++) {
            if (args.size(i) != sizes[i]) {
                throw new IllegalArgumentException(NativeCalls.rankLabel() + ": kernel '" + kernel + "', argument " + i
                        + ": the launch passes " + args.size(i) + " byte(s), the kernel's parameter " + i + " has "
                        + sizes[i] + " (parameters " + describe() + ")");
            }
            if (args.offset(i) != offsets[i]) {
                throw new IllegalArgumentException(NativeCalls.rankLabel() + ": kernel '" + kernel + "', argument " + i
                        + " (" + sizes[i] + " bytes): packed at byte " + args.offset(i) + " with " + args.alignment(i)
                        + "-byte alignment, the kernel's parameter " + i + " is at byte " + offsets[i]
                        + (args.alignment(i) > MAX_PARAMETER_ALIGNMENT
                                ? " (parameters after the first are aligned to " + MAX_PARAMETER_ALIGNMENT
                                        + " bytes at most: make the argument that needs " + args.alignment(i)
                                        + " the kernel's first parameter)"
                                : " (the argument's alignment is not the parameter's)"));
            }
        }
    }

    /** "[0: 112 bytes at 0, 1: 8 bytes at 112]". */
    private String describe() {
        StringBuilder b = new StringBuilder("[");
        for (int i = 0; i < count(); i++) {
            b.append(i == 0 ? "" : ", ").append(i).append(": ").append(sizes[i]).append(" bytes at ").append(offsets[i]);
        }
        return b.append(']').toString();
    }
}
