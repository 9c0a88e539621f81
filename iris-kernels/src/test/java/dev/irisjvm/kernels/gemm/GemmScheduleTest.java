package dev.irisjvm.kernels.gemm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.irisjvm.core.DType;
import dev.irisjvm.kernels.HostPrograms;
import dev.irisjvm.runtime.abi.global.KernelAbi;
import dev.irisjvm.runtime.abi.iris_gemm_args;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.opentest4j.AssertionFailedError;

/**
 * The GEMM's tiles and plans against the kernels' own code, on the CPU: the host program
 * src/test/native/gemm_schedule.cu lists gemm.cu's tiles as their Configs have them, and runs
 * iris/gemm/stream_k.cuh's scheduler as each CTA of a launch would, checking what the launch
 * computes (every k-block of every tile once, clusters in step, the fix-up's pieces, slots and
 * counters). This test holds {@link GemmTile} against the first, and feeds the second each plan of
 * {@link StreamKPlan#candidates} in every tile, as {@code Gemm} fills {@code iris_gemm_args}: the
 * kernel shares the units the plan shares, split-K's slices are its pieces, every stream-K range has
 * its k-blocks, and the workspace {@link StreamKWorkspace} allocates holds what the launch touches.
 * It also holds each tile's box rows against what src/test/native/gemm_loads.cu found one CTA
 * loads of its tile.
 */
class GemmScheduleTest {
    private static final Pattern OK = Pattern.compile(
            "ok units (\\d+) shared (\\d+) k_blocks (\\d+) pieces (\\d+)\\.\\.(\\d+) range (\\d+) slots_floats (\\d+) counters (\\d+)");
    private static final long[] ROWS = {1, 8, 16, 32, 33, 48, 64, 65, 128, 256, 512, 1000, 2049, 4096, 16384};
    private static final long[] COLS = {512, 1000, 1280, 3584, 4104, 8192, 28672};
    private static final long[] DEPTHS = {256, 512, 1032, 4096, 8200};

    /** One launch: the plan, the problem it was made for and the SMs it was made on. */
    private record Launch(StreamKPlan plan, int m, int n, int k, int groupM, int sms) {
        /**
         * The program's input line: the struct's fields as {@code Gemm} fills them for this plan (a
         * swapped tile's product n x m), the kernel named by the tile's part ("-" for none).
         */
        String line(GemmArgs args) {
            DeviceMatrix a = new DeviceMatrix(1L << 40, DType.BF16, m, k, k);
            DeviceMatrix b = new DeviceMatrix(2L << 40, DType.BF16, n, k, k);
            DeviceMatrix c = new DeviceMatrix(3L << 40, DType.BF16, m, n, n);
            iris_gemm_args s = args.operands(new GemmProblem(a, b, GemmLayout.NK, 0, c), groupM, plan, 4L << 40, 5L << 40);
            return part(plan.tile()) + " " + s.m() + " " + s.n() + " " + s.k() + " " + s.group_m() + " " + plan.grid() + " " + s.stream_k_tiles();
        }

        @Override
        public String toString() {
            return plan + " for " + m + " x " + n + " x " + k + " (group " + groupM + ", " + sms + " SMs)";
        }
    }

    @Test
    void everyPlanComputesEveryKBlockOfEveryTileOnceInTheKernelsOwnScheduler() throws Exception {
        long seed = System.nanoTime();
        Random random = new Random(seed);
        List<long[]> shapes = new ArrayList<>();
        for (long m : ROWS) {
            for (long n : COLS) {
                for (long k : DEPTHS) {
                    shapes.add(new long[] {m, n, k});
                }
            }
        }
        for (int i = 0; i < 60; i++) {  // odd sizes around the tiles' edges
            shapes.add(new long[] {1 + random.nextInt(3000), 8 * (1 + random.nextInt(1200)), 8 * (1 + random.nextInt(2000))});
        }
        List<Launch> launches = new ArrayList<>();
        for (long[] s : shapes) {
            int m = (int) s[0];
            int n = (int) s[1];
            int k = (int) s[2];
            for (int sms : new int[] {132, 114}) {
                Set<StreamKPlan> plans = new LinkedHashSet<>(StreamKPlan.candidates(GemmTile.all(m), m, n, Gemm.kBlocks(k), sms, true));
                plans.add(Gemm.plan(m, n, k, sms, true));
                for (StreamKPlan plan : plans) {
                    launches.add(new Launch(plan, m, n, k, Gemm.DEFAULT_GROUP_M, sms));
                }
                launches.add(new Launch(Gemm.plan(m, n, k, sms, true), m, n, k, 3, sms));
            }
        }

        List<String> answers = run(launches);
        for (int i = 0; i < launches.size(); i++) {
            check(launches.get(i), answers.get(i), seed);
        }
    }

    @Test
    void everyTileIsAKernelTileOfTheSameShapeThreadsAndClusters() throws Exception {
        List<String> kernels = HostPrograms.lines("gemm_schedule", List.of("--tiles"), "");
        List<String> tiles = new ArrayList<>();
        for (GemmTile t : GemmTile.values()) {
            tiles.add("tile " + part(t) + " " + t.rows() + " " + t.cols() + " " + t.threads() + " "
                    + t.clusterM() + " " + t.clusterN());
        }
        assertEquals(kernels, tiles, "gemm_tiles.cuh's tiles, in its order, are GemmTile's");
    }

