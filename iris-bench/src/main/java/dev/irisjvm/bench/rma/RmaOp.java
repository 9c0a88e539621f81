package dev.irisjvm.bench.rma;

import dev.irisjvm.bench.OpNames;
import java.util.List;

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
        return OpNames.id(this);
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
        return OpNames.parse(RmaOp.class, name);
    }

    /** A comma-separated list, in the order given, without repeats; "all" is every op. */
    public static List<RmaOp> parseList(String text) {
        return OpNames.parseList(RmaOp.class, text);
    }
}
