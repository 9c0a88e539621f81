package dev.irisjvm.kernels.attention;

import dev.irisjvm.runtime.abi.global.KernelAbi;

/**
 * One launch of the ring-attention step kernel ({@code iris_ring_attention_step_*}), checked: a
 * Q shard against one K/V shard, carrying the online-softmax state across launches. {@link
 * RingAttention} issues one per ring step; tests and benchmarks issue them directly on local
 * buffers ({@link Attention#ringStep}), e.g. to run a whole ring inside one process or to time the
 * steps without communication.
 *
 * <p>The state is un-normalized O ({@code oAcc}, F32, shaped like O), and per query row the running
 * max ({@code rowMax}, base-2 units of the scaled score) and sum ({@code rowSum}), both F32
 * [batch, qHeads, qLen]. The first step starts from zero ({@code loadState} false); every later step
 * loads the state. The last step ({@code finalizeStep}) writes O and the log-sum-exp instead of the
 * state. A ring of one step has neither: it needs no state at all.
 *
 * <pre>{@code
 * Chunks mine = Sharding.ZIG_ZAG.chunks(rank, world, shard);
 * for (int s = 0; s < world; s++) {
 *     int src = Math.floorMod(rank - s, world);
 *     attention.ringStep(new RingStep(p, q, k[src], v[src], o, lse, oAcc, rowMax, rowSum, s > 0, s == world - 1,
 *             mine, Sharding.ZIG_ZAG.chunks(src, world, shard)), stream);
 * }
 * }</pre>
 *
 * @param problem      the shard's shapes: qLen rows of this rank's Q against kvLen rows of the source's
 *                     K/V; causal means global positions are compared (see {@link Chunks})
 * @param q            Q shard [batch, qHeads, qLen, headDim], 16-byte aligned
 * @param k            K shard [batch, kvHeads, kvLen, headDim], 16-byte aligned
 * @param v            V shard, like K
 * @param o            O [batch, qHeads, qLen, headDim] (written by the finalizing step; may be 0 otherwise)
 * @param lse          log-sum-exp [batch, qHeads, qLen] F32 (written by the finalizing step), or 0
 * @param oAcc         state, F32 like O, 8-byte aligned; 0 only for a single-step ring
 * @param rowMax       state, F32 [batch, qHeads, qLen]; 0 only for a single-step ring
 * @param rowSum       state, F32 [batch, qHeads, qLen]; 0 only for a single-step ring
 * @param loadState    start from the state (every step but the first)
 * @param finalizeStep write O and lse instead of the state (the last step)
 * @param qChunks      global chunks of the Q shard (used when causal)
 * @param kvChunks     global chunks of the K/V shard (used when causal)
 */
public record RingStep(AttentionProblem problem, long q, long k, long v, long o, long lse, long oAcc, long rowMax, long rowSum,
                       boolean loadState, boolean finalizeStep, Chunks qChunks, Chunks kvChunks) {
    /** Mode bit: start from the state. */
    public static final int LOAD_STATE = KernelAbi.IRIS_ATTENTION_LOAD_STATE;
    /** Mode bit: write O and lse. */
    public static final int FINALIZE = KernelAbi.IRIS_ATTENTION_FINALIZE;

    public RingStep {
        String op = "ring attention step";
        AttentionChecks.notNull(op, "problem", problem);
        AttentionChecks.notNull(op, "qChunks", qChunks);
        AttentionChecks.notNull(op, "kvChunks", kvChunks);
        AttentionChecks.address(op, "Q", q, AttentionChecks.POINTER_ALIGNMENT);
        AttentionChecks.address(op, "K", k, AttentionChecks.POINTER_ALIGNMENT);
        AttentionChecks.address(op, "V", v, AttentionChecks.POINTER_ALIGNMENT);
        boolean needsState = loadState || !finalizeStep;
        if (finalizeStep) {
            AttentionChecks.address(op, "O", o, AttentionChecks.POINTER_ALIGNMENT);
        }
        if (lse != 0) {
            AttentionChecks.address(op, "lse", lse, 4);
        }
        if (needsState) {
            AttentionChecks.address(op, "oAcc", oAcc, 8);
            AttentionChecks.address(op, "rowMax", rowMax, 4);
            AttentionChecks.address(op, "rowSum", rowSum, 4);
        }
        if (problem.causal()) {
            qChunks.checkShard(op, "qLen", problem.qLen());
            kvChunks.checkShard(op, "kvLen", problem.kvLen());
        }
        long qb = problem.qBytes();
        long kvb = problem.kvBytes();
        long stateRows = problem.qRows() * 4;
        long accBytes = problem.qRows() * problem.headDim() * 4;
        long[][] outputs = {
                {finalizeStep ? o : 0, qb},
                {finalizeStep ? lse : 0, problem.lseBytes()},
                {needsState ? oAcc : 0, accBytes},
                {needsState ? rowMax : 0, stateRows},
                {needsState ? rowSum : 0, stateRows}};
        String[] outputNames = {"O", "lse", "oAcc", "rowMax", "rowSum"};
        long[][] inputs = {{q, qb}, {k, kvb}, {v, kvb}};
        String[] inputNames = {"Q", "K", "V"};
        for (int i = 0; i < outputs.length; i++) {
            for (int j = 0; j < inputs.length; j++) {
                AttentionChecks.disjoint(op, outputNames[i], outputs[i][0], outputs[i][1], inputNames[j], inputs[j][0], inputs[j][1]);
            }
            for (int j = i + 1; j < outputs.length; j++) {
                AttentionChecks.disjoint(op, outputNames[i], outputs[i][0], outputs[i][1], outputNames[j], outputs[j][0],
                        outputs[j][1]);
            }
        }
    }

    /** The kernel's {@code mode}: {@link #LOAD_STATE} | {@link #FINALIZE}. */
    public int mode() {
        return (loadState ? LOAD_STATE : 0) | (finalizeStep ? FINALIZE : 0);
    }
}