    @Test
    void eachCtaLoadsTheShareOfItsTileThatTheMapsBoxesHold() throws Exception {
        // gemm_loads: "<part> <a layout> <b layout> a_share R a_box I O b_share C b_box I O ok" (MainloopMapsTest holds the boxes).
        int lines = 0;
        for (String line : HostPrograms.lines("gemm_loads", List.of(), "")) {
            String[] f = line.split(" ");
            GemmTile tile = tileNamed(f[0]);
            assertEquals(tile.aBoxRows(), Integer.parseInt(f[4]), () -> tile + ": the rows of A a CTA loads, " + line);
            assertEquals(tile.bBoxRows(), Integer.parseInt(f[9]), () -> tile + ": the rows of B a CTA loads, " + line);
            lines++;
        }
        long unswapped = Arrays.stream(GemmTile.values()).filter(t -> !t.swapped()).count();
        assertEquals(2 * GemmTile.values().length + 2 * unswapped, lines,
                "every tile with A stored either way and an N x K B, the unswapped ones with a K x N B too");
    }

    /** The tile as the host programs name it: its kernels' part, "-" for none. */
    private static String part(GemmTile tile) {
        return tile.namePart().isEmpty() ? "-" : tile.namePart();
    }

    private static GemmTile tileNamed(String part) {
        for (GemmTile t : GemmTile.values()) {
            if (part(t).equals(part)) {
                return t;
            }
        }
        throw new AssertionError("no GemmTile has kernels iris_gemm_" + part + "*");
    }

    @Test
    void aPlanTheKernelDoesNotTakeIsFound() throws Exception {
        // 999 shared units of 64: the kernel runs every unit whole instead, and the check says so.
        Launch refused = new Launch(new StreamKPlan(GemmTile.WIDE, 132, 999), 512, 4096, 4096, 8, 132);
        List<String> answers = run(List.of(refused, new Launch(new StreamKPlan(GemmTile.PAIR, 3, 0), 512, 4096, 4096, 8, 132)));
        assertTrue(answers.get(0).startsWith("ok units 64 shared 0 "), answers.get(0));
        AssertionFailedError e = assertThrows(AssertionFailedError.class, () -> check(refused, answers.get(0), 0));
        assertTrue(e.getMessage().contains("the kernel shares other units than the plan"), e::getMessage);
        assertEquals("error grid 3 is not whole clusters of 2", answers.get(1));
    }

    private static void check(Launch launch, String answer, long seed) {
        Matcher ok = OK.matcher(answer);
        if (!ok.matches()) {
            fail(launch + ": " + answer + " (seed " + seed + ")");
        }
        StreamKPlan plan = launch.plan();
        long units = plan.units(launch.m(), launch.n());
        assertEquals(units, Long.parseLong(ok.group(1)), () -> launch + ": the kernel's units");
        assertEquals(plan.sharedTiles(), Integer.parseInt(ok.group(2)), () -> launch + ": the kernel shares other units than the plan");
        assertEquals(Gemm.kBlocks(launch.k()), Integer.parseInt(ok.group(3)), () -> launch + ": k-blocks");
        int fewest = Integer.parseInt(ok.group(4));
        int most = Integer.parseInt(ok.group(5));
        if (plan.sharedTiles() > 0 && plan.isSplitK(units)) {
            int slices = (int) (plan.clusters() / units);
            assertTrue(fewest == slices && most == slices, () -> launch + ": split-K in " + slices + " slices ran " + fewest + " to " + most);
        }
        if (plan.sharedTiles() > 0) {
            assertTrue(Integer.parseInt(ok.group(6)) >= KernelAbi.IRIS_GEMM_STREAM_K_MIN_BLOCKS,
                    () -> launch + ": a cluster's stream-K range has " + ok.group(6) + " k-blocks");
        }
        long partialFloats = StreamKPlan.partialBytes(launch.sms()) / Float.BYTES;
        long counters = StreamKPlan.counterBytes(StreamKPlan.maxSharedTiles(launch.sms())) / Integer.BYTES;
        assertTrue(Long.parseLong(ok.group(7)) <= partialFloats, () -> launch + ": partials past the workspace's " + partialFloats + " floats");
        assertTrue(Long.parseLong(ok.group(8)) <= counters, () -> launch + ": counters past the workspace's " + counters);
    }

    /** The program's answers to {@code launches}, in order. */
    private static List<String> run(List<Launch> launches) throws IOException, InterruptedException {
        StringBuilder lines = new StringBuilder();
        try (GemmArgs args = new GemmArgs()) {
            launches.forEach(l -> lines.append(l.line(args)).append('\n'));
        }
        List<String> answers = HostPrograms.lines("gemm_schedule", List.of(), lines.toString());
        assertEquals(launches.size(), answers.size(), "one answer per launch");
        return answers;
    }
}
