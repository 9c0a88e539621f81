package dev.irisjvm.core.env;

import java.util.Map;
import java.util.Objects;

/**
 * Where this process sits in a multi-GPU job: its rank, the number of ranks, its place on its
 * node, which node that is, and where the rendezvous listens. Read from the environment that a
 * launcher set.
 *
 * <p>Six launcher families are recognized; the first one present wins:
 * <table>
 *   <caption>Variables read per launcher</caption>
 *   <tr><th>source</th><th>rank, world</th><th>local rank, local size</th><th>node rank, node count</th></tr>
 *   <tr><td>{@code IRIS} (bin/iris-run)</td><td>{@code IRIS_RANK}, {@code IRIS_WORLD_SIZE}</td>
 *       <td>{@code IRIS_LOCAL_RANK}, {@code IRIS_LOCAL_WORLD_SIZE}</td>
 *       <td>{@code IRIS_NODE_RANK}, {@code IRIS_NODE_COUNT}</td></tr>
 *   <tr><td>{@code torchrun}</td><td>{@code RANK}, {@code WORLD_SIZE}</td>
 *       <td>{@code LOCAL_RANK}, {@code LOCAL_WORLD_SIZE}</td>
 *       <td>{@code GROUP_RANK}, {@code GROUP_WORLD_SIZE} or else {@code WORLD_SIZE / LOCAL_WORLD_SIZE}</td></tr>
 *   <tr><td>{@code Open MPI}</td><td>{@code OMPI_COMM_WORLD_RANK}, {@code OMPI_COMM_WORLD_SIZE}</td>
 *       <td>{@code OMPI_COMM_WORLD_LOCAL_RANK}, {@code OMPI_COMM_WORLD_LOCAL_SIZE}</td><td>derived</td></tr>
 *   <tr><td>{@code MPICH/Intel MPI}</td><td>{@code PMI_RANK}, {@code PMI_SIZE}</td>
 *       <td>{@code MPI_LOCALRANKID}, {@code MPI_LOCALNRANKS}</td><td>derived</td></tr>
 *   <tr><td>{@code Slurm} (srun)</td><td>{@code SLURM_PROCID}, {@code SLURM_NTASKS}</td>
 *       <td>{@code SLURM_LOCALID}; {@code SLURM_STEP_TASKS_PER_NODE}, {@code SLURM_TASKS_PER_NODE} or
 *       {@code SLURM_NTASKS_PER_NODE}, compressed as in {@code 4(x2),2}, read at this node's entry</td>
 *       <td>{@code SLURM_NODEID}; {@code SLURM_STEP_NUM_NODES}, {@code SLURM_NNODES} or
 *       {@code SLURM_JOB_NUM_NODES}</td></tr>
 *   <tr><td>PMIx</td><td>{@code PMIX_RANK} only: PMIx passes the size through its library, so
 *       this is an error that says so</td><td></td><td></td></tr>
 * </table>
 * The {@code IRIS} names are iris-launch's {@code dev.irisjvm.launch.RankVariables}, compiled in,
 * so that the launcher's side and this one spell them once.
 * The MPI families come before Slurm because an MPI launcher inside an allocation starts its ranks
 * through per-node daemons that srun started, whose {@code SLURM_PROCID} the ranks inherit.
 * MPICH ranks started by {@code srun --mpi=pmi2}, which sets {@code PMI_RANK} but not MPICH's
 * local variables, take the local and node values from Slurm when both number the task the same.
 *
 * <p>A family is in use as soon as one of its variables is set (for Slurm only
 * {@code SLURM_PROCID} or {@code SLURM_LOCALID}, since an allocation shell without {@code srun}
 * already has {@code SLURM_NTASKS}). Its rank and world size are then required. Local rank and
 * local size come as a pair, as do node rank and node count; half a pair is an error. Without
 * local variables the job is on one node (local equals global). Without node variables the
 * nodes are derived: one node when every rank is local, else consecutive blocks of the local size
 * (node = rank / local size), and a rank whose numbers contradict that is an error. With no family
 * set the process is rank 0 of a world of 1 on node 0 of 1, source {@code "single process"},
 * address 127.0.0.1, port 0, unless the environment says otherwise that this is one process of
 * several (a Slurm step without {@code SLURM_PROCID}, {@code MV2_COMM_WORLD_SIZE} or
 * {@code JSM_NAMESPACE_SIZE} above 1): that is an error, never a silent world of 1.
 *
 * <p>The master address is {@code IRIS_MASTER_ADDR}, else {@code MASTER_ADDR}, else (Slurm only)
 * the first host of {@code SLURM_STEP_NODELIST} (see {@link SlurmHostList}), else (Slurm only)
 * {@code SLURM_LAUNCH_NODE_IPADDR}, which is where srun ran, often a login node; else 127.0.0.1,
 * which is an error when the job spans several nodes. The master port is {@code IRIS_MASTER_PORT},
 * else {@code MASTER_PORT}, else 29500, with two exceptions:
 * <ul>
 *   <li>torchrun: {@code IRIS_MASTER_PORT}, else {@code MASTER_PORT + 1}, else 29501. torchrun's
 *       agent already serves its store on {@code MASTER_PORT}, so the rendezvous must not bind it;
 *       give {@code IRIS_MASTER_PORT} when the port above is taken;</li>
 *   <li>Slurm without a port given: {@code 20000 + (SLURM_JOB_ID + SLURM_STEP_ID) mod 12000}, so
 *       that concurrent jobs on a host differ, below Linux's ephemeral ports.</li>
 * </ul>
 * The job token (the job's secret) is {@code IRIS_JOB_TOKEN}, else the contents of the file
 * {@code IRIS_JOB_TOKEN_FILE} names (readable only by its owner), else empty. A variable set to an
 * empty or blank value counts as unset.
 *
 * <p>Example:
 * <pre>{@code
 * RankEnvironment env = RankEnvironment.current();
 * // under torchrun --nnodes 2 --nproc-per-node 4, the second rank of the second node sees:
 * //   rank=5 worldSize=8 localRank=1 localWorldSize=4 nodeRank=1 nodeCount=2 source="torchrun"
 * int device = env.localRank();   // each rank drives the GPU with its local rank's index
 * }</pre>
 *
 * @param rank           0-based rank of this process among all ranks
 * @param worldSize      number of ranks, at least 1
 * @param localRank      0-based rank among the ranks on this node; also the GPU index
 * @param localWorldSize number of ranks on this node
 * @param nodeRank       0-based index of this process's node among the job's nodes
 * @param nodeCount      number of nodes of the job; 1 exactly when every rank is on this node
 * @param masterAddr     host the rendezvous listens on
 * @param masterPort     its port, 0..65535 (0: none, single process)
 * @param jobToken       shared secret of one launch, used to reject strangers; may be empty
 * @param source         the family read: "IRIS", "torchrun", "Open MPI", "MPICH/Intel MPI", "Slurm"
 *                       or "single process"
 */
