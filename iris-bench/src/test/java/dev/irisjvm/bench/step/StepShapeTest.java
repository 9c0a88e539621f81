package dev.irisjvm.bench.step;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;
import picocli.CommandLine;

class StepShapeTest {

    @Test
    void llamaMlpSplitsOverTwoRanks() {
        StepShape s = StepShape.parse(StepShape.DEFAULT);
        assertEquals(new StepShape(8192, 8192, 28672), s);
        assertEquals(4096, s.tokensPerRank(2));
        assertEquals(14336, s.ffnPerRank(2));
        assertEquals(6 * 2.0 * 8192 * 8192 * 14336, s.flopsPerRank(2), "six GEMMs of 1.92 TFLOP each");
        assertEquals(4L * 4096 * 8192 * 2, s.commBytesPerRank(2), "two all-gathers and two reduce-scatters of half of T x H");
        assertEquals(4L * 3 * 2048 * 8192 * 2, s.commBytesPerRank(4));
        assertNull(s.unsplittable(2));
        assertEquals("8192x8192x28672", s.toString());
    }

    @Test
    void badShapesNameTheOption() {
        assertEquals("--shape '8192x8192': expected TOKENSxHIDDENxFFN, e.g. 8192x8192x28672",
                assertThrows(IllegalArgumentException.class, () -> StepShape.parse("8192x8192")).getMessage());
        assertEquals("--shape 'axbxc': expected three whole numbers, e.g. 8192x8192x28672",
                assertThrows(IllegalArgumentException.class, () -> StepShape.parse("axbxc")).getMessage());
        assertEquals("--shape 0x8x8: every size must be at least 1",
                assertThrows(IllegalArgumentException.class, () -> StepShape.parse("0x8x8")).getMessage());
        assertEquals("tokens 255 do not split over 2 ranks", StepShape.parse("255x256x512").unsplittable(2));
        assertEquals("ffn 510 does not split over 4 ranks", StepShape.parse("256x256x510").unsplittable(4));
    }

    @Test
    void optionsAreCheckedBeforeAnyGpuWork() {
        StepOptions o = new StepOptions();
        new CommandLine(o).parseArgs("--shape", "2048x2048x8192", "--rounds", "2");
        o.validate();
        assertEquals(new StepShape(2048, 2048, 8192), o.shape());
        assertEquals(2, o.rounds().rounds());
        StepOptions few = new StepOptions();
        new CommandLine(few).parseArgs("--reps", "4");
        assertEquals("--reps 4 is below " + dev.irisjvm.bench.RoundsOptions.MIN_REPS, assertThrows(IllegalArgumentException.class, few::validate).getMessage());
    }
}
