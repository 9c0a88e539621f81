package dev.irisjvm.kernels.attention;

import dev.irisjvm.runtime.abi.global.KernelAbi;

/**
 * The last two steps of a ring in one launch of {@code iris_ring_attention_last_steps_*}, checked:
 * {@code first}, a finalizing {@link RingStep}, then the same Q against a second K/V shard that the
 * kernel reads only once the 64-bit word at {@code secondReady} is 1. {@link RingAttention} copies
 * the last shard on the copy engine and raises that word with a stream write behind the copy
 * ({@code Stream.writeValue32}), so the copy lands while the CTAs work through the first shard, and
 * the online-softmax state of the two steps stays in registers: one launch, one tail wave.
 *
 * <pre>{@code
 * // two ranks: the own shard in place, then the peer's copy in recvK / recvV
 * RingStep first = new RingStep(p, q, k, v, o, lse, 0, 0, 0, false, true, mine, mine);
 * attention.ringLastSteps(iris.deviceContext(), new RingLastSteps(first, recvK, recvV, peers, ready), stream);
 * copyStream.writeValue32(ready, 1);   // after the copy into recvK / recvV
 * }</pre>
 *
 * <p>The wait for {@code secondReady} has the device context's deadline; a missed one is recorded
 * (wait site {@value #SITE_SECOND_SHARD}) and raised by the next host check. Whoever raises the
 * word also resets it to 0 (in stream order after the launch) before the next use.
 *
 * @param first       the first shard's step; it must finalize (write O and the log-sum-exp)
 * @param k           the second K shard, shaped like the first, 16-byte aligned
 * @param v           the second V shard, like k
 * @param kvChunks    global chunks of the second shard (used when causal)
 * @param secondReady 8-byte aligned device word, 1 once the second shard is in place
 */
public record RingLastSteps(RingStep first, long k, long v, Chunks kvChunks, long secondReady) {
    /** Wait site of {@code secondReady} in a device timeout message (iris/abi/attention.h). */
    public static final int SITE_SECOND_SHARD = KernelAbi.IRIS_ATTENTION_SITE_SECOND_SHARD;

    /**
     * The last two steps of a ring given as separate steps ({@code second} finalizing) as one
     * launch: {@code first}'s Q, K/V, chunks and state, finalizing into {@code second}'s O and
     * log-sum-exp, then {@code second}'s K/V and chunks once {@code secondReady} is 1.
     */
    public static RingLastSteps of(RingStep first, RingStep second, long secondReady) {
        String op = "ring attention last steps";
        AttentionChecks.notNull(op, "first", first);
        AttentionChecks.notNull(op, "second", second);
        if (!second.finalizeStep()) {
            throw AttentionChecks.fail(op, "the second step must finalize: the launch ends the ring and writes O");
        }
        RingStep merged = new RingStep(first.problem(), first.q(), first.k(), first.v(), second.o(), second.lse(), first.oAcc(),
                first.rowMax(), first.rowSum(), first.loadState(), true, first.qChunks(), first.kvChunks());
        return new RingLastSteps(merged, second.k(), second.v(), second.kvChunks(), secondReady);
    }

    public RingLastSteps {
        String op = "ring attention last steps";
        AttentionChecks.notNull(op, "first", first);
        AttentionChecks.notNull(op, "kvChunks", kvChunks);
        if (!first.finalizeStep()) {
            throw AttentionChecks.fail(op, "the first step must finalize: the launch ends the ring and writes O");
        }
        AttentionChecks.address(op, "second K", k, AttentionChecks.POINTER_ALIGNMENT);
        AttentionChecks.address(op, "second V", v, AttentionChecks.POINTER_ALIGNMENT);
        AttentionChecks.address(op, "secondReady", secondReady, 8);
        AttentionProblem p = first.problem();
        if (p.causal()) {
            kvChunks.checkShard(op, "kvLen", p.kvLen());
        }
        long kvb = p.kvBytes();
        long[][] outputs = {
                {first.o(), p.qBytes()},
                {first.lse(), p.lseBytes()},
                {first.loadState() ? first.oAcc() : 0, p.qRows() * p.headDim() * 4},
                {first.loadState() ? first.rowMax() : 0, p.qRows() * 4},
                {first.loadState() ? first.rowSum() : 0, p.qRows() * 4},
                {secondReady, 8}};
        String[] outputNames = {"O", "lse", "oAcc", "rowMax", "rowSum", "secondReady"};
        long[][] inputs = {{k, kvb}, {v, kvb}};
        String[] inputNames = {"second K", "second V"};
        for (int i = 0; i < outputs.length; i++) {
            for (int j = 0; j < inputs.length; j++) {
                AttentionChecks.disjoint(op, outputNames[i], outputs[i][0], outputs[i][1], inputNames[j], inputs[j][0],
                        inputs[j][1]);
            }
        }
    }
}
