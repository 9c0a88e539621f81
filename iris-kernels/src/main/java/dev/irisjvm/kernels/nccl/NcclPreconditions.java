package dev.irisjvm.kernels.nccl;

import java.util.Map;

/**
 * What must hold before a rank joins an NCCL communicator, each check saying what is wrong and
 * what to do instead of letting ncclCommInitRank fail (or hang) with a less clear message.
 */
final class NcclPreconditions {
    /** The variable that keeps NCCL off NVLink multicast, which can wedge a shared host's fabric. */
    static final String NCCL_NVLS_ENABLE = "NCCL_NVLS_ENABLE";
    static final String NCCL_HOSTID = "NCCL_HOSTID";

    private NcclPreconditions() {}

    /** Null when NCCL_NVLS_ENABLE is 0, else why it must be. */
    static String multicastOff(Map<String, String> env) {
        String nvls = env.get(NCCL_NVLS_ENABLE);
        if ("0".equals(nvls == null ? null : nvls.strip())) {
            return null;
        }
        return NCCL_NVLS_ENABLE + " is " + (nvls == null ? "unset" : "'" + nvls + "'") + "; it must be 0 (NVLink"
                + " multicast stays off): bin/iris-run sets it, under torchrun, srun or mpirun export NCCL_NVLS_ENABLE=0";
    }

    /**
     * Null unless a rank of this node drives this rank's GPU under the same NCCL host id, which NCCL
     * refuses (one host, one GPU, two ranks); bin/iris-run gives such ranks a host id each.
     *
     * @param me        this rank's index in its node
     * @param pci       the PCI address of each node rank's GPU
     * @param hostIds   each node rank's NCCL_HOSTID ("" when unset)
     * @param worldRank each node rank's world rank, for the message
     */
    static String distinctHostIdsOnSharedGpus(int me, String[] pci, String[] hostIds, int[] worldRank) {
        for (int i = 0; i < pci.length; i++) {
            if (i != me && pci[i].equals(pci[me]) && hostIds[i].equals(hostIds[me])) {
                return "shares GPU " + pci[me] + " with rank " + worldRank[i] + " under the same " + NCCL_HOSTID + " ('"
                        + hostIds[me] + "'); NCCL needs a distinct " + NCCL_HOSTID + " per rank there (bin/iris-run sets"
                        + " one where ranks share a GPU)";
            }
        }
        return null;
    }
}
