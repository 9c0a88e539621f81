package dev.irisjvm.core.env;

import dev.irisjvm.launch.RankVariables;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The launchers whose environment {@link RankEnvironment} reads, in the order it tries them, with
 * the variables each sets. The common rules (which variables come in pairs, what is derived when a
 * launcher leaves something out, how each value is checked) live here once; a launcher that
 * differs overrides one step.
 *
 * <p>The order matters where launchers nest: an MPI launcher inside a Slurm allocation starts its
 * ranks through daemons that srun started, so the ranks inherit {@code SLURM_PROCID} of the daemon
 * (one per node, not per rank); the MPI variables are the ones that describe the rank.
 *
 * <pre>{@code
 * EnvVars vars = new EnvVars(System.getenv());
 * for (LauncherFamily family : LauncherFamily.values()) {
 *     if (family.isPresent(vars)) {
 *         return family.read(vars, token);
 *     }
 * }
 * }</pre>
 */
enum LauncherFamily {

    IRIS(RankEnvironment.SOURCE_IRIS, RankVariables.IRIS_RANK, RankVariables.IRIS_WORLD_SIZE,
            RankVariables.IRIS_LOCAL_RANK, List.of(RankVariables.IRIS_LOCAL_WORLD_SIZE),
            RankVariables.IRIS_NODE_RANK, List.of(RankVariables.IRIS_NODE_COUNT),
            "bin/iris-run --nnodes sets IRIS_NODE_RANK and IRIS_NODE_COUNT"),

    TORCHRUN(RankEnvironment.SOURCE_TORCHRUN, "RANK", "WORLD_SIZE", "LOCAL_RANK", List.of("LOCAL_WORLD_SIZE"),
            "GROUP_RANK", List.of("GROUP_WORLD_SIZE"), "torchrun sets GROUP_RANK, the index of the node's agent") {
        /** torchrun starts the same number of ranks on every node. */
        @Override
        Integer nodeCountWithoutVariable(EnvVars vars, int world) {
            String localWorld = vars.get("LOCAL_WORLD_SIZE");
            if (localWorld == null) {
                return null;
            }
            int perNode = EnvVars.parseInt("LOCAL_WORLD_SIZE", localWorld);
            return perNode >= 1 && world % perNode == 0 ? world / perNode : null;
        }

        /**
         * torchrun's agent already serves its own store on MASTER_PORT (the workers reach it
         * there), so the Iris rendezvous takes the port above it unless IRIS_MASTER_PORT says.
         */
        @Override
        int masterPort(EnvVars vars) {
            if (vars.has(RankVariables.IRIS_MASTER_PORT)) {
                return port(vars, RankVariables.IRIS_MASTER_PORT);
            }
            if (!vars.has("MASTER_PORT")) {
                return RankEnvironment.DEFAULT_MASTER_PORT + 1;
            }
            int store = port(vars, "MASTER_PORT");
            if (store >= 65535) {
                throw new IllegalArgumentException("MASTER_PORT=" + store + " leaves no port above it for the Iris"
                        + " rendezvous (torchrun's store holds MASTER_PORT itself); set IRIS_MASTER_PORT to a free port");
            }
            return store + 1;
        }
    },

    OPEN_MPI(RankEnvironment.SOURCE_OPEN_MPI, "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE",
            "OMPI_COMM_WORLD_LOCAL_RANK", List.of("OMPI_COMM_WORLD_LOCAL_SIZE"),
            // OMPI_COMM_WORLD_NODE_RANK is not a node index: it ranks the process among every job's
            // processes on its node, so it stays unread.
            null, List.of(),
            "keep Open MPI's default mapping (mpirun --map-by slot or core), which gives each node consecutive ranks"),

