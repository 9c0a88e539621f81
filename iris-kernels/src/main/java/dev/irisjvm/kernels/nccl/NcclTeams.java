package dev.irisjvm.kernels.nccl;

import dev.irisjvm.core.Iris;
import dev.irisjvm.core.IrisException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.bytedeco.cuda.global.nccl;
import org.bytedeco.cuda.nccl.ncclUniqueId;
import org.bytedeco.javacpp.Loader;

/**
 * The job's NCCL communicators: world (every rank, NCCL rank = world rank) and rail (the ranks at
 * this rank's node index on every node: ncclCommSplit with color = node index and key = node, so
 * NCCL's numbering is {@link Iris#rail()}'s). Made on first use by {@link #of} and closed with the
 * {@link Iris} instance. Rank 0 creates the ncclUniqueId and the rendezvous carries it; every wait
 * is bounded by the rendezvous timeout.
 *
 * <pre>{@code
 * NcclTeams nccl = NcclTeams.of(iris);            // collective on first use
 * nccl.rail().allReduce(in, out, n, DType.BF16, ReduceOp.SUM, stream);
 * }</pre>
 */
public final class NcclTeams implements AutoCloseable {
    private final NcclCommunicator world;
    private final NcclCommunicator rail;
    private final String version;

    private NcclTeams(NcclCommunicator world, NcclCommunicator rail, String version) {
        this.world = world;
        this.rail = rail;
        this.version = version;
    }

    /**
     * This job's communicators; the first call on an {@link Iris} instance creates them and is
     * collective (every rank makes it at the same point).
     *
     * @throws IrisException naming the rank and the reason when NCCL cannot be used on some rank
     *         (every rank gets the same answer, so none waits in NCCL for one that gave up)
     */
    public static NcclTeams of(Iris iris) {
        return iris.attached(NcclTeams.class, () -> create(iris));
    }

    private static NcclTeams create(Iris iris) {
        int rank = iris.rank();
        Duration timeout = iris.config().rendezvousTimeout();
        String hostId = System.getenv().getOrDefault(NcclPreconditions.NCCL_HOSTID, "");
        byte[][] hostIds = iris.allGather(hostId.getBytes(StandardCharsets.UTF_8));
        String[] version = new String[1];
        String mine = NcclPreconditions.multicastOff(System.getenv());
        if (mine == null) {
            mine = load(version);
        }
        if (mine == null) {
            mine = sharedGpuProblem(iris, hostIds);
        }
        String reason = firstReason(iris, mine);
        if (reason != null) {
            throw new IrisException("rank " + rank + ": NCCL cannot serve this job: " + reason);
        }
        byte[] id = iris.broadcast(rank == 0 ? uniqueIdOrError() : new byte[0], 0);
        if (id[0] == 0) {
            throw new IrisException("rank " + rank + ": " + new String(id, 1, id.length - 1, StandardCharsets.UTF_8));
        }
        byte[] unique = new byte[NcclCommunicator.UNIQUE_ID_BYTES];
        System.arraycopy(id, 1, unique, 0, unique.length);
        List<AutoCloseable> made = new ArrayList<>();
        try {
            NcclCommunicator world = NcclCommunicator.initRank("world", unique, iris.worldSize(), rank, rank, timeout);
            made.add(world);
            NcclCommunicator rail = world.split(iris.rail().name(), iris.node().index(), iris.nodeIndex(),
                    iris.rail().size(), iris.rail().index());
            return new NcclTeams(world, rail, version[0]);
        } catch (RuntimeException e) {
            for (AutoCloseable c : made) {
                try {
                    c.close();
                } catch (Exception suppressed) {
                    e.addSuppressed(suppressed);
                }
            }
            throw e;
        }
    }

    /** Every rank of the job. */
    public NcclCommunicator world() {
        return world;
    }

    /** This rank's rail: one rank per node, at this rank's node index. */
    public NcclCommunicator rail() {
        return rail;
    }

    /** "NCCL 2.28.3": the library loaded at run time. */
    public String version() {
        return version;
    }

    /** Closes the rail, then the world; both are attempted, the first failure is thrown. */
    @Override
    public void close() {
        RuntimeException failure = null;
        for (NcclCommunicator c : new NcclCommunicator[] {rail, world}) {
            try {
                c.close();
            } catch (RuntimeException e) {
                if (failure == null) failure = e;
                else failure.addSuppressed(e);
            }
        }
        if (failure != null) {
            throw failure;
        }
    }

    /** Null once NCCL is loaded (its version in {@code version[0]}), else why it cannot be. */
    private static String load(String[] version) {
        try {
            Loader.load(nccl.class);
            int[] v = new int[1];
            int status = nccl.ncclGetVersion(v);
            if (status != nccl.ncclSuccess) {
                return "ncclGetVersion failed: " + NcclStatus.errorString(status);
            }
            version[0] = "NCCL " + v[0] / 10000 + "." + (v[0] % 10000) / 100 + "." + v[0] % 100;
            return null;
        } catch (RuntimeException | LinkageError e) {  // UnsatisfiedLinkError where libnccl is missing
            return "cannot load NCCL: " + e;
        }
    }

    private static String sharedGpuProblem(Iris iris, byte[][] hostIds) {
        int n = iris.node().size();
        String[] pci = new String[n];
        String[] ids = new String[n];
        int[] worldRanks = iris.node().worldRanks();
        for (int i = 0; i < n; i++) {
            pci[i] = iris.pciAddressOf(i);
            ids[i] = new String(hostIds[worldRanks[i]], StandardCharsets.UTF_8);
        }
        return NcclPreconditions.distinctHostIdsOnSharedGpus(iris.node().index(), pci, ids, worldRanks);
    }

    /** Collective: the first rank's reason to give up, "rank r: ...", or null when none has one. */
    private static String firstReason(Iris iris, String mine) {
        byte[][] all = iris.allGather(mine == null ? new byte[0] : mine.getBytes(StandardCharsets.UTF_8));
        for (int r = 0; r < all.length; r++) {
            if (all[r].length > 0) {
                return "rank " + r + ": " + new String(all[r], StandardCharsets.UTF_8);
            }
        }
        return null;
    }

    /** Rank 0: 1 and the id's bytes, or 0 and why there is none (so that no rank waits for it). */
    private static byte[] uniqueIdOrError() {
        try (ncclUniqueId u = new ncclUniqueId()) {
            int status = nccl.ncclGetUniqueId(u);
            if (status != nccl.ncclSuccess) {
                byte[] text = ("ncclGetUniqueId failed on rank 0: " + NcclStatus.errorString(status))
                        .getBytes(StandardCharsets.UTF_8);
                return ByteBuffer.allocate(1 + text.length).put((byte) 0).put(text).array();
            }
            byte[] id = new byte[1 + NcclCommunicator.UNIQUE_ID_BYTES];
            id[0] = 1;
            for (int k = 0; k < NcclCommunicator.UNIQUE_ID_BYTES; k++) {
                id[1 + k] = u.internal(k);
            }
            return id;
        }
    }
}
