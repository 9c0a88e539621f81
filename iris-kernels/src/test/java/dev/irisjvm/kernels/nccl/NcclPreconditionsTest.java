package dev.irisjvm.kernels.nccl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import org.junit.jupiter.api.Test;

/** What must hold before a rank joins NCCL, and what each refusal says. */
class NcclPreconditionsTest {
    @Test
    void multicastMustBeOff() {
        assertNull(NcclPreconditions.multicastOff(Map.of("NCCL_NVLS_ENABLE", "0")));
        assertNull(NcclPreconditions.multicastOff(Map.of("NCCL_NVLS_ENABLE", " 0 ")));
        assertEquals("NCCL_NVLS_ENABLE is unset; it must be 0 (NVLink multicast stays off): bin/iris-run sets it, under"
                + " torchrun, srun or mpirun export NCCL_NVLS_ENABLE=0", NcclPreconditions.multicastOff(Map.of()));
        assertTrue(NcclPreconditions.multicastOff(Map.of("NCCL_NVLS_ENABLE", "1")).startsWith("NCCL_NVLS_ENABLE is '1'"));
    }

    @Test
    void ranksOnOneGpuNeedHostIdsOfTheirOwn() {
        String[] pci = {"0000:1b:00", "0000:1b:00", "0000:43:00"};
        int[] world = {4, 5, 6};
        assertNull(NcclPreconditions.distinctHostIdsOnSharedGpus(0, pci, new String[] {"a", "b", "a"}, world));
        assertNull(NcclPreconditions.distinctHostIdsOnSharedGpus(2, pci, new String[] {"a", "a", "a"}, world),
                "rank 6 has its GPU to itself");
        assertEquals("shares GPU 0000:1b:00 with rank 5 under the same NCCL_HOSTID ('n1'); NCCL needs a distinct"
                        + " NCCL_HOSTID per rank there (bin/iris-run sets one where ranks share a GPU)",
                NcclPreconditions.distinctHostIdsOnSharedGpus(0, pci, new String[] {"n1", "n1", "n1"}, world));
    }
}