    MPICH(RankEnvironment.SOURCE_MPICH, "PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID", List.of("MPI_LOCALNRANKS"),
            null, List.of(),
            "keep the block placement of mpiexec (-ppn N), which gives each node consecutive ranks") {
        /**
         * srun --mpi=pmi2 starts MPICH ranks itself and sets PMI_RANK and PMI_SIZE but not
         * MPICH's local variables; Slurm's own then describe the same task. Hydra (mpiexec) always
         * sets MPI_LOCALRANKID, and its ranks inherit the SLURM_PROCID of a per-node proxy, so
         * Slurm's are taken only when their numbering is the same as PMI's.
         */
        @Override
        RankEnvironment read(EnvVars vars, String token) {
            boolean ownLocal = vars.has("MPI_LOCALRANKID") || vars.has("MPI_LOCALNRANKS");
            if (!ownLocal && vars.has("PMI_RANK") && vars.has("PMI_SIZE")
                    && vars.get("PMI_RANK").equals(vars.get("SLURM_PROCID"))
                    && vars.get("PMI_SIZE").equals(vars.get("SLURM_NTASKS"))) {
                RankEnvironment s = SLURM.read(vars, token);
                return new RankEnvironment(s.rank(), s.worldSize(), s.localRank(), s.localWorldSize(), s.nodeRank(),
                        s.nodeCount(), s.masterAddr(), s.masterPort(), s.jobToken(), source);
            }
            return super.read(vars, token);
        }
    },

    SLURM(RankEnvironment.SOURCE_SLURM, "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID",
            // The step's own layout first: a step may use fewer nodes and tasks than its job.
            List.of("SLURM_STEP_TASKS_PER_NODE", "SLURM_TASKS_PER_NODE", "SLURM_NTASKS_PER_NODE"),
            "SLURM_NODEID", List.of("SLURM_STEP_NUM_NODES", "SLURM_NNODES", "SLURM_JOB_NUM_NODES"),
            "srun sets SLURM_NODEID and SLURM_NNODES") {
        /** An allocation shell (salloc, sbatch) already has SLURM_NTASKS; only srun's tasks have these. */
        @Override
        boolean isPresent(EnvVars vars) {
            return vars.has("SLURM_PROCID") || vars.has("SLURM_LOCALID");
        }

        /**
         * Counts differ by node when the tasks do not divide evenly ({@code 4(x2),2}), so each task
         * reads its own node's; SLURM_NTASKS_PER_NODE, the option's value, is one count for all.
         */
        @Override
        int localWorldValue(EnvVars vars, String name, Integer nodeRank) {
            String value = vars.get(name);
            if (name.equals("SLURM_NTASKS_PER_NODE") && value.matches("\\d+")) {
                return EnvVars.parseInt(name, value);
            }
            return SlurmTasksPerNode.onNode(name, value, nodeRank == null ? 0 : nodeRank);
        }

        /**
         * The step's first host runs task 0 under Slurm's block and cyclic distributions.
         * SLURM_LAUNCH_NODE_IPADDR comes last: it is where srun ran, often a login node.
         */
        @Override
        String masterAddr(EnvVars vars) {
            String addr = vars.get(vars.firstSet(List.of(RankVariables.IRIS_MASTER_ADDR, "MASTER_ADDR")));
            if (addr != null) {
                return addr;
            }
            String nodes = vars.get("SLURM_STEP_NODELIST");
            if (nodes != null) {
                try {
                    return SlurmHostList.firstHost(nodes);
                } catch (IllegalArgumentException e) {
                    throw new IllegalArgumentException("SLURM_STEP_NODELIST=" + nodes + ": " + e.getMessage(), e);
                }
            }
            return vars.get("SLURM_LAUNCH_NODE_IPADDR");
        }

        /**
         * Without a port given, one derived from the job and step, so that two jobs (or two steps
         * of one job) that share a host rarely pick the same. The range ends below 32768, where
         * Linux starts handing out ephemeral ports to outgoing connections.
         */
        @Override
        int masterPort(EnvVars vars) {
            String given = vars.firstSet(List.of(RankVariables.IRIS_MASTER_PORT, "MASTER_PORT"));
            if (given != null) {
                return port(vars, given);
            }
            String job = vars.get("SLURM_JOB_ID");
            if (job == null) {
                return RankEnvironment.DEFAULT_MASTER_PORT;
            }
            long jobId = nonNegativeLong("SLURM_JOB_ID", job);
            String stepValue = vars.get("SLURM_STEP_ID");
            // A batch or interactive step has a name, not a number; it counts as step 0.
            long step = stepValue != null && stepValue.matches("\\d{1,18}") ? Long.parseLong(stepValue) : 0;
            return RankEnvironment.SLURM_PORT_BASE + (int) ((jobId + step) % RankEnvironment.SLURM_PORT_SPAN);
        }
    },

