package dev.irisjvm.launch;

/**
 * The environment variables the launcher gives each rank: where it sits in the job and where the
 * rendezvous listens. {@code Iris.init()} reads them by these constants (iris-core's {@code
 * RankEnvironment}, which also understands torchrun, Slurm and MPI, compiles them in), and iris-core's
 * {@code LauncherEnvironmentTest} reads what this launcher sets back through it.
 *
 * <pre>{@code
 * int rank = Integer.parseInt(System.getenv(RankVariables.IRIS_RANK));
 * }</pre>
 */
public final class RankVariables {
    /** 0-based rank of the process among all ranks. */
    public static final String IRIS_RANK = "IRIS_RANK";
    /** Number of ranks in the job. */
    public static final String IRIS_WORLD_SIZE = "IRIS_WORLD_SIZE";
    /** 0-based rank among the ranks on this node. */
    public static final String IRIS_LOCAL_RANK = "IRIS_LOCAL_RANK";
    /** Number of ranks on this node. */
    public static final String IRIS_LOCAL_WORLD_SIZE = "IRIS_LOCAL_WORLD_SIZE";
    /** 0-based index of this node among the job's nodes. */
    public static final String IRIS_NODE_RANK = "IRIS_NODE_RANK";
    /** Number of nodes of the job. */
    public static final String IRIS_NODE_COUNT = "IRIS_NODE_COUNT";
    /** Host that rank 0's rendezvous listens on. */
    public static final String IRIS_MASTER_ADDR = "IRIS_MASTER_ADDR";
    /** Port of rank 0's rendezvous. */
    public static final String IRIS_MASTER_PORT = "IRIS_MASTER_PORT";
    /** The job's secret, which every rank presents at the rendezvous. */
    public static final String IRIS_JOB_TOKEN = "IRIS_JOB_TOKEN";
    /** A file holding that secret, readable only by its owner; read when IRIS_JOB_TOKEN is unset. */
    public static final String IRIS_JOB_TOKEN_FILE = "IRIS_JOB_TOKEN_FILE";

    private RankVariables() {}
}
