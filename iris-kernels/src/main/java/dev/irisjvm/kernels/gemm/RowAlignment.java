package dev.irisjvm.kernels.gemm;

import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Whether B's rows start 128-byte aligned, and the warning, once per {@link Gemm}, where they do
 * not. On an H200 (2026-12-03) the Hopper mainloop ran 4096 x 5120 x 3000 with B stored N x K (rows
 * of 6000 bytes) at 0.67 x the faster of cuBLAS and cuBLASLt, and at 0.84 x with only B's rows
 * unaligned, against 0.95 to 0.97 x where every row starts on 128 bytes, the same K of 3000
 * included; A's rows alone unaligned cost nothing. Each 128-byte row a TMA box loads then spans two
 * L2 lines, and a 256-row box of B per stage is more than the loads keep up with. cuBLASLt, whose
 * kernels share B between the two blocks of a cluster, lost at most 10 %.
 */
final class RowAlignment {
    /** Row strides that are a multiple of this many bytes load at full speed. */
    static final int BYTES = 128;

    private static final Logger LOG = LoggerFactory.getLogger(Gemm.class);

    private final AtomicBoolean said = new AtomicBoolean();

    /** What to tell the user about {@code p}'s row strides, or null where B's rows start 128-byte aligned. */
    static String advice(GemmProblem p) {
        long b = p.b().rowStrideBytes();
        if (b % BYTES == 0) {
            return null;
        }
        long a = p.a().rowStrideBytes();
        int elements = BYTES / p.b().dtype().byteSize();
        return GemmChecks.who() + ": B's rows are " + b + " bytes apart" + (a % BYTES != 0 ? " and A's " + a : "")
                + ", not a multiple of " + BYTES + "; on an H200 GEMMs with such rows ran at 0.67 to 0.84 x the speed of the same GEMMs "
                + "with " + BYTES + "-byte-aligned rows. A leading dimension that is a multiple of " + elements
                + " elements (padding each row) avoids it. (Said once per Gemm.)";
    }

    /** Warns about {@code p} if it is the first problem with unaligned rows of B on this instance; whether it did. */
    boolean check(GemmProblem p) {
        if (said.get() || p.b().rowStrideBytes() % BYTES == 0 || !said.compareAndSet(false, true)) {
            return false;
        }
        LOG.warn(advice(p));
        return true;
    }
}