    PMIX(RankEnvironment.SOURCE_PMIX, "PMIX_RANK", null, null, List.of(), null, List.of(), "") {
        @Override
        RankEnvironment read(EnvVars vars, String token) {
            throw new IllegalArgumentException("PMIX_RANK=" + vars.get("PMIX_RANK") + " is set, but PMIx gives the world"
                    + " size only through its client library (PMIx_Get of PMIX_JOB_SIZE), not in the environment, and no"
                    + " launcher variable Iris reads gives it (OMPI_COMM_WORLD_SIZE from Open MPI's mpirun, SLURM_NTASKS"
                    + " with SLURM_PROCID from srun); start the ranks with one of those, or set IRIS_RANK and"
                    + " IRIS_WORLD_SIZE");
        }
    };

    /** Variables that other launchers set, which no family reads: "one of N" must not pass for a world of 1. */
    private static final Map<String, String> UNREAD_WORLD_SIZES = Map.of(
            "MV2_COMM_WORLD_SIZE", "MVAPICH's mpirun_rsh",
            "JSM_NAMESPACE_SIZE", "IBM's jsrun");

    final String source;
    private final String rankVar;
    private final String worldVar;
    private final String localRankVar;
    private final List<String> localWorldVars;
    private final String nodeRankVar;
    private final List<String> nodeCountVars;
    private final String nodeHint;

    LauncherFamily(String source, String rankVar, String worldVar, String localRankVar, List<String> localWorldVars,
                   String nodeRankVar, List<String> nodeCountVars, String nodeHint) {
        this.source = source;
        this.rankVar = rankVar;
        this.worldVar = worldVar;
        this.localRankVar = localRankVar;
        this.localWorldVars = localWorldVars;
        this.nodeRankVar = nodeRankVar;
        this.nodeCountVars = nodeCountVars;
        this.nodeHint = nodeHint;
    }

    /** Whether this launcher started the process: any one of its variables is set. */
    boolean isPresent(EnvVars vars) {
        return variables().stream().anyMatch(vars::has);
    }

    /**
     * This rank's place in the job. Rank and world are required; local rank and local size come
     * as a pair, as do node rank and node count; what a launcher leaves out is derived where the
     * others determine it, and is an error naming the variables otherwise.
     */
    RankEnvironment read(EnvVars vars, String token) {
        int world = required(vars, worldVar);
        if (world < 1) {
            throw new IllegalArgumentException(worldVar + " must be >= 1, got " + world);
        }
        int rank = required(vars, rankVar);
        if (rank < 0 || rank >= world) {
            throw new IllegalArgumentException(rankVar + "=" + rank + " is outside [0, " + worldVar + "=" + world + ")");
        }
        Nodes nodes = readNodes(vars, world);
        Local local = readLocal(vars, rank, world, nodes);
        if (nodes == null) {
            nodes = deriveNodes(vars, rank, world, local);
        }
        checkLayout(world, local, nodes);

        String addr = masterAddr(vars);
        if (addr == null) {
            if (nodes.count() > 1) {
                throw new IllegalArgumentException(nodes.label() + " puts the ranks on " + nodes.count() + " nodes, but no "
                        + RankVariables.IRIS_MASTER_ADDR + " or MASTER_ADDR names the rendezvous host (rank 0's), and "
                        + RankEnvironment.DEFAULT_MASTER_ADDR + " reaches only this node");
            }
            addr = RankEnvironment.DEFAULT_MASTER_ADDR;
        }
        return new RankEnvironment(rank, world, local.rank(), local.world(), nodes.rank(), nodes.count(), addr,
                masterPort(vars), token, source);
    }

    /**
     * Rejects an environment that no family claims but that says this process is one of several,
     * such as a Slurm step whose per-task variables are gone: it must not run as a world of 1.
     */
    static void rejectUnrecognizedLaunch(EnvVars vars) {
        boolean inStep = vars.has("SLURM_STEP_ID") || vars.has("SLURM_STEP_NUM_TASKS");
        String tasks = vars.firstSet(List.of("SLURM_STEP_NUM_TASKS", "SLURM_NTASKS"));
        if (inStep && tasks != null && isMoreThanOne(vars.get(tasks))) {
            throw new IllegalArgumentException(vars.describe(List.of("SLURM_STEP_ID", tasks)) + " say this process is one"
                    + " task of a Slurm step, but SLURM_PROCID and SLURM_LOCALID are not set (srun sets them for every"
                    + " task; was the environment filtered?); pass them through, or set IRIS_RANK and IRIS_WORLD_SIZE");
        }
        for (Map.Entry<String, String> e : UNREAD_WORLD_SIZES.entrySet()) {
            if (isMoreThanOne(vars.get(e.getKey()))) {
                throw new IllegalArgumentException(e.getKey() + "=" + vars.get(e.getKey()) + " says this process is one of"
                        + " several started by " + e.getValue() + ", whose variables Iris does not read; set IRIS_RANK,"
                        + " IRIS_WORLD_SIZE, IRIS_LOCAL_RANK and IRIS_LOCAL_WORLD_SIZE from them");
            }
        }
    }

