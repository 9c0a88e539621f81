package dev.irisjvm.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

class IrisConfigTest {
    @Test
    void defaultsForASingleProcess() {
        IrisConfig c = IrisConfig.fromEnvironment(Map.of());
        assertEquals(0, c.rank());
        assertEquals(1, c.worldSize());
        assertEquals(IrisConfig.AUTO_DEVICE, c.device());
        assertEquals(0, c.deviceAmong(1));
        assertEquals(1L << 30, c.heapSize());
        assertFalse(c.checked());
        assertEquals(Duration.ofSeconds(30), c.deviceTimeout());
        assertEquals(Duration.ofSeconds(30), c.watchdogTimeout());
    }

    @Test
    void watchdogTimeoutFromTheEnvironmentOrAWither() {
        assertEquals(Duration.ofMillis(2500),
                IrisConfig.fromEnvironment(Map.of("IRIS_WATCHDOG_TIMEOUT_MS", "2500")).watchdogTimeout());
        IrisConfig c = IrisConfig.fromEnvironment(Map.of()).withWatchdogTimeout(Duration.ofSeconds(3));
        assertEquals(Duration.ofSeconds(3), c.watchdogTimeout());
        assertEquals(Duration.ofSeconds(3), c.withChecked(true).withSeed(5).withHeapSize(1L << 21).watchdogTimeout(),
                "the other withers keep it");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> c.withWatchdogTimeout(Duration.ZERO));
        assertTrue(e.getMessage().contains("rank 0: watchdogTimeout must be a positive duration"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class,
                () -> IrisConfig.fromEnvironment(Map.of("IRIS_WATCHDOG_TIMEOUT_MS", "later")));
        assertTrue(e.getMessage().contains("IRIS_WATCHDOG_TIMEOUT_MS"), e.getMessage());
    }

    @Test
    void readsIrisVariables() {
        IrisConfig c = IrisConfig.fromEnvironment(Map.of("IRIS_RANK", "1", "IRIS_WORLD_SIZE", "2", "IRIS_LOCAL_RANK", "1",
                "IRIS_LOCAL_WORLD_SIZE", "2", "IRIS_HEAP_SIZE", "512m", "IRIS_CHECK", "1", "IRIS_DEVICE_TIMEOUT_MS", "1500",
                "IRIS_SEED", "42"));
        assertEquals(1, c.rank());
        assertEquals(IrisConfig.AUTO_DEVICE, c.device());
        assertEquals(1, c.deviceAmong(2));
        assertEquals(512L << 20, c.heapSize());
        assertTrue(c.checked());
        assertEquals(Duration.ofMillis(1500), c.deviceTimeout());
        assertEquals(42, c.seed());
        assertEquals(3, IrisConfig.fromEnvironment(Map.of("IRIS_DEVICE", "3")).device());
    }

    @Test
    void sizesParseWithUnits() {
        assertEquals(64L << 10, IrisConfig.parseSize("64k", 0));
        assertEquals(2L << 30, IrisConfig.parseSize("2G", 0));
        assertEquals(123, IrisConfig.parseSize(" 123 ", 0));
        assertEquals(9, IrisConfig.parseSize(null, 9));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> IrisConfig.parseSize("1.5g", 0));
        assertTrue(e.getMessage().contains("IRIS_HEAP_SIZE") && e.getMessage().contains("1.5g"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> IrisConfig.parseSize("99999999999t", 0));
    }

