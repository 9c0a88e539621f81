package dev.irisjvm.kernels.nccl;

import org.bytedeco.cuda.global.nccl;
import org.bytedeco.cuda.nccl.ncclConfig_t;
import org.bytedeco.javacpp.Loader;

/**
 * NCCL_CONFIG_INITIALIZER, which the binding cannot expand: every field undefined (NCCL's own
 * defaults) except {@code blocking = 0}, so that init and split return at once and this library
 * bounds the wait itself by polling ncclCommGetAsyncError.
 */
final class NcclConfig {
    /** NCCL_CONFIG_UNDEF_INT: "use NCCL's default". */
    static final int UNDEF = Integer.MIN_VALUE;

    private NcclConfig() {}

    static ncclConfig_t nonBlocking() {
        ncclConfig_t c = new ncclConfig_t();
        c.size(Loader.sizeof(ncclConfig_t.class)).magic(nccl.NCCL_API_MAGIC).version(nccl.NCCL_VERSION_CODE)
                .blocking(0).cgaClusterSize(UNDEF).minCTAs(UNDEF).maxCTAs(UNDEF).splitShare(UNDEF)
                .trafficClass(UNDEF).collnetEnable(UNDEF).CTAPolicy(UNDEF).shrinkShare(UNDEF).nvlsCTAs(UNDEF)
                .nChannelsPerNetPeer(UNDEF).nvlinkCentricSched(UNDEF).graphUsageMode(UNDEF).numRmaCtx(UNDEF);
        c.netName(null).commName(null);
        return c;
    }
}
