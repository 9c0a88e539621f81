package dev.irisjvm.bench.rma;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * The operations a sweep can measure, by the names {@code --ops} takes. Most map one to one onto
 * {@link dev.irisjvm.bench.results.Measurement#op()}; the two baselines {@code copy_engine} and
 * {@code local_copy} each record two variants (see {@link #recordedOps()}).
 *
 * <pre>{@code
 * List<RmaOp> ops = RmaOp.parseList("load,store,ping_pong");
 * }</pre>
 */
public enum RmaOp {
    LOAD(Family.BANDWIDTH),
    STORE(Family.BANDWIDTH),
    LOAD_BULK(Family.BANDWIDTH),
    STORE_BULK(Family.BANDWIDTH),
    ALL_LOAD(Family.BANDWIDTH),
    ALL_STORE(Family.BANDWIDTH),
    STORE_TILES(Family.BANDWIDTH),
    ATOMIC_ADD(Family.ATOMIC),
    ATOMIC_ADD_F32(Family.ATOMIC),
    ATOMIC_XCHG(Family.ATOMIC),
    ATOMIC_CAS(Family.ATOMIC),
    MESSAGE_PASSING(Family.MESSAGE),
    PING_PONG(Family.MESSAGE),
    COPY_ENGINE(Family.BANDWIDTH),
    LOCAL_COPY(Family.BANDWIDTH),
    SEND_RECV(Family.NCCL),
    ALL_REDUCE(Family.NCCL);

    /** Which benchmark class runs the op. */
    public enum Family { BANDWIDTH, ATOMIC, MESSAGE, NCCL }

    private final Family family;

    RmaOp(Family family) {
        this.family = family;
    }

    public Family family() {
        return family;
    }

    /** The name on the command line and (mostly) in the results: {@code all_load}. */
    public String id() {
        return name().toLowerCase(Locale.ROOT);
    }

    /**
     * The op names this choice writes into measurements: {@code copy_engine} gives
     * {@code copy_engine_pull} (peer to issuer) and {@code copy_engine_push} (issuer to peer);
     * {@code local_copy} gives {@code local_copy} (cudaMemcpyAsync) and {@code local_copy_sm} (SM kernel).
     */
    public List<String> recordedOps() {
        return switch (this) {
            case COPY_ENGINE -> List.of("copy_engine_pull", "copy_engine_push");
            case LOCAL_COPY -> List.of("local_copy", "local_copy_sm");
            case PING_PONG -> List.of("ping_pong", "ping_pong_relaxed");
            case MESSAGE_PASSING -> List.of("message_passing", "message_passing_ll");
            default -> List.of(id());
        };
    }

    /** The op of that name ({@code all_load} or {@code ALL_LOAD}). */
    public static RmaOp parse(String name) {
        String n = name.trim().toUpperCase(Locale.ROOT).replace('-', '_');
        for (RmaOp op : values()) {
            if (op.name().equals(n)) {
                return op;
            }
        }
        throw new IllegalArgumentException("unknown op '" + name.trim() + "'; known: " + allIds());
    }

    /** A comma-separated list, in the order given, without repeats; "all" is every op. */
    public static List<RmaOp> parseList(String text) {
        if (text == null || text.isBlank()) {
            throw new IllegalArgumentException("--ops needs at least one op; known: " + allIds());
        }
        List<RmaOp> ops = new ArrayList<>();
        for (String part : text.split(",")) {
            if (part.isBlank()) {
                continue;
            }
            List<RmaOp> next = part.trim().equalsIgnoreCase("all") ? Arrays.asList(values()) : List.of(parse(part));
            for (RmaOp op : next) {
                if (!ops.contains(op)) {
                    ops.add(op);
                }
            }
        }
        if (ops.isEmpty()) {
            throw new IllegalArgumentException("--ops needs at least one op; known: " + allIds());
        }
        return ops;
    }

    static String allIds() {
        StringBuilder b = new StringBuilder();
        for (RmaOp op : values()) {
            b.append(b.length() == 0 ? "" : ",").append(op.id());
        }
        return b.toString();
    }
}
