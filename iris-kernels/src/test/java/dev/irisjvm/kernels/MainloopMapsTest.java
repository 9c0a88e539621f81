package dev.irisjvm.kernels;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.irisjvm.kernels.gemm.Gemm;
import org.junit.jupiter.api.Test;

/** The boxes of B's tensor maps the mainloop's loads expect (iris/gemm/config.cuh kKnBoxRows), without a GPU. */
class MainloopMapsTest {
    @Test
    void aKnBoxHoldsSixtyFourRowsOfKUnlessAClusterSplitsIt() {
        for (int tileN : new int[] {Gemm.TILE_N, Gemm.MID_TILE_N, Gemm.NARROW_TILE_N, Gemm.THIN_TILE_N, Gemm.MID_TILE_N / 2}) {
            assertEquals(Gemm.TILE_K, MainloopMaps.knBoxRows(tileN), "tile width " + tileN);
        }
        assertEquals(Gemm.TILE_K / 2, MainloopMaps.knBoxRows(Gemm.THIN_TILE_N / 2), "a CTA of a 64 x 64 pair loads half the K rows");
        assertEquals(Gemm.TILE_K / 4, MainloopMaps.knBoxRows(Gemm.THIN_TILE_N / 4), "a CTA of a column of four, a quarter");
    }

    @Test
    void aKmBoxHoldsSixtyFourRowsOfKUnlessAClusterThatSharesASplitsIt() {
        assertEquals(Gemm.TILE_K, MainloopMaps.knBoxRows(Gemm.TILE_M));
        assertEquals(Gemm.TILE_K, MainloopMaps.knBoxRows(Gemm.SHORT_TILE_M));
        assertEquals(Gemm.TILE_K / 2, MainloopMaps.knBoxRows(Gemm.SHORT_TILE_M / 2));
        assertTrue(MainloopMaps.takesTileM(Gemm.SHORT_TILE_M / 2));
        assertFalse(MainloopMaps.takesTileM(Gemm.TILE_M / 2 + 1));
    }

    @Test
    void theTileWidthsAreThoseOfTheKernelsTheirPairsAndTheSwappedRows() {
        assertTrue(MainloopMaps.takesTileN(Gemm.THIN_TILE_N / 2));
        assertTrue(MainloopMaps.takesTileN(Gemm.THIN_TILE_N / 4));
        assertTrue(MainloopMaps.takesTileN(8), "a swapped kernel's 8 rows of C");
        assertTrue(MainloopMaps.takesTileN(48), "a swapped kernel's 48 rows of C");
        assertFalse(MainloopMaps.takesTileN(24));
        assertFalse(MainloopMaps.takesTileN(100));
    }
}
