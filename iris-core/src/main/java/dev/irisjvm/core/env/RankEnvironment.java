package dev.irisjvm.core.env;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Where this process sits in a multi-GPU job: its rank, the number of ranks, its place on its
 * node and where the rendezvous listens. Read from the environment that a launcher set.
 *
 * <p>Four launcher families are recognized; the first one present wins:
 * <ol>
 *   <li>{@code IRIS}: {@code IRIS_RANK}, {@code IRIS_WORLD_SIZE}, {@code IRIS_LOCAL_RANK},
 *       {@code IRIS_LOCAL_WORLD_SIZE} (set by {@code bin/iris-run});</li>
 *   <li>{@code torchrun}: {@code RANK}, {@code WORLD_SIZE}, {@code LOCAL_RANK},
 *       {@code LOCAL_WORLD_SIZE};</li>
 *   <li>{@code Open MPI}: {@code OMPI_COMM_WORLD_RANK}, {@code OMPI_COMM_WORLD_SIZE},
 *       {@code OMPI_COMM_WORLD_LOCAL_RANK}, {@code OMPI_COMM_WORLD_LOCAL_SIZE};</li>
 *   <li>{@code Slurm}: {@code SLURM_PROCID}, {@code SLURM_NTASKS}, {@code SLURM_LOCALID} and
 *       {@code SLURM_NTASKS_PER_NODE} or else {@code SLURM_TASKS_PER_NODE}, whose compressed
 *       form such as {@code 2(x3)} counts as its leading number.</li>
 * </ol>
 * A family is in use as soon as one of its per-task variables is set (for Slurm only
 * {@code SLURM_PROCID} or {@code SLURM_LOCALID}, since an allocation shell without
 * {@code srun} already has {@code SLURM_NTASKS}). Its rank and world size are then required;
 * its local rank and local world size come as a pair and default to the global ones (a
 * single-node job). With no family set the process is rank 0 of a world of 1, source
 * {@code "single process"}, address 127.0.0.1, port 0.
 *
 * <p>The master address is {@code IRIS_MASTER_ADDR}, else {@code MASTER_ADDR}, else (Slurm only)
 * {@code SLURM_LAUNCH_NODE_IPADDR}, else 127.0.0.1. The master port is {@code IRIS_MASTER_PORT},
 * else {@code MASTER_PORT}, else 29500. The job token (the job's secret) is {@code IRIS_JOB_TOKEN},
 * else the contents of the file {@code IRIS_JOB_TOKEN_FILE} names (readable only by its owner),
 * else empty.
 * A variable set to an empty or blank value counts as unset.
 *
 * <p>Example:
 * <pre>{@code
 * RankEnvironment env = RankEnvironment.current();
 * // under "iris-run -n 2 -- java ..." rank 1 sees:
 * //   rank=1 worldSize=2 localRank=1 localWorldSize=2 source="IRIS"
 * int device = env.localRank();   // each rank drives the GPU with its local rank's index
 * }</pre>
 *
 * @param rank           0-based rank of this process among all ranks
 * @param worldSize      number of ranks, at least 1
 * @param localRank      0-based rank among the ranks on this node; also the GPU index
 * @param localWorldSize number of ranks on this node
 * @param masterAddr     host the rendezvous listens on
 * @param masterPort     its port, 0..65535 (0: none, single process)
 * @param jobToken       shared secret of one launch, used to reject strangers; may be empty
 * @param source         the family read: "IRIS", "torchrun", "Open MPI", "Slurm" or "single process"
 */
public record RankEnvironment(
        int rank,
        int worldSize,
        int localRank,
        int localWorldSize,
        String masterAddr,
        int masterPort,
        String jobToken,
        String source) {

    // The variables bin/iris-run sets; see the class comment.
    /** This process's rank. */
    public static final String IRIS_RANK = "IRIS_RANK";
    /** Number of ranks. */
    public static final String IRIS_WORLD_SIZE = "IRIS_WORLD_SIZE";
    /** Rank on this node, also the GPU index. */
    public static final String IRIS_LOCAL_RANK = "IRIS_LOCAL_RANK";
    /** Number of ranks on this node. */
    public static final String IRIS_LOCAL_WORLD_SIZE = "IRIS_LOCAL_WORLD_SIZE";
    /** Rendezvous host. */
    public static final String IRIS_MASTER_ADDR = "IRIS_MASTER_ADDR";
    /** Rendezvous port. */
    public static final String IRIS_MASTER_PORT = "IRIS_MASTER_PORT";
    /** Secret shared by the ranks of one launch. */
    public static final String IRIS_JOB_TOKEN = "IRIS_JOB_TOKEN";
    /** A file holding that secret, readable only by its owner; used when IRIS_JOB_TOKEN is unset. */
    public static final String IRIS_JOB_TOKEN_FILE = "IRIS_JOB_TOKEN_FILE";

    /** Master address when no variable names one. */
    public static final String DEFAULT_MASTER_ADDR = "127.0.0.1";
    /** Master port when no variable names one (torchrun's default). */
    public static final int DEFAULT_MASTER_PORT = 29500;

    /** {@link #source()} for bin/iris-run. */
    public static final String SOURCE_IRIS = "IRIS";
    /** {@link #source()} for torchrun. */
    public static final String SOURCE_TORCHRUN = "torchrun";
    /** {@link #source()} for Open MPI's mpirun. */
    public static final String SOURCE_OPEN_MPI = "Open MPI";
    /** {@link #source()} for Slurm's srun. */
    public static final String SOURCE_SLURM = "Slurm";
    /** {@link #source()} for no launcher at all. */
    public static final String SOURCE_SINGLE = "single process";

    private static final String SLURM_NTASKS_PER_NODE = "SLURM_NTASKS_PER_NODE";
    private static final String SLURM_TASKS_PER_NODE = "SLURM_TASKS_PER_NODE";
    private static final Pattern LEADING_NUMBER = Pattern.compile("^(\\d+)");

    /**
     * The variable names of one launcher family. {@code localWorld} lists alternatives, first
     * present wins; {@code detect} lists the variables whose presence selects the family.
     */
    private record Family(String name, String rank, String world, String localRank,
                          List<String> localWorld, List<String> detect) {
        static Family of(String name, String rank, String world, String localRank, String localWorld) {
            return new Family(name, rank, world, localRank, List.of(localWorld),
                    List.of(rank, world, localRank, localWorld));
        }
    }

    private static final List<Family> FAMILIES = List.of(
            Family.of(SOURCE_IRIS, IRIS_RANK, IRIS_WORLD_SIZE, IRIS_LOCAL_RANK, IRIS_LOCAL_WORLD_SIZE),
            Family.of(SOURCE_TORCHRUN, "RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE"),
            Family.of(SOURCE_OPEN_MPI, "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE",
                    "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE"),
            new Family(SOURCE_SLURM, "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID",
                    List.of(SLURM_NTASKS_PER_NODE, SLURM_TASKS_PER_NODE),
                    List.of("SLURM_PROCID", "SLURM_LOCALID")));

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
        if (masterAddr == null || masterAddr.isBlank()) {
            throw new IllegalArgumentException("masterAddr must be a host name or address, got '" + masterAddr + "'");
        }
        if (masterPort < 0 || masterPort > 65535) {
            throw new IllegalArgumentException("masterPort must be in 0..65535, got " + masterPort);
        }
        jobToken = jobToken == null ? "" : jobToken;
        Objects.requireNonNull(source, "source");
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
     *         "SLURM_PROCID", "3", "SLURM_NTASKS", "4",
     *         "SLURM_LOCALID", "1", "SLURM_TASKS_PER_NODE", "2(x2)"));
     * // rank 3 of 4, local rank 1 of 2, source "Slurm"
     * }</pre>
     *
     * @throws IllegalArgumentException naming the variable when one of a family's variables is
     *         missing, not an integer, or out of range
     */
    public static RankEnvironment fromEnvironment(Map<String, String> env) {
        Objects.requireNonNull(env, "env");
        String token = JobTokenSource.read(env);
        for (Family family : FAMILIES) {
            if (family.detect().stream().anyMatch(name -> get(env, name) != null)) {
                return read(family, env, token);
            }
        }
        return new RankEnvironment(0, 1, 0, 1, DEFAULT_MASTER_ADDR, 0, token, SOURCE_SINGLE);
    }

    /** The GPU this rank drives: its local rank, since every rank sees all of its node's devices. */
    public int deviceIndex() {
        return localRank;
    }

    /** True when this is the only rank; no rendezvous is needed. */
    public boolean isSingleProcess() {
        return worldSize == 1;
    }

    /** Like the record's, but the job token is redacted: these lines end up in shared logs. */
    @Override
    public String toString() {
        return "RankEnvironment[rank=" + rank + ", worldSize=" + worldSize
                + ", localRank=" + localRank + ", localWorldSize=" + localWorldSize
                + ", masterAddr=" + masterAddr + ", masterPort=" + masterPort
                + ", jobToken=" + (jobToken.isEmpty() ? "<none>" : "<set>")
                + ", source=" + source + "]";
    }

    private static RankEnvironment read(Family family, Map<String, String> env, String token) {
        int world = requireInt(env, family.world(), family);
        if (world < 1) {
            throw new IllegalArgumentException(family.world() + " must be >= 1, got " + world);
        }
        int rank = requireInt(env, family.rank(), family);
        if (rank < 0 || rank >= world) {
            throw new IllegalArgumentException(family.rank() + "=" + rank + " is outside [0, "
                    + family.world() + "=" + world + ")");
        }

        String localWorldName = family.localWorld().stream()
                .filter(name -> get(env, name) != null).findFirst().orElse(null);
        boolean hasLocalRank = get(env, family.localRank()) != null;
        int localRank = rank;
        int localWorld = world;
        if (hasLocalRank || localWorldName != null) {
            // Half a pair is a misconfigured launcher; guessing the other half would silently
            // put two ranks on one GPU.
            if (!hasLocalRank) {
                throw missing(family.localRank(), family, env);
            }
            if (localWorldName == null) {
                throw missing(String.join(" or ", family.localWorld()), family, env);
            }
            localRank = parseInt(family.localRank(), get(env, family.localRank()));
            localWorld = parseLocalWorld(localWorldName, get(env, localWorldName), family);
            if (localWorld < 1) {
                throw new IllegalArgumentException(localWorldName + " must be >= 1, got " + localWorld);
            }
            if (localWorld > world) {
                throw new IllegalArgumentException(localWorldName + "=" + localWorld + " exceeds "
                        + family.world() + "=" + world);
            }
            if (localRank < 0 || localRank >= localWorld) {
                throw new IllegalArgumentException(family.localRank() + "=" + localRank
                        + " is outside [0, " + localWorldName + "=" + localWorld + ")");
            }
        }

        String addr = firstSet(env, IRIS_MASTER_ADDR, "MASTER_ADDR",
                family.name().equals(SOURCE_SLURM) ? "SLURM_LAUNCH_NODE_IPADDR" : null);
        String portName = firstSetName(env, IRIS_MASTER_PORT, "MASTER_PORT");
        int port = DEFAULT_MASTER_PORT;
        if (portName != null) {
            port = parseInt(portName, get(env, portName));
            if (port < 0 || port > 65535) {
                throw new IllegalArgumentException(portName + " must be in 0..65535, got " + port);
            }
        }
        return new RankEnvironment(rank, world, localRank, localWorld,
                addr == null ? DEFAULT_MASTER_ADDR : addr, port, token, family.name());
    }

    private static int requireInt(Map<String, String> env, String name, Family family) {
        String value = get(env, name);
        if (value == null) {
            throw missing(name, family, env);
        }
        return parseInt(name, value);
    }

    private static IllegalArgumentException missing(String name, Family family, Map<String, String> env) {
        List<String> all = new ArrayList<>(List.of(family.rank(), family.world(), family.localRank()));
        all.addAll(family.localWorld());
        List<String> present = all.stream().filter(n -> get(env, n) != null).toList();
        return new IllegalArgumentException(name + " is not set, but " + String.join(", ", present)
                + (present.size() == 1 ? " is" : " are") + " (a " + family.name()
                + " launch sets " + family.rank() + " and " + family.world()
                + ", and the local rank and local size as a pair)");
    }

    /** Slurm compresses per-node counts: "2(x3)" is 2 tasks on each of 3 nodes, "2,1" differs by node. */
    private static int parseLocalWorld(String name, String value, Family family) {
        if (!family.name().equals(SOURCE_SLURM)) {
            return parseInt(name, value);
        }
        Matcher m = LEADING_NUMBER.matcher(value);
        if (!m.find()) {
            throw new IllegalArgumentException(name + " must start with a task count such as 2 or 2(x3), got '"
                    + value + "'");
        }
        return parseInt(name, m.group(1));
    }

    private static int parseInt(String name, String value) {
        try {
            return Integer.parseInt(value);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(name + " must be an integer, got '" + value + "'");
        }
    }

    /** The value, trimmed, or null when absent or blank. */
    private static String get(Map<String, String> env, String name) {
        if (name == null) {
            return null;
        }
        String value = env.get(name);
        return value == null || value.isBlank() ? null : value.trim();
    }

    private static String firstSetName(Map<String, String> env, String... names) {
        for (String name : names) {
            if (get(env, name) != null) {
                return name;
            }
        }
        return null;
    }

    private static String firstSet(Map<String, String> env, String... names) {
        return get(env, firstSetName(env, names));
    }
}
