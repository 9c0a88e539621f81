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
}
