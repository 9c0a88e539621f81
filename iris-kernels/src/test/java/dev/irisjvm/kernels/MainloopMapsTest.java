package dev.irisjvm.kernels;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.irisjvm.kernels.gemm.Gemm;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The boxes of the operands' tensor maps the mainloop's loads expect (iris/gemm/impl/mainloop.cuh load_operand), without a GPU. */
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
    void theBoxesAreThoseTheMainloopsLoadsFillTheStageWith() throws Exception {
        // gemm_loads (src/test/native) ran every tile's loads of one stage on the host, with these boxes,
        // and found each CTA's stage filled once: "<part> <a> <b> a_share R a_box I O b_share C b_box I O ok".
        for (String line : HostPrograms.lines("gemm_loads", List.of(), "")) {
            String[] f = line.split(" ");
            assertEquals("ok", f[f.length - 1], line);
            boolean mk = f[1].equals("mk");
            boolean nk = f[2].equals("nk");
            int aShare = Integer.parseInt(f[4]);
            int bShare = Integer.parseInt(f[9]);
            assertEquals(List.of(mk ? MainloopMaps.A_BOX_INNER : MainloopMaps.A_KM_BOX_INNER, mk ? aShare : MainloopMaps.knBoxRows(aShare)),
                    List.of(Integer.parseInt(f[6]), Integer.parseInt(f[7])), () -> "A's box, " + line);
            assertEquals(List.of(nk ? MainloopMaps.B_NK_BOX_INNER : MainloopMaps.B_KN_BOX_INNER, nk ? bShare : MainloopMaps.knBoxRows(bShare)),
                    List.of(Integer.parseInt(f[11]), Integer.parseInt(f[12])), () -> "B's box, " + line);
        }
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
