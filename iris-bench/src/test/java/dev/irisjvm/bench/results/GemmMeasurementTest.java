package dev.irisjvm.bench.results;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** The strongest baseline of a shape: the faster of cuBLAS and cuBLASLt, counting only timed points whose output passed. */
class GemmMeasurementTest {
    private static GemmMeasurement point(String impl, double tflops, String check) {
        return new GemmMeasurement("4096x4096x4096:nk", 4096, 4096, 4096, "nk", "bf16", "bf16", impl, 180, 2, 170, 168, 175, tflops,
                check, null, null);
    }

    @Test
    void theFasterBaselineWins() {
        GemmMeasurement cublas = point(GemmMeasurement.CUBLAS, 790, GemmMeasurement.REFERENCE);
        GemmMeasurement lt = point(GemmMeasurement.CUBLASLT, 805, GemmMeasurement.OK);
        assertSame(lt, GemmMeasurement.strongest(cublas, lt));
        assertSame(lt, GemmMeasurement.strongest(lt, cublas));
        GemmMeasurement slowLt = point(GemmMeasurement.CUBLASLT, 780, GemmMeasurement.OK);
        assertSame(cublas, GemmMeasurement.strongest(cublas, slowLt));
        GemmMeasurement tiedLt = point(GemmMeasurement.CUBLASLT, 790, GemmMeasurement.OK);
        assertSame(cublas, GemmMeasurement.strongest(cublas, tiedLt), "a tie goes to the first");
    }

    @Test
    void missingOrUnusableBaselinesDoNotCount() {
        GemmMeasurement cublas = point(GemmMeasurement.CUBLAS, 790, GemmMeasurement.REFERENCE);
        assertSame(cublas, GemmMeasurement.strongest(cublas, null), "a sweep from before cuBLASLt");
        GemmMeasurement lt = point(GemmMeasurement.CUBLASLT, 805, GemmMeasurement.OK);
        assertSame(lt, GemmMeasurement.strongest(null, lt));
        assertNull(GemmMeasurement.strongest(null, null));
        GemmMeasurement wrongLt = point(GemmMeasurement.CUBLASLT, 900, "relative difference to cuBLAS 0.5 exceeds 0.0083");
        assertSame(cublas, GemmMeasurement.strongest(cublas, wrongLt), "a wrong result is no rate to reach");
        assertNull(GemmMeasurement.strongest(null, point(GemmMeasurement.CUBLASLT, 0, GemmMeasurement.OK)), "not timed");
        assertNull(GemmMeasurement.strongest(point(GemmMeasurement.IRIS, 900, GemmMeasurement.OK), null), "Iris is no baseline");
    }

    @Test
    void checks() {
        assertFalse(point(GemmMeasurement.IRIS, 1, GemmMeasurement.OK).checkFailed());
        assertFalse(point(GemmMeasurement.CUBLAS, 1, GemmMeasurement.REFERENCE).checkFailed());
        assertFalse(point(GemmMeasurement.IRIS, 1, "not checked (no cuBLAS: --no-cublas)").checkFailed());
        assertTrue(point(GemmMeasurement.CUBLASLT, 1, "3 of 100 elements are not finite (unwritten?), first at index 7").checkFailed());
    }
}
