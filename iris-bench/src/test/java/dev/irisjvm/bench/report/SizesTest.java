package dev.irisjvm.bench.report;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import org.junit.jupiter.api.Test;

class SizesTest {
    @Test
    void binaryUnits() {
        assertEquals("8 B", Sizes.bytes(8));
        assertEquals("4 KiB", Sizes.bytes(4096));
        assertEquals("1.5 KiB", Sizes.bytes(1536));
        assertEquals("256 MiB", Sizes.bytes(256L << 20));
        assertEquals("1 GiB", Sizes.bytes(1L << 30));
    }

    @Test
    void numbersKeepAboutThreeDigits() {
        assertEquals("478", Sizes.number(478.08));
        assertEquals("12.3", Sizes.number(12.34));
        assertEquals("1.35", Sizes.number(1.3456));
        assertEquals("—", Sizes.number(Double.NaN));
        assertEquals("0.96×", Sizes.ratio(380.0 / 396.0));
    }

    /** The rounding notes' numbers: a target at two decimals, and the near miss under it written exactly. */
    @Test
    void targetsAndTheirNearMisses() {
        assertEquals("0.90", Sizes.twoDecimals(0.9));
        assertEquals("1.25", Sizes.twoDecimals(1.25));
        assertEquals("0.9496", Sizes.justUnder(0.95, "0.0004"));
        assertEquals("0.8996", Sizes.justUnder(0.9, "0.0004"));
        assertEquals("1.149", Sizes.justUnder(1.15, "0.001"));
        assertEquals("0.999", Sizes.justUnder(1, "0.001"));
        assertEquals("0.949×", Sizes.ratio3(0.9494));
        assertEquals("—", Sizes.ratio3(Double.NaN));
    }

    @Test
    void medianOfEvenAndOddCounts() {
        assertEquals(2.0, Stats.median(List.of(3.0, 1.0, 2.0)).getAsDouble());
        assertEquals(2.5, Stats.median(List.of(4.0, 1.0, 2.0, 3.0)).getAsDouble());
        assertEquals(true, Stats.median(List.of()).isEmpty());
    }
}
