package dev.irisjvm.bench.moe;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** The host's routing: distinct experts per token, counts that agree between senders and receivers, a capacity that drops nothing. */
class MoeRoutingTest {
    @ParameterizedTest
    @EnumSource(MoeModel.class)
    void countsAgreeAcrossRanks(MoeModel model) {
        int world = 4;
        int tokens = 300;
        MoeRouting r = MoeRouting.uniform(model, tokens, world, 27);
        int k = model.topK();
        for (int s = 0; s < world; s++) {
            int[] ids = r.ids(s);
            assertEquals(tokens * k, ids.length);
            for (int t = 0; t < tokens; t++) {
                int[] mine = Arrays.copyOfRange(ids, t * k, (t + 1) * k);
                assertEquals(k, Arrays.stream(mine).distinct().count(), "rank " + s + " token " + t + ": " + Arrays.toString(mine));
                assertTrue(Arrays.stream(mine).allMatch(e -> e >= 0 && e < model.experts()));
            }
            float[] w = r.weights(s);
            for (float x : w) {
                assertTrue(x >= 0 && x < 1, "weight " + x);
            }
            assertEquals((long) tokens * k, Arrays.stream(r.sendRows(s)).sum());
            for (int p = 0; p < world; p++) {
                int[] routes = r.routesTo(s, p);
                assertEquals(r.sendRows(s)[p], routes.length);
                assertEquals(r.recvRows(p)[s], routes.length, "what " + s + " sends " + p + " is what " + p + " receives from " + s);
                for (int j = 0; j < routes.length; j++) {
                    assertEquals(p, r.owner(ids[routes[j]]));
                    assertTrue(j == 0 || routes[j - 1] < routes[j], "route order");
                }
            }
        }
        for (int p = 0; p < world; p++) {
            int[] rows = r.expertRows(p);
            int[] sum = new int[rows.length];
            for (int s = 0; s < world; s++) {
                int[] from = r.expertRowsFrom(p, s);
                for (int l = 0; l < from.length; l++) sum[l] += from[l];
            }
            assertArrayEquals(rows, sum);
            assertTrue(Arrays.stream(rows).allMatch(n -> n <= r.capacity()), "nothing drops at the capacity");
            assertTrue(Arrays.stream(r.recvRows(p)).sum() <= r.maxRecvRows());
        }
        assertTrue(java.util.stream.IntStream.range(0, world).anyMatch(p -> Arrays.stream(r.expertRows(p)).anyMatch(n -> n == r.capacity())),
                "the capacity is the fullest expert's rows, not more");
    }

    @Test
    void theSeedFixesTheRouting() {
        MoeRouting a = MoeRouting.uniform(MoeModel.DEEPSEEK_V3, 64, 2, 27);
        MoeRouting b = MoeRouting.uniform(MoeModel.DEEPSEEK_V3, 64, 2, 27);
        assertArrayEquals(a.ids(1), b.ids(1));
        assertArrayEquals(a.weights(1), b.weights(1));
        assertFalse(Arrays.equals(a.ids(0), a.ids(1)), "each rank routes its own way");
        assertFalse(Arrays.equals(a.ids(0), MoeRouting.uniform(MoeModel.DEEPSEEK_V3, 64, 2, 28).ids(0)));
    }

    @Test
    void expertsMustSplitEvenly() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> MoeRouting.uniform(MoeModel.MIXTRAL, 8, 3, 1));
        assertTrue(e.getMessage().contains("8 experts do not split evenly over 3 ranks"), e.getMessage());
    }
}
