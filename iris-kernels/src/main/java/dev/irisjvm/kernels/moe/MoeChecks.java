package dev.irisjvm.kernels.moe;

import static dev.irisjvm.kernels.TensorChecks.fail;

import dev.irisjvm.core.DType;
import dev.irisjvm.core.SymTensor;
import dev.irisjvm.core.SymmetricHeap;
import dev.irisjvm.kernels.TensorChecks;
import java.util.Arrays;

/**
 * Argument checks of {@link MoeDispatch}, {@link MoeCombine} and {@link MoeLowLatency}, done before anything is launched
 * or allocated. Each failure is an {@link IllegalArgumentException} whose message starts with the
 * rank and the call and names the argument, what it is and what was expected, e.g. {@code "rank 1:
 * dispatch: tokens has shape [64, 1024]; expected [rows, 2048] (rows >= numTokens 64, hidden 2048)"}.
 * Pure functions over {@link Operand}s, so that they are tested without a GPU. Expert ids are
 * device data: the dispatch checks them on the device (device error 17, {@link MoeSites#BAD_EXPERT}).
 */
final class MoeChecks {
    private MoeChecks() {}

    /**
     * What the checks need to know about a tensor argument; {@code tensor} is what a message shows
     * (formatted only when a check fails).
     */
    record Operand(String name, DType dtype, long[] shape, boolean live, boolean onThisHeap, Object tensor) {
        String describe() {
            return String.valueOf(tensor);
        }

        long numel() {
            long n = 1;
            for (long d : shape) n *= d;
            return n;
        }
    }

    /** A live tensor of this Iris instance's heap. */
    static void usable(int rank, String call, Operand t) {
        TensorChecks.usable(rank, call, t.name(), t.tensor(), t.live(), t.onThisHeap(), "");
    }

    /**
     * What depends on the node: experts split evenly over its {@code world} ranks, and every count
     * of routes (an expert's rows from all ranks) fits an int32.
     */
    static void layer(int rank, String call, MoeConfig c, int world) {
        if (c.experts() % world != 0) {
            throw fail(rank, call, "experts is " + c.experts() + ", which the node's " + world + " ranks do not divide"
                    + " (each rank holds experts / world of them)");
        }
        if (world * c.maxRoutes() > Integer.MAX_VALUE) {
            throw fail(rank, call, world + " ranks x maxTokens " + c.maxTokens() + " x topK " + c.topK() + " = "
                    + world * c.maxRoutes() + " routes; expected at most " + Integer.MAX_VALUE + " (an expert's rows are counted in int32)");
        }
        long recv = bytes(rank, call, "the receive buffer", c.experts() / world, c.capacity(), c.hidden(), c.dtype().byteSize());
        long staging = bytes(rank, call, "combine's staging", c.maxRoutes(), c.hidden(), c.dtype().byteSize(), 1);
        bytes(rank, call, "the receive buffer and staging", 1, recv + staging, 1, 1);
    }

    /**
     * The low-latency mode's layer: experts split evenly over the node, and its receive buffer,
     * [localExperts, world, maxTokens * topK, hidden], and its staging countable in bytes (the
     * capacity and policy of {@code c} are not used: a source's region holds all its routes).
     */
    static void lowLatencyLayer(int rank, String call, MoeConfig c, int world) {
        if (c.experts() % world != 0) {
            throw fail(rank, call, "experts is " + c.experts() + ", which the node's " + world + " ranks do not divide"
                    + " (each rank holds experts / world of them)");
        }
        long rows = bytes(rank, call, "the receive buffer's rows", c.experts() / world, world, c.maxRoutes(), 1);
        long recv = bytes(rank, call, "the receive buffer", rows, c.hidden(), c.dtype().byteSize(), 1);
        long staging = bytes(rank, call, "combine's staging", c.maxRoutes(), c.hidden(), c.dtype().byteSize(), 1);
        bytes(rank, call, "the receive buffer and staging", 1, recv + staging, 1, 1);
    }

    /**
     * The low-latency combine's expert outputs: {@code dtype}, the receive buffer's shape,
     * [localExperts, world, regionRows, hidden], or [localExperts * world * regionRows, hidden].
     */
    static void lowLatencyOutputs(int rank, String call, Operand t, DType dtype, long localExperts, long world, long regionRows,
                                  long hidden) {
        if (t.dtype() != dtype) {
            throw fail(rank, call, t.name() + " has dtype " + t.dtype() + "; expected " + dtype);
        }
        long[] s = t.shape();
        long rows = localExperts * world * regionRows;
        boolean four = s.length == 4 && s[0] == localExperts && s[1] == world && s[2] == regionRows && s[3] == hidden;
        boolean two = s.length == 2 && s[0] == rows && s[1] == hidden;
        if (!four && !two) {
            throw fail(rank, call, t.name() + " has shape " + Arrays.toString(s) + "; expected [" + localExperts + ", " + world + ", "
                    + regionRows + ", " + hidden + "] (local experts, source ranks, rows per source, hidden: the receive buffer's"
                    + " shape) or [" + rows + ", " + hidden + "]");
        }
    }

