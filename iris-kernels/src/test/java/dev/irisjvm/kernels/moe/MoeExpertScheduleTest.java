package dev.irisjvm.kernels.moe;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.irisjvm.kernels.HostPrograms;
import dev.irisjvm.kernels.gemm.Gemm;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The expert GEMM's units and tile order against the kernel's own code, on the CPU: the host program
 * src/test/native/moe_expert_schedule.cu builds the unit table from each case's counts as the kernel
 * does and runs its scheduler (moe_expert_schedule.cuh): every tile of every expert's received rows
 * once, none past its count or capacity or outside its weights, tile rows first within a column,
 * and never more units than {@link MoeExpertGemm#maxUnits}, whose bound sizes the grid.
 */
class MoeExpertScheduleTest {
    @Test
    void everyReceivedRowsTileRunsOnceAndNoMoreUnitsThanTheGridAllowsFor() throws Exception {
        long seed = System.nanoTime();
        Random random = new Random(seed);
        List<String> lines = new ArrayList<>();
        for (int n : new int[] {128, 256, 384, 1024, 4096, 14336}) {
            for (int capacity : new int[] {128, 256, 1024, 4096}) {
                for (int experts : new int[] {1, 2, 8, 33, 64}) {
                    StringBuilder line = new StringBuilder("experts " + MoeExpertGemmChecks.tileN(n) + " " + capacity + " " + n + " "
                            + MoeExpertGemm.maxUnits(experts, capacity, n));
                    for (int l = 0; l < experts; l++) {
                        // Empty experts, a row short of a tile, whole tiles, and counts past the capacity (dropped rows).
                        int count = switch (random.nextInt(5)) {
                            case 0 -> 0;
                            case 1 -> Gemm.TILE_M * (1 + random.nextInt(capacity / Gemm.TILE_M)) - 1;
                            case 2 -> capacity + random.nextInt(1000);
                            default -> random.nextInt(capacity + 1);
                        };
                        line.append(' ').append(count);
                    }
                    lines.add(line.toString());
                }
            }
        }
        // 3 experts of 1024 rows: 5 rows (1 tile row), 1024 (8), 2000 (8 of them, the capacity); 16 tile columns of 256.
        lines.add("experts 256 1024 4096 " + MoeExpertGemm.maxUnits(3, 1024, 4096) + " 5 1024 2000");
        List<String> answers = HostPrograms.okAnswers("moe_expert_schedule", lines, "seed " + seed + ", ");
        assertEquals("ok units " + 17 * 16, answers.get(answers.size() - 1));
    }
}
