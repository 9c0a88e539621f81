package dev.irisjvm.kernels.fused;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.irisjvm.kernels.gemm.Gemm;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * What the Java side shares with the fused kernels' sources (gemm_all_scatter.cu, gemm_reduce.cu,
 * all_gather_gemm.cu, gemm/*.cuh) agrees; read from the sources, so it runs without nvcc or a GPU.
 */
class FusedSourcesTest {
    private static final Path CUDA = Path.of("src/main/cuda");

    private static String read(String file) throws IOException {
        return Files.readString(CUDA.resolve(file));
    }

    @Test
    void waitSites() throws IOException {
        String common = read("gemm/fused_common.cuh");
        Matcher m = Pattern.compile("kSitePartialFlag = (\\d+),\\s+kSiteGatheredRows = (\\d+),\\s+kSiteHandoff = (\\d+),\\s+"
                + "kSiteGatherClear = (\\d+),\\s+kSiteSplitPartial = (\\d+)").matcher(common);
        assertTrue(m.find(), "FusedSite enum not found in fused_common.cuh");
        assertEquals(FusedSites.PARTIAL_FLAG, Integer.parseInt(m.group(1)));
        assertEquals(FusedSites.GATHERED_ROWS, Integer.parseInt(m.group(2)));
        assertEquals(FusedSites.HANDOFF, Integer.parseInt(m.group(3)));
        assertEquals(FusedSites.GATHER_CLEAR, Integer.parseInt(m.group(4)));
        assertEquals(FusedSites.SPLIT_PARTIAL, Integer.parseInt(m.group(5)));
    }

    @Test
    void pieceAndTraceLayout() throws IOException {
        String gather = read("gemm/all_gather_hooks.cuh");
        Matcher piece = Pattern.compile("inline constexpr int kGatherPieceCols = (\\d+);").matcher(gather);
        assertTrue(piece.find(), "kGatherPieceCols not found in all_gather_hooks.cuh");
        assertEquals(FusedWorkspace.PIECE_COLS, Integer.parseInt(piece.group(1)), "FusedWorkspace.PIECE_COLS");
        // FusedWorkspace.gatherFlags: a flag per piece of every tile row, then one per rank.
        assertTrue(gather.replaceAll("\\s+", " ").contains(
                "return (m + 127) / 128 * ((k + kGatherPieceCols - 1) / kGatherPieceCols) + world;"));
        // FusedWorkspace.gatherPieces: a rank's trace records one copy per piece of its own rows.
        assertTrue(gather.contains("tracer.record(int64_t(units) * 4 + p, TraceKind::copy, p, ctx.rank"));
        String trace = read("gemm/trace.cuh");
        assertTrue(trace.contains("enum class TraceKind : uint32_t { compute = 0, communicate = 1, copy = 2 };"));
        assertTrue(trace.contains("record((int64_t(tile) * 2 + consumer) * 2, TraceKind::compute"));
        assertTrue(trace.contains("record(int64_t(tiles) * 4 + tile * 2 + consumer, TraceKind::copy"));
        assertTrue(trace.contains("r[2] = static_cast<uint32_t>(what) | uint64_t(sm) << 32;"));
        assertTrue(trace.contains("r[3] = static_cast<uint32_t>(kind) | uint64_t(who) << 8;"));
    }

    /**
     * The kernels' parameter lists, which FusedGemm packs argument by argument: a change
     * here must be mirrored in FusedGemm.kernelArgs.
     */
    @Test
    void kernelParameterListsAreTheOnesPacked() throws IOException {
        String head = "name(const IRIS_GRID_CONSTANT iris::Ctx ctx, const __grid_constant__ TmaDescriptor a_map, "
                + "const __grid_constant__ TmaDescriptor b_map, ";
        assertTrue(normalized("gemm_all_scatter.cu").contains(head + "void* c, const void* bias, uint64_t* handoff, uint64_t epoch, "
                + "int m, int n_local, int k, int ldc, int group_m, uint64_t* trace)"), "gemm_all_scatter.cu");
        assertTrue(normalized("gemm_reduce.cu").contains(head + "void* c, const void* bias, void* ws, uint64_t* flags, uint64_t epoch, "
                + "int m, int n, int k, int ldc, int group_m, uint64_t* trace)"), "gemm_reduce.cu");
        assertTrue(normalized("all_gather_gemm.cu").contains(head + "void* a, void* c, const void* bias, uint64_t* flags, void* partials, "
                + "uint64_t epoch, int m, int n, int k, int ldc, int group_m, int slices, uint64_t* trace)"), "all_gather_gemm.cu");
        // The reductions' spare-warp handoff flags follow world x tiles x 2 partial flags (FusedWorkspace.reduceFlags).
        assertTrue(normalized("gemm_reduce.cu").contains("const gemm::Handoff handoff{flags + int64_t(ctx.world) * sched.count() * 2, epoch};"));
        assertTrue(normalized("gemm/reduce_hooks.cuh").contains(
                "int rows_per_owner() const { return (owners.tiles_m + owners.world - 1) / owners.world * 128; }"));
    }

