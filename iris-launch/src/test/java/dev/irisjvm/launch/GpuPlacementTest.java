package dev.irisjvm.launch;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class GpuPlacementTest {

    private static int[] devices(GpuPlacement p, int world) {
        return IntStream.range(0, world).map(p::device).toArray();
    }

    @Test
    void roundRobinOverTheGpus() {
        for (int world = 1; world <= 9; world++) {
            for (int gpus = 1; gpus <= 8; gpus++) {
                GpuPlacement p = GpuPlacement.plan(world, gpus, 0);
                int w = world;
                int g = gpus;
                assertArrayEquals(IntStream.range(0, w).map(r -> r % g).toArray(), devices(p, w));
                assertEquals(Math.min(w, g), p.gpusUsed());
                assertEquals((w + g - 1) / g, p.ranksPerGpu(), w + " ranks on " + g + " GPUs");
                assertEquals(w > g, p.sharesGpus(), w + " ranks on " + g + " GPUs");
            }
        }
    }

    @Test
    void ranksPerGpuFillsEachGpuInTurn() {
        GpuPlacement p = GpuPlacement.plan(5, 0, 2);
        assertArrayEquals(new int[] {0, 0, 1, 1, 2}, devices(p, 5));
        assertEquals(2, p.ranksPerGpu());
        assertEquals(3, p.gpusUsed());
        assertTrue(p.sharesGpus());
        assertArrayEquals(new int[] {0, 1}, devices(GpuPlacement.plan(2, 4, 1), 2));
        assertEquals("--ranks-per-gpu 2 puts 5 ranks on 3 GPUs, but only 2 are available",
                assertThrows(IllegalArgumentException.class, () -> GpuPlacement.plan(5, 2, 2)).getMessage());
    }

    @Test
    void unknownGpuCountLeavesTheChoiceToTheRanks() {
        GpuPlacement p = GpuPlacement.plan(3, 0, 0);
        assertFalse(p.isPlanned());
        assertFalse(p.sharesGpus());
        assertEquals(0, p.ranksPerGpu());
        assertTrue(p.describe().contains("chosen by each rank"), p.describe());
    }

    @Test
    void describesSharing() {
        assertEquals("4 ranks on 1 GPU (up to 4 per GPU: ranks share GPUs, which is for correctness runs; timings need one"
                + " GPU per rank)", GpuPlacement.plan(4, 1, 0).describe());
        assertEquals("2 ranks on 2 GPUs (one per GPU)", GpuPlacement.plan(2, 8, 0).describe());
    }

    @Test
    void rejectsWhatCannotBePlaced() {
        assertThrows(IllegalArgumentException.class, () -> GpuPlacement.plan(0, 1, 0));
        assertThrows(IllegalArgumentException.class, () -> GpuPlacement.plan(2, -1, 0));
        assertThrows(IllegalArgumentException.class, () -> GpuPlacement.plan(2, 0, -1));
        assertEquals("65 ranks would put 65 ranks on one GPU; at most 64 are supported",
                assertThrows(IllegalArgumentException.class, () -> GpuPlacement.plan(65, 1, 0)).getMessage());
    }

    @Test
    void countsVisibleGpus(@TempDir Path tmp) throws Exception {
        Path proc = tmp.resolve("gpus");
        assertEquals(0, GpuPlacement.countVisibleGpus(Map.of(), proc), "no driver directory");
        Files.createDirectories(proc.resolve("0000:1b:00.0"));
        Files.createDirectories(proc.resolve("0000:43:00.0"));
        assertEquals(2, GpuPlacement.countVisibleGpus(Map.of(), proc));
        assertEquals(1, GpuPlacement.countVisibleGpus(Map.of("CUDA_VISIBLE_DEVICES", "1"), proc));
        assertEquals(2, GpuPlacement.countVisibleGpus(Map.of("CUDA_VISIBLE_DEVICES", "GPU-8a1c,GPU-77f0"), proc));
        assertEquals(0, GpuPlacement.countVisibleGpus(Map.of("CUDA_VISIBLE_DEVICES", ""), proc));
        assertEquals(1, GpuPlacement.countVisibleGpus(Map.of("CUDA_VISIBLE_DEVICES", "3,-1,2"), proc),
                "the runtime stops at the first invalid entry");
    }
}
