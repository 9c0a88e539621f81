package dev.irisjvm.bench.moe;

import dev.irisjvm.bench.rma.Verifier;
import dev.irisjvm.core.DType;
import dev.irisjvm.core.HalfFloats;
import dev.irisjvm.core.Iris;
import dev.irisjvm.core.SymTensor;
import dev.irisjvm.core.gpu.Stream;
import dev.irisjvm.core.internal.Memcpy;
import dev.irisjvm.kernels.moe.MoeDispatch;
import dev.irisjvm.kernels.moe.MoeLowLatency;
import dev.irisjvm.kernels.moe.MoeStats;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import org.bytedeco.javacpp.BytePointer;

/**
 * The checks of one case on this rank, run once before it is timed. NCCL's delivery is the
 * reference of the rows: dispatch's received rows must equal, bit for bit, the rows NCCL delivered
 * regrouped into the library's layout (by local expert, then source rank, then route); its counts
 * must be the host's and nothing may drop. The experts are the identity (combine of the receive
 * buffer itself), so combine must give {@code out[t] = sum_k w[t][k] x[t]}, checked on the host
 * within bf16's rounding of the result plus f32 accumulation. Each method returns {@link
 * Verifier#OK} or what was wrong.
 */
final class MoeOutputCheck {
    /** Tokens per host chunk of the combine check. */
    private static final int CHUNK_TOKENS = 1024;

    private final Iris iris;
    private final Verifier verifier;
    private final Stream stream;
    private final int rank;

    MoeOutputCheck(Iris iris, Verifier verifier, Stream stream) {
        this.iris = iris;
        this.verifier = verifier;
        this.stream = stream;
        this.rank = iris.rank();
    }

    /**
     * After a dispatch: the stats and the rows against NCCL's (delivered into {@code nccl.recv()}
     * already). Every rank allocates the regrouped copy whatever its checks find, so that the
     * symmetric heap's allocations stay the same on every rank.
     */
    String dispatch(MoeDispatch d, MoeNcclBaseline nccl, MoeRouting routing) {
        int local = routing.localExperts();
        int hidden = routing.model().hidden();
        long rowBytes = 2L * hidden;
        long expertBytes = rowBytes * d.config().capacity();
        // A full regrouped copy is compared expert by expert: one device compare per expert, not per row.
        try (SymTensor regrouped = iris.heap().empty(DType.BF16, local, d.config().capacity(), hidden)) {
            MoeStats stats = d.stats(stream);
            int[] expected = routing.expertRows(rank);
            if (stats.droppedAll() != 0 || stats.badHere() != 0 || !Arrays.equals(expected, stats.counts())) {
                return "dispatch: " + stats + "; expected counts " + Arrays.toString(expected) + ", nothing dropped";
            }
            int[] next = new int[local];
            for (int s = 0; s < routing.world(); s++) {
                int[] ids = routing.ids(s);
                int[] routes = routing.routesTo(s, rank);
                for (int j = 0; j < routes.length; j++) {
                    int l = ids[routes[j]] - rank * local;
                    Memcpy.deviceToDevice(regrouped.deviceAddress() + l * expertBytes + next[l]++ * rowBytes, nccl.recvRow(s, j),
                            rowBytes, stream);
                }
            }
            iris.synchronize(stream);
            for (int l = 0; l < local; l++) {
                if (next[l] == 0) continue;
                String c = verifier.sameBytes(regrouped.deviceAddress() + l * expertBytes, d.received().deviceAddress() + l * expertBytes,
                        next[l] * rowBytes, "dispatch: local expert " + l + "'s rows vs NCCL's");
                if (!Verifier.OK.equals(c)) return c;
            }
        }
        return Verifier.OK;
    }