    private static long bytes(int rank, String call, String what, long a, long b, long c, long d) {
        try {
            return Math.multiplyExact(Math.multiplyExact(Math.multiplyExact(a, b), c), d);
        } catch (ArithmeticException e) {
            throw fail(rank, call, what + " would take " + a + " x " + b + " x " + c + " x " + d + " bytes, more than 64 bits count");
        }
    }

    /** A tensor argument of a call, checked to be live and on {@code heap}. */
    static Operand operand(int rank, String call, String name, SymTensor t, SymmetricHeap heap) {
        TensorChecks.notNull(rank, call, name, t);
        Operand o = new Operand(name, t.dtype(), t.shape(), t.isLive(), t.heap() == heap, t);
        usable(rank, call, o);
        return o;
    }

    /**
     * A dispatch's inputs, as both modes take them: {@code numTokens} in [0, maxTokens], tokens
     * [rows, hidden] of the config's dtype, expert ids I32 and weights F32 [rows, topK], each live
     * on {@code heap}, rows at least numTokens, and a stream.
     */
    static void dispatchInputs(int rank, String call, MoeConfig config, int numTokens, SymTensor tokens, SymTensor expertIds,
                               SymTensor weights, SymmetricHeap heap, Object stream) {
        Operand t = operand(rank, call, "tokens", tokens, heap);
        Operand ids = operand(rank, call, "expertIds", expertIds, heap);
        Operand w = operand(rank, call, "weights", weights, heap);
        TensorChecks.notNull(rank, call, "stream", stream);
        numTokens(rank, call, numTokens, config.maxTokens());
        matrix(rank, call, t, config.dtype(), config.hidden(), numTokens, "hidden");
        matrix(rank, call, ids, DType.I32, config.topK(), numTokens, "topK");
        matrix(rank, call, w, DType.F32, config.topK(), numTokens, "topK");
    }

    /** The rows of a [rows, hidden] tokens tensor, for the dispatch of all of them (0 for what the checks will refuse). */
    static int rows(SymTensor tokens) {
        long rows = tokens != null && tokens.shape().length == 2 ? tokens.shape()[0] : 0;
        return (int) Math.min(rows, Integer.MAX_VALUE);
    }

    /** Tokens of one call: in [0, maxTokens]. */
    static void numTokens(int rank, String call, int numTokens, int maxTokens) {
        if (numTokens < 0 || numTokens > maxTokens) {
            throw fail(rank, call, "numTokens is " + numTokens + "; expected 0 to maxTokens (" + maxTokens + ")");
        }
    }

    /**
     * A row-major matrix of {@code dtype} with {@code cols} columns and at least {@code minRows} rows:
     * shape [rows, cols].
     */
    static void matrix(int rank, String call, Operand t, DType dtype, long cols, long minRows, String colsName) {
        if (t.dtype() != dtype) {
            throw fail(rank, call, t.name() + " has dtype " + t.dtype() + "; expected " + dtype);
        }
        long[] s = t.shape();
        if (s.length != 2 || s[1] != cols || s[0] < minRows) {
            throw fail(rank, call, t.name() + " has shape " + Arrays.toString(s) + "; expected [rows, " + cols + "] (rows >= "
                    + "numTokens " + minRows + ", " + colsName + " " + cols + ")");
        }
    }

    /**
     * Combine's expert outputs: {@code dtype}, the receive buffer's shape, [localExperts, capacity,
     * hidden], or [localExperts * capacity, hidden].
     */
    static void expertOutputs(int rank, String call, Operand t, DType dtype, long localExperts, long capacity, long hidden) {
        if (t.dtype() != dtype) {
            throw fail(rank, call, t.name() + " has dtype " + t.dtype() + "; expected " + dtype);
        }
        long[] s = t.shape();
        boolean three = s.length == 3 && s[0] == localExperts && s[1] == capacity && s[2] == hidden;
        boolean two = s.length == 2 && s[0] == localExperts * capacity && s[1] == hidden;
        if (!three && !two) {
            throw fail(rank, call, t.name() + " has shape " + Arrays.toString(s) + "; expected [" + localExperts + ", " + capacity
                    + ", " + hidden + "] (local experts, capacity, hidden: the receive buffer's shape) or ["
                    + localExperts * capacity + ", " + hidden + "]");
        }
    }
}
