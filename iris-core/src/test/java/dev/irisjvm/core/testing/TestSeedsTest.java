package dev.irisjvm.core.testing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class TestSeedsTest {
    @Test
    void mix64IsSplitmix64sFinalizer() {
        // splitmix64 seeded with 0: its first output is the finalizer of 0 + the golden gamma.
        assertEquals(0xE220A8397B1DCDAFL, TestSeeds.mix64(0));
    }

    @Test
    void derivedSeedsDependOnEveryArgumentAndNothingElse() {
        long a = TestSeeds.derive(42, "case", 1, 2);
        assertEquals(a, TestSeeds.derive(42, "case", 1, 2));
        assertNotEquals(a, TestSeeds.derive(43, "case", 1, 2));
        assertNotEquals(a, TestSeeds.derive(42, "other", 1, 2));
        assertNotEquals(a, TestSeeds.derive(42, "case", 2, 1));
        assertEquals(TestSeeds.mix64(TestSeeds.mix64(42 ^ "case".hashCode()) ^ 7), TestSeeds.derive(42, "case", 7));
    }

    @Test
    void aScenarioTableRunsInOrderWithItsMeetingAndMustMatchTheExpectedNames() {
        List<String> log = new ArrayList<>();
        Map<String, ScenarioRunner.Scenario> table = new LinkedHashMap<>();
        table.put("first", () -> log.add("first"));
        table.put("second", () -> {
            log.add("second");
            throw new AssertionError("fails");
        });
        assertEquals(1, ScenarioRunner.runTable(table, List.of("first", "second"), () -> log.add("meet")));
        assertEquals(List.of("first", "meet", "second", "meet"), log);
        assertThrows(IllegalStateException.class, () -> ScenarioRunner.runTable(table, List.of("second", "first"), () -> {}));
    }
}
