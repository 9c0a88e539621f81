package dev.irisjvm.bench.rma;

import dev.irisjvm.core.DType;
import dev.irisjvm.core.Iris;
import dev.irisjvm.core.SymTensor;
import dev.irisjvm.core.gpu.Stream;
import dev.irisjvm.core.internal.Memcpy;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * Checks a point's data on the GPU after its timed repetitions and says what was wrong, if anything,
 * in the words that go into {@link dev.irisjvm.bench.results.Measurement#check()}.
 *
 * <pre>{@code
 * String check = verifier.sameBytes(src.deviceAddress(), dst.deviceAddress(peer), bytes, "peer's dst");
 * // "ok", or "peer's dst: 3 of 65536 16-byte words differ, first at byte 4096"
 * }</pre>
 *
 * <p>Its two-word result buffer is a symmetric tensor, so construct it on every rank at the same
 * point (allocation is collective).
 */
public final class Verifier implements AutoCloseable {
    /** What a check returns when all was right. */
    public static final String OK = "ok";

    private final RmaKernels kernels;
    private final Stream stream;
    private final SymTensor result;

    /**
     * Every rank's check text as one ({@link #combine}); collective: every rank calls it at the
     * same point.
     */
    public static String agree(Iris iris, String mine) {
        byte[][] all = iris.allGather((mine == null ? "" : mine).getBytes(StandardCharsets.UTF_8));
        List<String> texts = new ArrayList<>();
        for (byte[] one : all) {
            texts.add(new String(one, StandardCharsets.UTF_8));
        }
        return combine(texts);
    }

    /**
     * The ranks' check texts as one: a text every rank shares, once ("ok", "not checked (...)", the
     * same failure), else each rank's text that is not "ok", prefixed with its rank unless it names one.
     */
    public static String combine(List<String> texts) {
        if (texts.stream().distinct().count() == 1) {
            return texts.get(0);
        }
        List<String> bad = new ArrayList<>();
        for (int r = 0; r < texts.size(); r++) {
            String t = texts.get(r);
            if (!OK.equals(t)) {
                bad.add(t.startsWith("rank ") ? t : "rank " + r + ": " + t);
            }
        }
        return String.join("; ", bad);
    }

    public Verifier(Iris iris, RmaKernels kernels, Stream stream) {
        this.kernels = kernels;
        this.stream = stream;
        this.result = iris.heap().zeros(DType.I64, 2);
    }

    /** Compares {@code bytes} at {@code expected} and {@code actual} (either may be a peer's copy as mapped here). */
    public String sameBytes(long expected, long actual, long bytes, String what) {
        reset();
        kernels.compare(expected, actual, bytes, result.deviceAddress(), stream);
        long[] r = result.toLongArray();
        if (r[0] == 0) {
            return OK;
        }
        return what + ": " + r[0] + " of " + (bytes + 15) / 16 + " 16-byte words differ, first at byte " + r[1];
    }

    /** Whether rank peer's atomic slots hold their values after {@code generations} launches. */
    public String atomicSlots(RmaKernels.AtomicOp op, SymTensor slots, long ops, long seed, long generations, int peer) {
        reset();
        kernels.atomicCheck(op, slots, ops, seed, generations, peer, result.deviceAddress(), stream);
        long[] r = result.toLongArray();
        if (r[0] == 0) {
            return OK;
        }
        return "rank " + peer + "'s slots: " + r[0] + " of " + ops + " hold a wrong value after " + generations
                + " launches, first slot " + r[1];
    }

    /** Whether out (local bf16) is the sum over ranks of {@code in}, {@code count} elements. */
    public String allReduceBf16(SymTensor in, long out, long count) {
        reset();
        kernels.checkAllReduceBf16(in, out, count, result.deviceAddress(), stream);
        long[] r = result.toLongArray();
        if (r[0] == 0) {
            return OK;
        }
        return "all_reduce output: " + r[0] + " of " + count + " elements off the float sum of the inputs, first at element " + r[1];
    }

    /** Fills each tensor with 0xFF bytes (a NaN in every float dtype) on {@code stream}: an output nothing has written shows. */
    public static void poison(Stream stream, SymTensor... tensors) {
        for (SymTensor t : tensors) {
            Memcpy.memset(t.deviceAddress(), 0xFF, t.byteSize(), stream);
        }
    }

    /** A counter's value (an I64 tensor of this rank). */
    public static long counter(SymTensor t) {
        return t.toLongArray()[0];
    }

    private void reset() {
        Memcpy.memset(result.deviceAddress(), 0, 8, stream);
        Memcpy.memset(result.deviceAddress() + 8, 0xFF, 8, stream);
    }

    @Override
    public void close() {
        result.close();
    }
}
