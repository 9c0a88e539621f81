package dev.irisjvm.bench.rma;

import dev.irisjvm.core.Iris;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * Per repetition, the slowest rank's time: an exchange is done when its last rank is. Collective
 * (every rank passes its own times of the same repetitions and gets the same answer).
 */
public final class SlowestRank {
    private SlowestRank() {}

    public static float[] of(Iris iris, float[] mine) {
        ByteBuffer b = ByteBuffer.allocate(4 * mine.length).order(ByteOrder.LITTLE_ENDIAN);
        for (float x : mine) b.putFloat(x);
        byte[][] all = iris.allGather(b.array());
        float[] slowest = new float[mine.length];
        for (byte[] theirs : all) {
            ByteBuffer t = ByteBuffer.wrap(theirs).order(ByteOrder.LITTLE_ENDIAN);
            if (theirs.length != 4 * mine.length) {
                throw new IllegalStateException("a rank timed " + theirs.length / 4 + " repetitions, this one " + mine.length);
            }
            for (int i = 0; i < slowest.length; i++) {
                slowest[i] = Math.max(slowest[i], t.getFloat());
            }
        }
        return slowest;
    }
}
