package dev.irisjvm.kernels.ccl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.irisjvm.core.gpu.Platform;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The constants Java shares with the CUDA sources (ccl_common.cuh, ccl_all_to_all.cu) agree, and
 * every kernel Collectives looks up is instantiated there; read from the sources, so it runs
 * without nvcc or a GPU.
 */
class DeviceSourcesTest {
    private static final Path CUDA = Path.of("src/main/cuda");

    private static String read(String file) throws IOException {
        return Files.readString(CUDA.resolve(file));
    }

    private static long constant(String text, String name) {
        Matcher m = Pattern.compile("inline constexpr (?:int|size_t|uint32_t|uint64_t) " + name + " = (\\d+);").matcher(text);
        assertTrue(m.find(), name + " not found");
        return Long.parseLong(m.group(1));
    }

    @Test
    void launchAndLayoutConstantsAgree() throws IOException {
        String common = read("ccl_common.cuh");
        assertEquals(Collectives.THREADS, constant(common, "kThreads"));
        assertEquals(Collectives.MAX_BLOCKS, constant(common, "kMaxBlocks"));
        assertEquals(Collectives.HEADER_BYTES, constant(common, "kHeaderBytes"));
        assertEquals(Collectives.LL_AREA_BYTES, constant(common, "kLlAreaBytes"));
        assertEquals(CclSites.ERROR_COUNT_MISMATCH, constant(common, "kErrorCountMismatch"));
        String a2a = read("ccl_all_to_all.cu");
        Matcher m = Pattern.compile("static_assert\\(sizeof\\(Counts\\) == (\\d+)").matcher(a2a);
        assertTrue(m.find());
        assertEquals(Collectives.COUNTS_BYTES, Long.parseLong(m.group(1)));
        // The inline-flag grid has a thread per packet: Java's payload words per packet are the kernel's
        // on Hopper (and on AMD); before Hopper the kernel sends 1-word packets with a third of the threads.
        assertTrue(common.contains("#if IRIS_PLATFORM_NVIDIA && (!defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900)\n"
                + "inline constexpr int kLlWordsMax = 3;\n#else\ninline constexpr int kLlWordsMax = 1;"));
        assertTrue(common.contains("constexpr int kLlWords = kScatter ? 1 : kLlWordsMax;"));
        assertEquals(3, Collectives.llWordsPerPacket(false, Platform.CUDA));
        assertEquals(1, Collectives.llWordsPerPacket(true, Platform.CUDA));
        assertEquals(1, Collectives.llWordsPerPacket(false, Platform.HIP));
        assertEquals(1, Collectives.llWordsPerPacket(true, Platform.HIP));
    }

    @Test
    void waitSitesAgree() throws IOException {
        String common = read("ccl_common.cuh");
        assertEquals(CclSites.ALL_REDUCE_ONE_SHOT, constant(common, "kSiteAllReduceOneShot"));
        assertEquals(CclSites.ALL_REDUCE_TWO_SHOT, constant(common, "kSiteAllReduceTwoShot"));
        assertEquals(CclSites.ALL_REDUCE_RING, constant(common, "kSiteAllReduceRing"));
        assertEquals(CclSites.ALL_REDUCE_ATOMIC, constant(common, "kSiteAllReduceAtomic"));
        assertEquals(CclSites.ALL_GATHER, constant(common, "kSiteAllGather"));
        assertEquals(CclSites.REDUCE_SCATTER, constant(common, "kSiteReduceScatter"));
        assertEquals(CclSites.BROADCAST, constant(common, "kSiteBroadcast"));
        assertEquals(CclSites.ALL_TO_ALL, constant(common, "kSiteAllToAll"));
        assertEquals(CclSites.ALL_TO_ALL_V, constant(common, "kSiteAllToAllV"));
        assertEquals(CclSites.WAIT_ARRIVE, constant(common, "kWaitArrive"));
        assertEquals(CclSites.WAIT_DATA, constant(common, "kWaitData"));
        assertEquals(CclSites.WAIT_DATA_2, constant(common, "kWaitData2"));
        assertEquals(CclSites.WAIT_ACK, constant(common, "kWaitAck"));
        assertEquals(CclSites.COUNT_MISMATCH, constant(common, "kCountMismatch"));
        assertEquals(CclSites.WAIT_EXIT, constant(common, "kWaitExit"));
    }

    @Test
    void everyKernelCollectivesLaunchesIsInstantiated() throws IOException {
        String ar = read("ccl_all_reduce.cu");
        for (AllReduceAlgorithm a : AllReduceAlgorithm.values()) {
            if (a == AllReduceAlgorithm.AUTO) continue;
            if (a == AllReduceAlgorithm.COPY_ENGINE) {  // its own signature: the chunk's reduction
                for (String type : new String[] {"bf16", "f16", "f32"}) {
                    assertTrue(ar.contains("CCL_COPY_ENGINE_KERNEL_OPS(" + type + ","), "copy engine " + type);
                }
                for (ReduceOp op : ReduceOp.values()) {
                    assertTrue(ar.contains("CCL_COPY_ENGINE_KERNEL(TNAME, T, " + op.kernelSuffix() + ", "), "copy engine " + op);
                }
            } else {
                assertTrue(ar.contains("CCL_REDUCING_KERNELS(all_reduce, " + a.kernelName() + ")"), a + " not instantiated");
            }
            assertTrue(ar.contains("all_reduce_" + a.kernelName() + "("), a + " has no device function");
        }
        String rs = read("ccl_reduce_scatter.cu");
        for (ReduceScatterPath path : ReduceScatterPath.values()) {
            assertTrue(rs.contains("CCL_REDUCING_KERNELS(reduce_scatter, " + path.kernelName() + ")"), path + " not instantiated");
            assertTrue(rs.contains("reduce_scatter_" + path.kernelName() + "("), path + " has no device function");
        }
        // The instantiation macros (ccl_common.cuh) cover every element type and reduction the Java side names.
        String common = read("ccl_common.cuh");
        for (String type : new String[] {"bf16", "f16", "f32"}) {
            assertTrue(common.contains("CCL_REDUCING_KERNEL_OPS(COLLECTIVE, VARIANT, " + type + ","), type);
        }
        for (ReduceOp op : ReduceOp.values()) {
            assertTrue(common.contains("CCL_REDUCING_KERNEL(COLLECTIVE, VARIANT, TNAME, T, " + op.kernelSuffix() + ", "), op.toString());
        }
        assertTrue(read("ccl_all_gather.cu").contains("void __launch_bounds__(ccl::kThreads, 1) ccl_all_gather_push("));
        assertTrue(read("ccl_broadcast.cu").contains("void __launch_bounds__(ccl::kThreads, 1) ccl_broadcast_push("));
        String a2a = read("ccl_all_to_all.cu");
        assertTrue(a2a.contains("ccl_all_to_all_push("));
        assertTrue(a2a.contains("ccl_all_to_all_v_push("));
        for (String module : Collectives.MODULES) {
            assertTrue(Files.exists(CUDA.resolve(module + ".cu")), module + ".cu");
        }
    }
}
