package dev.irisjvm.kernels.moe;

import static dev.irisjvm.kernels.moe.MoeCheckAssertions.assertMessage;
import static dev.irisjvm.kernels.moe.MoeCheckAssertions.t;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.irisjvm.core.DType;
import org.junit.jupiter.api.Test;

/** The argument checks of MoeExpertGemm, with their messages, and its tile width and grid (no GPU). */
class MoeExpertGemmChecksTest {

    @Test
    void theCapacityIsWholeTilesAndNWholeNarrowTiles() {
        MoeExpertGemmChecks.layer(0, "MoeExpertGemm.create", MoeConfig.of(256, 8, 2, 100, 256), 4, 128);
        MoeExpertGemmChecks.layer(0, "MoeExpertGemm.create", MoeConfig.of(256, 8, 2, 100, 128), 4, 384);
        assertMessage("rank 1: MoeExpertGemm.create: the dispatch's capacity is 200; expected a multiple of 128 (each expert's rows must"
                        + " start a GEMM tile of the receive buffer): create the MoeDispatch with capacity 256",
                () -> MoeExpertGemmChecks.layer(1, "MoeExpertGemm.create", MoeConfig.of(256, 8, 2, 100, 200), 4, 256));
        assertMessage("rank 2: MoeExpertGemm.create: n is 192; expected a positive multiple of 128",
                () -> MoeExpertGemmChecks.layer(2, "MoeExpertGemm.create", MoeConfig.of(256, 8, 2, 100, 128), 4, 192));
        assertMessage("rank 2: MoeExpertGemm.create: n is 0; expected a positive multiple of 128",
                () -> MoeExpertGemmChecks.layer(2, "MoeExpertGemm.create", MoeConfig.of(256, 8, 2, 100, 128), 4, 0));
    }

    @Test
    void rowsAndWeightRowsFitInt32() {
        MoeConfig c = MoeConfig.of(8, 1024, 1, 1, 1 << 22);
        assertMessage("rank 0: MoeExpertGemm.create: 1024 local experts x capacity 4194304 = 4294967296 rows and x n 128 = 131072 weight"
                + " rows; expected both at most 2147483647", () -> MoeExpertGemmChecks.layer(0, "MoeExpertGemm.create", c, 1024, 128));
    }

    @Test
    void theWideTileWhereItDividesN() {
        assertEquals(256, MoeExpertGemmChecks.tileN(256));
        assertEquals(256, MoeExpertGemmChecks.tileN(7168));
        assertEquals(128, MoeExpertGemmChecks.tileN(384));
        assertEquals(128, MoeExpertGemmChecks.tileN(128));
    }

    @Test
    void theGridIsTheCapacityBoundAtMostOnePerSm() {
        assertEquals(2 * 3 * 2, MoeExpertGemm.blocks(132, 2, 384, 512), "2 experts x 3 tile rows x 2 tile columns");
        assertEquals(132, MoeExpertGemm.blocks(132, 64, 1024, 4096));
        assertEquals(3, MoeExpertGemm.blocks(132, 1, 128, 384), "384 columns in 128-column tiles");
    }

    @Test
    void weightsAndOutputsAreStackedPerExpert() {
        MoeExpertGemmChecks.weights(0, "gemm", t("weights", DType.BF16, 4, 384, 256), DType.BF16, 4, 384, 256);
        MoeExpertGemmChecks.weights(0, "gemm", t("weights", DType.BF16, 1536, 256), DType.BF16, 4, 384, 256);
        assertMessage("rank 3: gemm: weights has shape [4, 256, 384]; expected [4, 384, 256] (local experts, n, hidden: each expert's"
                        + " weight is n x hidden) or [1536, 256]",
                () -> MoeExpertGemmChecks.weights(3, "gemm", t("weights", DType.BF16, 4, 256, 384), DType.BF16, 4, 384, 256));
        assertMessage("rank 3: gemm: weights has dtype F32; expected BF16",
                () -> MoeExpertGemmChecks.weights(3, "gemm", t("weights", DType.F32, 4, 384, 256), DType.BF16, 4, 384, 256));
        MoeExpertGemmChecks.outputs(0, "gemm", t("out", DType.BF16, 4, 128, 384), DType.BF16, 4, 128, 384);
        assertMessage("rank 1: gemm: out has shape [4, 128, 256]; expected [4, 128, 384] (local experts, capacity, n: the receive"
                        + " buffer's rows) or [512, 384]",
                () -> MoeExpertGemmChecks.outputs(1, "gemm", t("out", DType.BF16, 4, 128, 256), DType.BF16, 4, 128, 384));
    }

    @Test
    void combineNeedsNEqualToHidden() {
        MoeExpertGemmChecks.combinable(0, "gemmAndCombine", 512, 512);
        assertMessage("rank 1: gemmAndCombine: this MoeExpertGemm has n = 384 output columns per expert, and combine sums rows of"
                + " hidden = 256 columns; expected n = hidden", () -> MoeExpertGemmChecks.combinable(1, "gemmAndCombine", 384, 256));
    }

    @Test
    void theOutputMayNotOverlapTheReceiveBuffer() {
        MoeExpertGemmChecks.disjoint(0, "gemm", "out", 0x1000, 0x100, 0x1100, 0x100);
        MoeExpertGemmChecks.disjoint(0, "gemm", "out", 0x1200, 0x100, 0x1100, 0x100);
        assertMessage("rank 2: gemm: out overlaps the dispatch's receive buffer",
                () -> MoeExpertGemmChecks.disjoint(2, "gemm", "out", 0x1000, 0x101, 0x1100, 0x100));
        assertMessage("rank 2: gemm: out overlaps the dispatch's receive buffer",
                () -> MoeExpertGemmChecks.disjoint(2, "gemm", "out", 0x1150, 0x10, 0x1100, 0x100));
    }
}