    /** Every variable of the family, in the order error messages list them. */
    List<String> variables() {
        List<String> all = new ArrayList<>();
        for (String name : new String[] {rankVar, worldVar, localRankVar}) {
            if (name != null) {
                all.add(name);
            }
        }
        all.addAll(localWorldVars);
        if (nodeRankVar != null) {
            all.add(nodeRankVar);
        }
        all.addAll(nodeCountVars);
        return all;
    }

    /** Node count for a family that can tell it without a variable of its own; null when it cannot. */
    Integer nodeCountWithoutVariable(EnvVars vars, int world) {
        return null;
    }

    /** The local size from {@code name}, which is set; {@code nodeRank} is null when not known yet. */
    int localWorldValue(EnvVars vars, String name, Integer nodeRank) {
        return vars.intValue(name);
    }

    /** The rendezvous host, or null when no variable names one. */
    String masterAddr(EnvVars vars) {
        return vars.get(vars.firstSet(List.of(RankVariables.IRIS_MASTER_ADDR, "MASTER_ADDR")));
    }

    /** The rendezvous port. */
    int masterPort(EnvVars vars) {
        String name = vars.firstSet(List.of(RankVariables.IRIS_MASTER_PORT, "MASTER_PORT"));
        return name == null ? RankEnvironment.DEFAULT_MASTER_PORT : port(vars, name);
    }

    /** Node rank and count as read; {@code label} names their source for messages. */
    private record Nodes(int rank, int count, String label) {
    }

    /** Local rank and size as read; {@code worldLabel} names the size's source for messages. */
    private record Local(int rank, int world, String worldLabel) {
    }

    private Nodes readNodes(EnvVars vars, int world) {
        if (nodeRankVar == null) {
            return null;
        }
        String countName = vars.firstSet(nodeCountVars);
        if (!vars.has(nodeRankVar)) {
            if (countName != null) {
                throw missing(nodeRankVar, vars);
            }
            return null;
        }
        int nodeRank = vars.intValue(nodeRankVar);
        int count;
        String countLabel;
        if (countName != null) {
            count = vars.intValue(countName);
            countLabel = countName + "=" + count;
        } else {
            Integer derived = nodeCountWithoutVariable(vars, world);
            if (derived == null) {
                throw missing(String.join(" or ", nodeCountVars), vars);
            }
            count = derived;
            countLabel = "node count " + count + " (" + worldVar + " / " + String.join(" / ", localWorldVars) + ")";
        }
        if (count < 1 || count > world) {
            throw new IllegalArgumentException((countName != null ? countName : "the node count") + " must be in [1, " + worldVar + "=" + world + "], got " + count);
        }
        if (nodeRank < 0 || nodeRank >= count) {
            throw new IllegalArgumentException(nodeRankVar + "=" + nodeRank + " is outside [0, " + countLabel + ")");
        }
        return new Nodes(nodeRank, count, nodeRankVar + "=" + nodeRank + " of " + countLabel);
    }