    @Test
    void badValuesNameTheVariableOrArgument() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> IrisConfig.fromEnvironment(Map.of("IRIS_DEVICE_TIMEOUT_MS", "soon")));
        assertTrue(e.getMessage().contains("IRIS_DEVICE_TIMEOUT_MS"), e.getMessage());
        IrisConfig c = IrisConfig.fromEnvironment(Map.of());
        e = assertThrows(IllegalArgumentException.class, () -> c.withHeapSize(4096));
        assertTrue(e.getMessage().contains("heapSize") && e.getMessage().contains("rank 0"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> c.withDeviceTimeout(Duration.ZERO));
        assertTrue(e.getMessage().contains("deviceTimeout"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> c.withDevice(-2));
        assertTrue(e.getMessage().contains("device"), e.getMessage());
    }

    @Test
    void autoDeviceSharesGpusRoundRobin() {
        for (int local = 0; local < 4; local++) {
            IrisConfig c = IrisConfig.fromEnvironment(Map.of("IRIS_RANK", "" + local, "IRIS_WORLD_SIZE", "4",
                    "IRIS_LOCAL_RANK", "" + local, "IRIS_LOCAL_WORLD_SIZE", "4"));
            assertEquals(0, c.deviceAmong(1), "one GPU: every rank on it");
            assertEquals(local % 2, c.deviceAmong(2));
            assertEquals(local, c.deviceAmong(8));
        }
        IrisConfig explicit = IrisConfig.fromEnvironment(Map.of("IRIS_DEVICE", "1"));
        assertEquals(1, explicit.deviceAmong(2));
        IrisException e = assertThrows(IrisException.class, () -> explicit.deviceAmong(1));
        assertEquals("rank 0: device 1 requested (IRIS_DEVICE) but only 1 GPU(s) are visible", e.getMessage());
        e = assertThrows(IrisException.class, () -> explicit.deviceAmong(0));
        assertEquals("rank 0: no GPU is visible to this process", e.getMessage());
    }

    @Test
    void deviceVariableIsAnIndexNotAWrappedNumber() {
        for (String bad : new String[] {"4294967297", "-1", "gpu0", "1024"}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> IrisConfig.fromEnvironment(Map.of("IRIS_DEVICE", bad)));
            assertEquals("rank 0: IRIS_DEVICE must be a GPU index in [0, 1023], got '" + bad + "'", e.getMessage());
        }
        assertEquals(1023, IrisConfig.fromEnvironment(Map.of("IRIS_DEVICE", " 1023 ")).device());
    }

    @Test
    void checkAcceptsOnlyTheUsualSpellingsOfOnAndOff() {
        for (String on : new String[] {"1", "true", "TRUE", "yes", "Yes", "on", " ON "}) {
            assertTrue(IrisConfig.fromEnvironment(Map.of("IRIS_CHECK", on)).checked(), on);
        }
        for (String off : new String[] {"0", "false", "False", "no", "NO", "off", ""}) {
            assertFalse(IrisConfig.fromEnvironment(Map.of("IRIS_CHECK", off)).checked(), off);
        }
        for (String bad : new String[] {"2", "enabled", "y", "treu"}) {
            assertEquals("IRIS_CHECK must be one of 1, true, yes, on (on) or 0, false, no, off (off), in any case, got '"
                    + bad + "'", badValue("IRIS_CHECK", bad));
        }
    }

    @Test
    void heapSizeIsAMultipleOfTwoMebibytesUpToOneTebibyte() {
        assertEquals(2L << 20, IrisConfig.fromEnvironment(Map.of("IRIS_HEAP_SIZE", "2m")).heapSize());
        assertEquals(1L << 40, IrisConfig.fromEnvironment(Map.of("IRIS_HEAP_SIZE", "1t")).heapSize());
        assertEquals(6L << 20, IrisConfig.fromEnvironment(Map.of("IRIS_HEAP_SIZE", "6291456")).heapSize());
        assertEquals("IRIS_HEAP_SIZE must be a multiple of 2 MiB (2097152 bytes) from 2m to 1t (1099511627776 bytes),"
                + " got '1000000' (1000000 bytes)", badValue("IRIS_HEAP_SIZE", "1000000"));
        for (String bad : new String[] {"1m", "3m", "0", "-2m", "2049g", "2t"}) {
            assertTrue(badValue("IRIS_HEAP_SIZE", bad).startsWith("IRIS_HEAP_SIZE must be a multiple of 2 MiB"), bad);
        }
        assertEquals("IRIS_HEAP_SIZE must be a byte count with an optional k/m/g/t suffix, got 'lots'",
                badValue("IRIS_HEAP_SIZE", "lots"));
        IrisConfig c = IrisConfig.fromEnvironment(Map.of());
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> c.withHeapSize(2L << 40));
        assertEquals("rank 0: heapSize must be in [1048576, 1099511627776] bytes, got 2199023255552", e.getMessage());
    }

    @Test
    void timeoutsMustBeWithinTheirRanges() {
        assertEquals(Duration.ofMillis(1), IrisConfig.fromEnvironment(Map.of("IRIS_DEVICE_TIMEOUT_MS", "1")).deviceTimeout());
        assertEquals(Duration.ofDays(1),
                IrisConfig.fromEnvironment(Map.of("IRIS_RENDEZVOUS_TIMEOUT_MS", "86400000")).rendezvousTimeout());
        assertEquals(Duration.ofSeconds(1),
                IrisConfig.fromEnvironment(Map.of("IRIS_WATCHDOG_TIMEOUT_MS", "1000")).watchdogTimeout());
        assertEquals("IRIS_DEVICE_TIMEOUT_MS must be an integer number of milliseconds in [1, 86400000] (up to one day),"
                + " got '0'", badValue("IRIS_DEVICE_TIMEOUT_MS", "0"));
        assertEquals("IRIS_DEVICE_TIMEOUT_MS must be an integer number of milliseconds in [1, 86400000] (up to one day),"
                + " got '9223372036854775807'", badValue("IRIS_DEVICE_TIMEOUT_MS", "9223372036854775807"));
        assertEquals("IRIS_RENDEZVOUS_TIMEOUT_MS must be an integer number of milliseconds in [100, 86400000] (up to one"
                + " day), got '99'", badValue("IRIS_RENDEZVOUS_TIMEOUT_MS", "99"));
        assertEquals("IRIS_RENDEZVOUS_TIMEOUT_MS must be an integer number of milliseconds in [100, 86400000] (up to one"
                + " day), got '86400001'", badValue("IRIS_RENDEZVOUS_TIMEOUT_MS", "86400001"));
        assertEquals("IRIS_WATCHDOG_TIMEOUT_MS must be an integer number of milliseconds in [1000, 86400000] (up to one"
                + " day), got '999'", badValue("IRIS_WATCHDOG_TIMEOUT_MS", "999"));
        assertEquals("IRIS_WATCHDOG_TIMEOUT_MS must be an integer number of milliseconds in [1000, 86400000] (up to one"
                + " day), got '-5'", badValue("IRIS_WATCHDOG_TIMEOUT_MS", "-5"));
        IrisConfig c = IrisConfig.fromEnvironment(Map.of());
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> c.withWatchdogTimeout(Duration.ofMillis(500)));
        assertEquals("rank 0: watchdogTimeout must be between 1000 ms and 86400000 ms, got 500 ms", e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> c.withDeviceTimeout(Duration.ofDays(400)));
        assertEquals("rank 0: deviceTimeout must be between 1 ms and 86400000 ms, got 34560000000 ms", e.getMessage());
    }

    @Test
    void seedIsAnyLong() {
        assertEquals(Long.MIN_VALUE, IrisConfig.fromEnvironment(Map.of("IRIS_SEED", "-9223372036854775808")).seed());
        assertEquals(Long.MAX_VALUE, IrisConfig.fromEnvironment(Map.of("IRIS_SEED", " 9223372036854775807 ")).seed());
        assertEquals("IRIS_SEED must be an integer in [-9223372036854775808, 9223372036854775807], got '0x10'",
                badValue("IRIS_SEED", "0x10"));
        assertEquals("IRIS_SEED must be an integer in [-9223372036854775808, 9223372036854775807],"
                + " got '9223372036854775808'", badValue("IRIS_SEED", "9223372036854775808"));
    }

    private static String badValue(String name, String value) {
        return assertThrows(IllegalArgumentException.class,
                () -> IrisConfig.fromEnvironment(Map.of(name, value))).getMessage();
    }
}
