package dev.irisjvm.kernels.moe;

import java.util.Arrays;

/**
 * What the last dispatch did on this rank ({@link MoeDispatch#stats}): the routes it did not
 * deliver and the rows each local expert got.
 *
 * <pre>{@code
 * MoeDispatch dispatch = MoeDispatch.create(iris, config.withPolicy(OverflowPolicy.DROP));
 * dispatch.dispatch(tokens, ids, weights, stream);
 * MoeStats s = dispatch.stats(stream);   // a host round trip: for logs and checks, not every step
 * if (s.droppedAll() > 0) log.warn("{} routes over capacity, {} experts full", s.droppedAll(), s.fullExperts());
 * }</pre>
 *
 * @param droppedHere routes of this rank's tokens whose expert was full (not delivered)
 * @param droppedAll  the same over all ranks: the same number on every rank
 * @param badHere     routes of this rank whose expert id was out of range (not delivered; an error)
 * @param fullExperts experts, over all ranks, that were routed more rows than the capacity
 * @param routed      per local expert: rows routed to it by all ranks, before the capacity
 * @param counts      per local expert: rows it got, min(routed, capacity), as {@link MoeDispatch#counts()} holds
 */
public record MoeStats(int droppedHere, int droppedAll, int badHere, int fullExperts, int[] routed, int[] counts) {
    public MoeStats {
        routed = routed.clone();
        counts = counts.clone();
    }

    @Override
    public int[] routed() {
        return routed.clone();
    }

    @Override
    public int[] counts() {
        return counts.clone();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof MoeStats s && droppedHere == s.droppedHere && droppedAll == s.droppedAll && badHere == s.badHere
                && fullExperts == s.fullExperts && Arrays.equals(routed, s.routed) && Arrays.equals(counts, s.counts);
    }

    @Override
    public int hashCode() {
        return 31 * (31 * (31 * (31 * droppedHere + droppedAll) + badHere) + fullExperts) + 31 * Arrays.hashCode(routed)
                + Arrays.hashCode(counts);
    }

    @Override
    public String toString() {
        return "MoeStats(droppedHere " + droppedHere + ", droppedAll " + droppedAll + ", badHere " + badHere + ", fullExperts "
                + fullExperts + ", routed " + Arrays.toString(routed) + ", counts " + Arrays.toString(counts) + ")";
    }
}
