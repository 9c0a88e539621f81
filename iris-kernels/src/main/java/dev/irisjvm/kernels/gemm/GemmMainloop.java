package dev.irisjvm.kernels.gemm;

import dev.irisjvm.core.gpu.DeviceProperties;
import java.util.Locale;
import java.util.Map;

/**
 * Which mainloop a {@link Gemm} runs. Both compute the same contract (see {@link Gemm}); they differ
 * in the GPUs they run on and in speed.
 *
 * <pre>{@code
 * Gemm auto = Gemm.create();                                                              // by GPU
 * Gemm forced = Gemm.create(Gemm.Options.defaults().withMainloop(GemmMainloop.PORTABLE)); // on Hopper too
 * forced.mainloop();                                                                      // PORTABLE
 * }</pre>
 *
 * <p>{@link #AUTO} asks the environment first: {@value #VARIABLE} = {@code hopper}, {@code portable}
 * or {@code auto} (any case; unset or blank is {@code auto}), so that a whole program or test suite
 * can be run on the portable mainloop without a code change. Any other value is an error naming the
 * variable.
 */
public enum GemmMainloop {
    /** {@value #VARIABLE} if set, else {@link #HOPPER} on a Hopper GPU and {@link #PORTABLE} on any other. */
    AUTO,
    /**
     * The persistent warp-specialized wgmma kernel fed by TMA ({@code gemm.cu}): compute capability
     * 9.0 exactly (sm_90a code) and {@value Gemm#SHARED_BYTES} bytes of shared memory per block.
     */
    HOPPER,
    /**
     * The mma.sync kernel fed by cp.async ({@code gemm_portable.cu}): every NVIDIA GPU of compute
     * capability 8.0 or later (A100, A10, L4, L40S, RTX 30xx to 50xx, H100, B200), 96 KiB of shared
     * memory per block ({@code IRIS_GEMM_PORTABLE_WIDE_SHARED_BYTES}, iris/abi/gemm_portable.h).
     */
    PORTABLE;

    /** The environment variable that {@link #AUTO} follows. */
    public static final String VARIABLE = "IRIS_GEMM_MAINLOOP";

    /**
     * {@value #VARIABLE} of {@code env}: {@code auto}, {@code hopper} or {@code portable} in any case,
     * {@link #AUTO} when unset or blank.
     *
     * @throws IllegalArgumentException any other value, naming the variable and the values accepted
     */
    public static GemmMainloop fromEnvironment(Map<String, String> env) {
        String v = env.get(VARIABLE);
        if (v == null || v.isBlank()) {
            return AUTO;
        }
        try {
            return valueOf(v.trim().toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(GemmChecks.who() + ": " + VARIABLE + " must be one of auto, hopper, portable"
                    + " (in any case), got '" + v + "'");
        }
    }

    /**
     * The mainloop this choice runs on {@code device}: itself unless it is {@link #AUTO}, then
     * {@value #VARIABLE}, then the GPU ({@link #HOPPER} where it can run it). The GEMM, the fused
     * operations and attention all choose this way, so one variable moves a whole program onto the
     * portable mainloop. Whether the GPU can run the answer is checked when the kernels load.
     *
     * <pre>{@code
     * GemmMainloop runs = GemmMainloop.AUTO.resolve(iris.deviceProperties());   // HOPPER on an H200
     * }</pre>
     *
     * @throws IllegalArgumentException {@value #VARIABLE} holds something else than auto, hopper or portable
     */
    public GemmMainloop resolve(DeviceProperties device) {
        return choose(this, fromEnvironment(System.getenv()), device);
    }

    /**
     * The mainloop to run: {@code requested} unless it is {@link #AUTO}; then {@code environment}
     * (what {@link #fromEnvironment} read) unless that is {@link #AUTO} too; then {@link #HOPPER} where
     * the GPU can run it and {@link #PORTABLE} elsewhere. Never AUTO; whether the GPU can run the
     * answer is checked when the kernels load.
     */
    static GemmMainloop choose(GemmMainloop requested, GemmMainloop environment, DeviceProperties device) {
        if (requested != AUTO) {
            return requested;
        }
        if (environment != AUTO) {
            return environment;
        }
        boolean hopper = device.major() == 9 && device.minor() == 0 && device.sharedMemoryPerBlockOptin() >= Gemm.SHARED_BYTES;
        return hopper ? HOPPER : PORTABLE;
    }

    /** "hopper", "portable", "auto": as {@value #VARIABLE} spells it. */
    @Override
    public String toString() {
        return name().toLowerCase(Locale.ROOT);
    }
}