    /** After a low-latency dispatch: its counts and every received row against NCCL's. */
    String lowLatency(MoeLowLatency ll, MoeNcclBaseline nccl, MoeRouting routing) {
        int local = routing.localExperts();
        int world = routing.world();
        int[] counts = ll.counts().toIntArray();   // [L, W]
        for (int s = 0; s < world; s++) {
            int[] expected = routing.expertRowsFrom(rank, s);
            for (int l = 0; l < local; l++) {
                if (counts[l * world + s] != expected[l]) {
                    return "low-latency dispatch: local expert " + l + " got " + counts[l * world + s] + " rows from rank " + s
                            + ", expected " + expected[l];
                }
            }
        }
        long rowBytes = 2L * routing.model().hidden();
        long region = ll.regionRows();
        for (int s = 0; s < world; s++) {
            int[] ids = routing.ids(s);
            int[] routes = routing.routesTo(s, rank);
            int[] next = new int[local];
            for (int j = 0; j < routes.length; j++) {
                int l = ids[routes[j]] - rank * local;
                long row = ((long) l * world + s) * region + next[l]++;
                String c = verifier.sameBytes(nccl.recvRow(s, j), ll.received().deviceAddress() + row * rowBytes, rowBytes,
                        "low-latency dispatch: rank " + s + "'s route " + routes[j] + " vs NCCL's row");
                if (!Verifier.OK.equals(c)) return c;
            }
        }
        return Verifier.OK;
    }

    /** NCCL's rows came home where they left. */
    String ncclRoundTrip(MoeNcclBaseline nccl, MoeRouting routing) {
        long bytes = (long) routing.tokens() * routing.model().topK() * routing.model().hidden() * 2;
        return bytes == 0 ? Verifier.OK : verifier.sameBytes(nccl.send().deviceAddress(), nccl.home().deviceAddress(), bytes,
                "NCCL's rows after the round trip vs the rows sent");
    }

    /** After a combine of identity experts: {@code out} against the weighted sums of the tokens, on the host. */
    String combine(String what, SymTensor tokens, SymTensor out, MoeRouting routing) {
        int hidden = routing.model().hidden();
        int topK = routing.model().topK();
        float[] w = routing.weights(rank);
        long rowBytes = 2L * hidden;
        int chunk = Math.min(CHUNK_TOKENS, Math.max(1, routing.tokens()));
        try (BytePointer x = new BytePointer(chunk * rowBytes); BytePointer y = new BytePointer(chunk * rowBytes)) {
            for (int from = 0; from < routing.tokens(); from += chunk) {
                int n = Math.min(chunk, routing.tokens() - from);
                Memcpy.deviceToHost(x, tokens.deviceAddress() + from * rowBytes, n * rowBytes, stream);
                Memcpy.deviceToHost(y, out.deviceAddress() + from * rowBytes, n * rowBytes, stream);
                iris.synchronize(stream);
                ByteBuffer xs = x.position(0).limit(n * rowBytes).asByteBuffer().order(ByteOrder.LITTLE_ENDIAN);
                ByteBuffer ys = y.position(0).limit(n * rowBytes).asByteBuffer().order(ByteOrder.LITTLE_ENDIAN);
                for (int t = 0; t < n; t++) {
                    String wrong = token(what, from + t, Arrays.copyOfRange(w, (from + t) * topK, (from + t + 1) * topK), xs, ys,
                            t * hidden, hidden);
                    if (wrong != null) return wrong;
                }
            }
        }
        return Verifier.OK;
    }

    /** One token's row: null, or what is wrong with it. */
    static String token(String what, int token, float[] weights, ByteBuffer xs, ByteBuffer ys, int at, int hidden) {
        double sumW = 0;
        for (float v : weights) sumW += v;
        for (int i = 0; i < hidden; i++) {
            double x = HalfFloats.bf16ToFloat(xs.getShort(2 * (at + i)));
            double y = HalfFloats.bf16ToFloat(ys.getShort(2 * (at + i)));
            double expected = sumW * x;
            // bf16 keeps 8 significant bits (one rounding at the end); the f32 sum adds topK roundings of 2^-24.
            double bound = Math.abs(expected) * 0x1p-8 + weights.length * sumW * Math.abs(x) * 0x1p-23;
            if (!(Math.abs(y - expected) <= bound)) {
                return String.format(Locale.ROOT, "%s: token %d, element %d is %s, expected %s (sum of weights %s x token %s)", what,
                        token, i, y, expected, sumW, x);
            }
        }
        return null;
    }

    /** Every check's text as one: "ok", else the failures joined. */
    static String joined(List<String> checks) {
        List<String> bad = new ArrayList<>();
        for (String c : checks) {
            if (!Verifier.OK.equals(c)) bad.add(c);
        }
        return bad.isEmpty() ? Verifier.OK : String.join("; ", bad);
    }
}