    /** FusedWorkspace's split-K sizes and FusedOp.MIN_SPLIT_K, as the kernel lays them out. */
    @Test
    void splitKLayout() throws IOException {
        // Its flags follow the all-gather's (FusedWorkspace.gatherFlags), two per tile.
        assertTrue(normalized("all_gather_gemm.cu").contains("flags + gemm::all_gather_flag_words(m, k, ctx.world), epoch};"));
        String exchange = normalized("gemm/split_k_exchange.cuh");
        // partials[tiles][2][kAccumulators / 4][128] float4 = tiles x 128 x tileN f32 (kAccumulators = tileN / 2).
        assertTrue(exchange.contains("static constexpr int kVectors = Cfg::kAccumulators / 4;"));
        assertTrue(exchange.contains("const int64_t half = int64_t(t.index / t.slices) * 2 + consumer;"));
        assertTrue(exchange.contains("float4* slot = partials + half * kVectors * 128 + threadIdx.x % 128;"));
        assertTrue(read("gemm/config.cuh").contains("static constexpr int kAccumulators = kTileN / 2;"));
        // From FusedOp.MIN_SPLIT_K up, the second half of K is never empty.
        String scheduler = normalized("gemm/tile_scheduler.cuh");
        assertTrue(scheduler.contains("inline constexpr int kSplitAlignBlocks = 2;"));
        assertTrue(scheduler.contains(
                "return ((k_blocks + 1) / 2 + kSplitAlignBlocks - 1) / kSplitAlignBlocks * kSplitAlignBlocks;"));
        for (int k = 8; k <= 4096; k += 8) {
            int blocks = (k + Gemm.TILE_K - 1) / Gemm.TILE_K;
            int boundary = ((blocks + 1) / 2 + 1) / 2 * 2;
            if (k >= FusedOp.MIN_SPLIT_K) {
                assertTrue(boundary < blocks, "K = " + k + ": slice 1 would start at k-block " + boundary + " of " + blocks);
            }
        }
    }

    /** A source with macro line continuations removed and whitespace runs collapsed. */
    private static String normalized(String file) throws IOException {
        return read(file).replace("\\\n", " ").replaceAll("\\s+", " ");
    }

    @Test
    void launchConstantsAgree() throws IOException {
        String config = read("gemm/config.cuh");
        assertTrue(config.contains("static constexpr int kTileM = 128;"));
        // Config's tile widths are Gemm.TILE_N (the default), Gemm.MID_TILE_N and Gemm.NARROW_TILE_N,
        // their stages in the same 192 KiB, so all launch with Gemm.SHARED_BYTES.
        assertTrue(config.contains("int ProducerRegisters = kTmaProducerRegisters, int TileN = " + Gemm.TILE_N + ">"));
        assertTrue(config.contains("static_assert(kTileN == " + Gemm.TILE_N + " || kTileN == " + Gemm.MID_TILE_N
                + " || kTileN == " + Gemm.NARROW_TILE_N + ","));
        assertTrue(config.contains("static constexpr int kStages = 192 * 1024 / kStageBytes;"));
        for (String f : new String[] {"gemm_all_scatter.cu", "gemm_reduce.cu", "all_gather_gemm.cu"}) {
            assertTrue(read(f).contains("__launch_bounds__(384, 1)"), f);
        }
    }
}
