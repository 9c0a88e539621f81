package dev.irisjvm.kernels.moe;

import static dev.irisjvm.kernels.moe.MoeCheckAssertions.assertMessage;
import static dev.irisjvm.kernels.moe.MoeCheckAssertions.t;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.irisjvm.core.DType;
import dev.irisjvm.kernels.TensorChecks;
import dev.irisjvm.kernels.moe.MoeChecks.Operand;
import org.junit.jupiter.api.Test;

/** The argument checks of MoeDispatch and MoeCombine, with their messages (no GPU). */
class MoeChecksTest {

    @Test
    void expertsMustSplitEvenlyOverTheNode() {
        MoeConfig c = MoeConfig.of(64, 6, 2, 16, 8);
        MoeChecks.layer(0, "MoeDispatch.create", c, 2);
        MoeChecks.layer(0, "MoeDispatch.create", c, 3);
        assertMessage("rank 1: MoeDispatch.create: experts is 6, which the node's 4 ranks do not divide (each rank holds experts"
                + " / world of them)", () -> MoeChecks.layer(1, "MoeDispatch.create", c, 4));
    }

    @Test
    void anExpertsRowCountMustFitInt32() {
        MoeConfig c = MoeConfig.of(8, 8, 8, Integer.MAX_VALUE / 8, 1);
        assertMessage("rank 0: MoeDispatch.create: 8 ranks x maxTokens 268435455 x topK 8 = 17179869120 routes; expected at most "
                + "2147483647 (an expert's rows are counted in int32)", () -> MoeChecks.layer(0, "MoeDispatch.create", c, 8));
    }