public record RankEnvironment(
        int rank,
        int worldSize,
        int localRank,
        int localWorldSize,
        int nodeRank,
        int nodeCount,
        String masterAddr,
        int masterPort,
        String jobToken,
        String source) {

    /** Master address when no variable names one. */
    public static final String DEFAULT_MASTER_ADDR = "127.0.0.1";
    /** Master port when no variable names one (torchrun's default). */
    public static final int DEFAULT_MASTER_PORT = 29500;
    /** Lowest master port derived from a Slurm job id. */
    public static final int SLURM_PORT_BASE = 20000;
    /** Number of master ports derived from Slurm job ids: they end below 32768, Linux's first ephemeral port. */
    public static final int SLURM_PORT_SPAN = 12000;

    /** {@link #source()} for bin/iris-run. */
    public static final String SOURCE_IRIS = "IRIS";
    /** {@link #source()} for torchrun. */
    public static final String SOURCE_TORCHRUN = "torchrun";
    /** {@link #source()} for Open MPI's mpirun. */
    public static final String SOURCE_OPEN_MPI = "Open MPI";
    /** {@link #source()} for MPICH's and Intel MPI's mpiexec (Hydra), and srun --mpi=pmi2. */
    public static final String SOURCE_MPICH = "MPICH/Intel MPI";
    /** {@link #source()} for Slurm's srun. */
    public static final String SOURCE_SLURM = "Slurm";
    /** {@link #source()} for no launcher at all. */
    public static final String SOURCE_SINGLE = "single process";
    /** Names PMIx in messages; never a {@link #source()}, since PMIx alone gives no world size. */
    static final String SOURCE_PMIX = "PMIx";

    /** Checks the invariants for values built in code; {@link #fromEnvironment} names variables instead. */
    public RankEnvironment {
        if (worldSize < 1) {
            throw new IllegalArgumentException("worldSize must be >= 1, got " + worldSize);
        }
        if (rank < 0 || rank >= worldSize) {
            throw new IllegalArgumentException("rank must be in [0, " + worldSize + "), got " + rank);
        }
        if (localWorldSize < 1 || localWorldSize > worldSize) {
            throw new IllegalArgumentException(
                    "localWorldSize must be in [1, " + worldSize + "], got " + localWorldSize);
        }
        if (localRank < 0 || localRank >= localWorldSize) {
            throw new IllegalArgumentException(
                    "localRank must be in [0, " + localWorldSize + "), got " + localRank);
        }
        if (nodeCount < 1 || nodeCount > worldSize) {
            throw new IllegalArgumentException("nodeCount must be in [1, " + worldSize + "], got " + nodeCount);
        }
        if (nodeRank < 0 || nodeRank >= nodeCount) {
            throw new IllegalArgumentException("nodeRank must be in [0, " + nodeCount + "), got " + nodeRank);
        }
        // One node holds every rank exactly when it is the only node, and every node holds one.
        if ((nodeCount == 1) != (localWorldSize == worldSize) || localWorldSize > worldSize - (nodeCount - 1)) {
            throw new IllegalArgumentException("localWorldSize " + localWorldSize + " of worldSize " + worldSize
                    + " does not fit nodeCount " + nodeCount + ": one node holds every rank exactly when it is the only"
                    + " one, and every node holds at least one rank");
        }
        if (masterAddr == null || masterAddr.isBlank()) {
            throw new IllegalArgumentException("masterAddr must be a host name or address, got '" + masterAddr + "'");
        }
        if (masterPort < 0 || masterPort > 65535) {
            throw new IllegalArgumentException("masterPort must be in 0..65535, got " + masterPort);
        }
        jobToken = jobToken == null ? "" : jobToken;
        Objects.requireNonNull(source, "source");
    }

    /**
     * The form without nodes, kept for code written before nodes were read: nodes are taken as
     * consecutive blocks of {@code localWorldSize} ranks (one node when every rank is local).
     *
     * <pre>{@code
     * new RankEnvironment(5, 8, 1, 4, "node0", 29501, "", "test");   // node 1 of 2
     * }</pre>
     */
    public RankEnvironment(int rank, int worldSize, int localRank, int localWorldSize,
                           String masterAddr, int masterPort, String jobToken, String source) {
        this(rank, worldSize, localRank, localWorldSize,
                localWorldSize > 0 ? rank / localWorldSize : 0,
                localWorldSize > 0 ? (worldSize + localWorldSize - 1) / localWorldSize : 1,
                masterAddr, masterPort, jobToken, source);
    }

    /** Reads this process's environment ({@link System#getenv()}); see the class comment. */
    public static RankEnvironment current() {
        return fromEnvironment(System.getenv());
    }

    /**
     * Reads a rank's place in the job from an environment map.
     *
     * <pre>{@code
     * RankEnvironment env = RankEnvironment.fromEnvironment(Map.of(
     *         "SLURM_PROCID", "5", "SLURM_NTASKS", "8", "SLURM_LOCALID", "1",
     *         "SLURM_TASKS_PER_NODE", "4(x2)", "SLURM_NODEID", "1", "SLURM_NNODES", "2",
     *         "SLURM_STEP_NODELIST", "gpu[03-04]", "SLURM_JOB_ID", "4242"));
     * // rank 5 of 8, local rank 1 of 4, node 1 of 2, master gpu03:24242, source "Slurm"
     * }</pre>
     *
     * @throws IllegalArgumentException naming the variable, its value and the form expected when
     *         one of a family's variables is missing, malformed or out of range, or when the
     *         environment says this is one process of several but names no family Iris reads
     */
    public static RankEnvironment fromEnvironment(Map<String, String> env) {
        Objects.requireNonNull(env, "env");
        String token = JobTokenSource.read(env);
        EnvVars vars = new EnvVars(env);
        for (LauncherFamily family : LauncherFamily.values()) {
            if (family.isPresent(vars)) {
                return family.read(vars, token);
            }
        }
        LauncherFamily.rejectUnrecognizedLaunch(vars);
        return new RankEnvironment(0, 1, 0, 1, 0, 1, DEFAULT_MASTER_ADDR, 0, token, SOURCE_SINGLE);
    }

    /** The GPU this rank drives: its local rank, since every rank sees all of its node's devices. */
    public int deviceIndex() {
        return localRank;
    }

    /** True when this is the only rank; no rendezvous is needed. */
    public boolean isSingleProcess() {
        return worldSize == 1;
    }

    /** True when the job's ranks are on more than one node. */
    public boolean isMultiNode() {
        return nodeCount > 1;
    }

    /** Like the record's, but the job token is redacted: these lines end up in shared logs. */
    @Override
    public String toString() {
        return "RankEnvironment[rank=" + rank + ", worldSize=" + worldSize
                + ", localRank=" + localRank + ", localWorldSize=" + localWorldSize
                + ", nodeRank=" + nodeRank + ", nodeCount=" + nodeCount
                + ", masterAddr=" + masterAddr + ", masterPort=" + masterPort
                + ", jobToken=" + (jobToken.isEmpty() ? "<none>" : "<set>")
                + ", source=" + source + "]";
    }

}
