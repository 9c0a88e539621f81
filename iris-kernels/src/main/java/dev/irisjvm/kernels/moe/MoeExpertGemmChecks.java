package dev.irisjvm.kernels.moe;

import static dev.irisjvm.kernels.TensorChecks.fail;

import dev.irisjvm.core.DType;
import dev.irisjvm.kernels.gemm.Gemm;
import dev.irisjvm.kernels.moe.MoeChecks.Operand;
import java.util.Arrays;

/**
 * Argument checks of {@link MoeExpertGemm}, done before anything is launched. Each failure is an
 * {@link IllegalArgumentException} whose message starts with the rank and the call and names the
 * argument, what it is and what was expected. Pure functions, tested without a GPU.
 */
final class MoeExpertGemmChecks {
    private MoeExpertGemmChecks() {}

    /**
     * What the grouped GEMM needs of the layer: {@code n} output columns per expert, a positive
     * multiple of {@link Gemm#NARROW_TILE_N} (a tile's columns lie in one expert's weights), a
     * capacity that is a multiple of {@link Gemm#TILE_M} (each expert's rows start a tile of the
     * receive buffer), and the receive buffer's rows, the weights' rows and the tiles countable in int32.
     */
    static void layer(int rank, String call, MoeConfig c, int localExperts, int n) {
        if (n < Gemm.NARROW_TILE_N || n % Gemm.NARROW_TILE_N != 0) {
            throw fail(rank, call, "n is " + n + "; expected a positive multiple of " + Gemm.NARROW_TILE_N
                    + " (output columns per expert: a GEMM tile's columns must lie in one expert's weights)");
        }
        if (c.capacity() % Gemm.TILE_M != 0) {
            int up = (c.capacity() / Gemm.TILE_M + 1) * Gemm.TILE_M;
            throw fail(rank, call, "the dispatch's capacity is " + c.capacity() + "; expected a multiple of " + Gemm.TILE_M
                    + " (each expert's rows must start a GEMM tile of the receive buffer): create the MoeDispatch with capacity "
                    + up);
        }
        long rows = (long) localExperts * c.capacity();
        long weightRows = (long) localExperts * n;
        if (rows > Integer.MAX_VALUE || weightRows > Integer.MAX_VALUE) {
            throw fail(rank, call, localExperts + " local experts x capacity " + c.capacity() + " = " + rows + " rows and x n " + n
                    + " = " + weightRows + " weight rows; expected both at most " + Integer.MAX_VALUE + " (the GEMM counts rows in int32)");
        }
    }

    /** Columns per tile for {@code n} output columns per expert: the wide tile where it divides n, else the narrow one. */
    static int tileN(int n) {
        return n % Gemm.TILE_N == 0 ? Gemm.TILE_N : Gemm.NARROW_TILE_N;
    }

    /** The weights: {@code dtype}, [localExperts, n, hidden] or [localExperts * n, hidden] (each expert's N x K, a Linear layer's weight). */
    static void weights(int rank, String call, Operand w, DType dtype, long localExperts, long n, long hidden) {
        stacked(rank, call, w, dtype, localExperts, n, hidden, "local experts, n, hidden: each expert's weight is n x hidden");
    }

    /** The GEMM's output: {@code dtype}, [localExperts, capacity, n] or [localExperts * capacity, n]. */
    static void outputs(int rank, String call, Operand o, DType dtype, long localExperts, long capacity, long n) {
        stacked(rank, call, o, dtype, localExperts, capacity, n, "local experts, capacity, n: the receive buffer's rows");
    }

    /** The fused combine sums rows of hidden columns: the GEMM's n must be the layer's hidden. */
    static void combinable(int rank, String call, int n, int hidden) {
        if (n != hidden) {
            throw fail(rank, call, "this MoeExpertGemm has n = " + n + " output columns per expert, and combine sums rows of hidden = "
                    + hidden + " columns; expected n = hidden (create it with n " + hidden + ")");
        }
    }

    /** The tensor may not overlap the receive buffer, which the GEMM reads while it writes its output. */
    static void disjoint(int rank, String call, String name, long address, long bytes, long recvAddress, long recvBytes) {
        if (address < recvAddress + recvBytes && recvAddress < address + bytes) {
            throw fail(rank, call, name + " overlaps the dispatch's receive buffer, which the GEMM reads; expected a tensor of its own");
        }
    }

    private static void stacked(int rank, String call, Operand t, DType dtype, long groups, long rows, long cols, String meaning) {
        if (t.dtype() != dtype) {
            throw fail(rank, call, t.name() + " has dtype " + t.dtype() + "; expected " + dtype);
        }
        long[] s = t.shape();
        boolean three = s.length == 3 && s[0] == groups && s[1] == rows && s[2] == cols;
        boolean two = s.length == 2 && s[0] == groups * rows && s[1] == cols;
        if (!three && !two) {
            throw fail(rank, call, t.name() + " has shape " + Arrays.toString(s) + "; expected [" + groups + ", " + rows + ", " + cols
                    + "] (" + meaning + ") or [" + groups * rows + ", " + cols + "]");
        }
    }
}