    @Test
    void buffersWhoseSizeOverflowsAreRefused() {
        MoeConfig c = MoeConfig.of(1 << 30, 1024, 1, 1, Integer.MAX_VALUE);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> MoeChecks.layer(2, "MoeDispatch.create", c, 1));
        assertEquals(true, e.getMessage().startsWith("rank 2: MoeDispatch.create: the receive buffer would take 1024 x 2147483647 x "
                + "1073741824 x 2 bytes"), e.getMessage());
    }

    @Test
    void numTokensIsBetweenZeroAndMaxTokens() {
        MoeChecks.numTokens(0, "dispatch", 0, 16);
        MoeChecks.numTokens(0, "dispatch", 16, 16);
        assertMessage("rank 3: dispatch: numTokens is 17; expected 0 to maxTokens (16)", () -> MoeChecks.numTokens(3, "dispatch", 17, 16));
        assertMessage("rank 3: dispatch: numTokens is -1; expected 0 to maxTokens (16)", () -> MoeChecks.numTokens(3, "dispatch", -1, 16));
    }

    @Test
    void matricesNeedTheirDtypeWidthAndEnoughRows() {
        MoeChecks.matrix(0, "dispatch", t("tokens", DType.BF16, 20, 64), DType.BF16, 64, 20, "hidden");
        MoeChecks.matrix(0, "dispatch", t("tokens", DType.BF16, 20, 64), DType.BF16, 64, 0, "hidden");
        assertMessage("rank 1: dispatch: tokens has shape [20, 32]; expected [rows, 64] (rows >= numTokens 20, hidden 64)",
                () -> MoeChecks.matrix(1, "dispatch", t("tokens", DType.BF16, 20, 32), DType.BF16, 64, 20, "hidden"));
        assertMessage("rank 1: dispatch: expertIds has shape [10, 2]; expected [rows, 2] (rows >= numTokens 11, topK 2)",
                () -> MoeChecks.matrix(1, "dispatch", t("expertIds", DType.I32, 10, 2), DType.I32, 2, 11, "topK"));
        assertMessage("rank 1: dispatch: weights has shape [1280]; expected [rows, 2]",
                () -> MoeChecks.matrix(1, "dispatch", t("weights", DType.F32, 1280), DType.F32, 2, 11, "topK"));
        assertMessage("rank 0: dispatch: weights has dtype BF16; expected F32",
                () -> MoeChecks.matrix(0, "dispatch", t("weights", DType.BF16, 16, 2), DType.F32, 2, 11, "topK"));
        assertMessage("rank 0: dispatch: expertIds has dtype I64; expected I32",
                () -> MoeChecks.matrix(0, "dispatch", t("expertIds", DType.I64, 16, 2), DType.I32, 2, 11, "topK"));
    }

    @Test
    void expertOutputsHaveTheReceiveBuffersShape() {
        MoeChecks.expertOutputs(0, "combine", t("expertOutputs", DType.BF16, 4, 32, 64), DType.BF16, 4, 32, 64);
        MoeChecks.expertOutputs(0, "combine", t("expertOutputs", DType.BF16, 128, 64), DType.BF16, 4, 32, 64);
        assertMessage("rank 2: combine: expertOutputs has shape [4, 31, 64]; expected [4, 32, 64] (local experts, capacity, hidden: "
                        + "the receive buffer's shape) or [128, 64]",
                () -> MoeChecks.expertOutputs(2, "combine", t("expertOutputs", DType.BF16, 4, 31, 64), DType.BF16, 4, 32, 64));
        assertMessage("rank 2: combine: expertOutputs has dtype F32; expected BF16",
                () -> MoeChecks.expertOutputs(2, "combine", t("expertOutputs", DType.F32, 4, 32, 64), DType.BF16, 4, 32, 64));
    }

    @Test
    void theLowLatencyLayerSplitsExpertsEvenlyAndCountsItsBytes() {
        MoeConfig c = MoeConfig.of(7168, 256, 8, 128, 1);
        MoeChecks.lowLatencyLayer(0, "MoeLowLatency.create", c, 8);
        assertMessage("rank 1: MoeLowLatency.create: experts is 256, which the node's 3 ranks do not divide",
                () -> MoeChecks.lowLatencyLayer(1, "MoeLowLatency.create", c, 3));
        MoeConfig huge = MoeConfig.of(1 << 30, 1024, 1024, Integer.MAX_VALUE / 1024, 1);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> MoeChecks.lowLatencyLayer(2, "MoeLowLatency.create", huge, 8));
        assertEquals(true, e.getMessage().startsWith("rank 2: MoeLowLatency.create: the receive buffer would take "), e.getMessage());
    }

    @Test
    void lowLatencyOutputsHaveTheReceiveBuffersShape() {
        MoeChecks.lowLatencyOutputs(0, "combine", t("expertOutputs", DType.BF16, 2, 4, 16, 64), DType.BF16, 2, 4, 16, 64);
        MoeChecks.lowLatencyOutputs(0, "combine", t("expertOutputs", DType.BF16, 128, 64), DType.BF16, 2, 4, 16, 64);
        assertMessage("rank 3: combine: expertOutputs has shape [2, 4, 15, 64]; expected [2, 4, 16, 64] (local experts, source ranks,"
                        + " rows per source, hidden: the receive buffer's shape) or [128, 64]",
                () -> MoeChecks.lowLatencyOutputs(3, "combine", t("expertOutputs", DType.BF16, 2, 4, 15, 64), DType.BF16, 2, 4, 16, 64));
        assertMessage("rank 3: combine: expertOutputs has dtype F32; expected BF16",
                () -> MoeChecks.lowLatencyOutputs(3, "combine", t("expertOutputs", DType.F32, 128, 64), DType.BF16, 2, 4, 16, 64));
    }

    @Test
    void tensorsMustBeLiveAndOnThisHeap() {
        assertMessage("rank 0: dispatch: tokens gone was freed",
                () -> MoeChecks.usable(0, "dispatch", new Operand("tokens", DType.BF16, new long[] {1, 8}, false, true, "gone")));
        assertMessage("rank 0: dispatch: tokens other is not on this Iris instance's symmetric heap",
                () -> MoeChecks.usable(0, "dispatch", new Operand("tokens", DType.BF16, new long[] {1, 8}, true, false, "other")));
        assertMessage("rank 5: combine: out must not be null", () -> TensorChecks.notNull(5, "combine", "out", null));
    }
}
