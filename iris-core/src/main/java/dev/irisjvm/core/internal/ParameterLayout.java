package dev.irisjvm.core.internal;

/**
 * A kernel's parameters as its compiler laid them out (the driver reports them: CUDA 12.4's
 * {@code cuKernelGetParamInfo}), and the check of packed arguments against them: the count and each
 * size. Not the offsets: a launch hands the driver one pointer per argument and the driver copies
 * each to its parameter's place, which counts from a base of its own (on an H200 it reported a
 * 64-byte aligned struct as parameter 0 at byte 48).
 *
 * <pre>{@code
 * ParameterLayout layout = new ParameterLayout(new int[] {0, 8}, new int[] {8, 4});   // (float*, int)
 * layout.check("my_kernel", new KernelArgs().putLong(address).putInt(n));               // passes
 * layout.check("my_kernel", new KernelArgs().putInt(n).putLong(address));               // throws
 * }</pre>
 */
public record ParameterLayout(int[] offsets, int[] sizes) {

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
     * both sizes at the first argument that does not fit its parameter.
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