    private Local readLocal(EnvVars vars, int rank, int world, Nodes nodes) {
        String localWorldName = vars.firstSet(localWorldVars);
        boolean hasLocalRank = vars.has(localRankVar);
        if (!hasLocalRank && localWorldName == null) {
            if (nodes != null && nodes.count() > 1) {
                throw new IllegalArgumentException(nodes.label() + " puts the ranks on several nodes, but neither "
                        + localRankVar + " nor " + String.join(" or ", localWorldVars) + " is set, so this rank's place"
                        + " on its node (and its GPU) is unknown");
            }
            // No local variables and no other node: one node, where local and global coincide.
            return new Local(rank, world, worldVar);
        }
        // Half a pair is a misconfigured launcher; guessing the other half would silently put two
        // ranks on one GPU.
        if (!hasLocalRank) {
            throw missing(localRankVar, vars);
        }
        if (localWorldName == null) {
            throw missing(String.join(" or ", localWorldVars), vars);
        }
        int localRank = vars.intValue(localRankVar);
        int localWorld = localWorldValue(vars, localWorldName, nodes == null ? null : nodes.rank());
        if (localWorld < 1) {
            throw new IllegalArgumentException(localWorldName + " must be >= 1, got " + localWorld);
        }
        if (localWorld > world) {
            throw new IllegalArgumentException(localWorldName + "=" + localWorld + " exceeds " + worldVar + "=" + world);
        }
        if (localRank < 0 || localRank >= localWorld) {
            throw new IllegalArgumentException(localRankVar + "=" + localRank + " is outside [0, " + localWorldName + "="
                    + localWorld + ")");
        }
        return new Local(localRank, localWorld, localWorldName + "=" + localWorld);
    }

    /**
     * Nodes for a launcher that names none: one node when every rank is local, else nodes as
     * consecutive blocks of equal size, which is how torchrun, iris-run and the MPI launchers'
     * default placements number ranks. A rank whose numbers contradict blocks is an error, since
     * two ranks of one node would otherwise count as different nodes.
     */
    private Nodes deriveNodes(EnvVars vars, int rank, int world, Local local) {
        if (local.world() == world) {
            return new Nodes(0, 1, "a single node");
        }
        if (world % local.world() == 0 && rank % local.world() == local.rank()) {
            int count = world / local.world();
            return new Nodes(rank / local.world(), count, "node " + rank / local.world() + " of " + count
                    + " (consecutive blocks of " + local.worldLabel() + ")");
        }
        List<String> names = new ArrayList<>(List.of(rankVar, worldVar, localRankVar));
        names.addAll(localWorldVars);
        throw new IllegalArgumentException(source + " names no node index, and " + vars.describe(names) + " do not"
                + " describe nodes as consecutive blocks of equal size, the only numbering Iris can read nodes from;"
                + " " + nodeHint);
    }

    /** Every node holds at least one rank, and one node holds them all exactly when it is the only one. */
    private void checkLayout(int world, Local local, Nodes nodes) {
        if (nodes.count() == 1 && local.world() < world) {
            throw new IllegalArgumentException(local.worldLabel() + " is less than " + worldVar + "=" + world + ", but "
                    + nodes.label() + " puts every rank on one node");
        }
        if (nodes.count() > 1 && local.world() > world - (nodes.count() - 1)) {
            throw new IllegalArgumentException(local.worldLabel() + " of " + worldVar + "=" + world + " leaves fewer than"
                    + " one rank for each of the other " + (nodes.count() - 1) + " nodes of " + nodes.label());
        }
    }

    private int required(EnvVars vars, String name) {
        if (name == null || !vars.has(name)) {
            throw missing(name, vars);
        }
        return vars.intValue(name);
    }

    private IllegalArgumentException missing(String name, EnvVars vars) {
        List<String> set = variables().stream().filter(vars::has).toList();
        List<String> pairs = new ArrayList<>(List.of("the local rank and local size as a pair"));
        if (nodeRankVar != null) {
            pairs.add("the node rank and node count as a pair");
        }
        return new IllegalArgumentException(name + " is not set, but " + vars.describe(set)
                + (set.size() == 1 ? " is" : " are") + " (a " + source + " launch sets " + rankVar + " and "
                + worldVar + ", and " + String.join(" and ", pairs) + ")");
    }

    static int port(EnvVars vars, String name) {
        int port = vars.intValue(name);
        if (port < 0 || port > 65535) {
            throw new IllegalArgumentException(name + " must be in 0..65535, got " + port);
        }
        return port;
    }

    private static long nonNegativeLong(String name, String value) {
        if (!value.matches("\\d{1,18}")) {
            throw new IllegalArgumentException(name + " must be a job number such as 123456, got '" + value + "'");
        }
        return Long.parseLong(value);
    }

    private static boolean isMoreThanOne(String value) {
        return value != null && value.matches("\\d{1,9}") && Integer.parseInt(value) > 1;
    }
}
