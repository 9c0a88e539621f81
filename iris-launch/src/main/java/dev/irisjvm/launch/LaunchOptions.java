package dev.irisjvm.launch;


import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * What one launch starts on this node: the {@code iris-run} command line, parsed.
 *
 * <pre>
 * iris-run -n N [--nnodes M (--node-rank R | --simulate-nodes)] [--gpus G | --ranks-per-gpu K] [--master-addr A] [--master-port P]
 *          [--timeout SECONDS] [--stop-delay SECONDS] [--dry-run] -- CMD ARGS...
 * </pre>
 *
 * <p>Across several hosts each node runs its own {@code iris-run} with the same {@code -n},
 * {@code --nnodes}, {@code --master-addr} (node 0's host) and {@code --master-port}, and its own
 * {@code --node-rank}, as with torchrun; the world is {@code nnodes x n} ranks and node R starts
 * ranks {@code R*n .. R*n+n-1}. The nodes must share a job token, so a launch over several nodes
 * needs {@code IRIS_JOB_TOKEN} or {@code IRIS_JOB_TOKEN_FILE} in its environment:
 * <pre>
 * # on node 0 (host gpu03) and node 1, with the same IRIS_JOB_TOKEN exported on both:
 * iris-run -n 4 --nnodes 2 --node-rank 0 --master-addr gpu03 --master-port 29600 -- ./train
 * iris-run -n 4 --nnodes 2 --node-rank 1 --master-addr gpu03 --master-port 29600 -- ./train
 * </pre>
 *
 * <p>On one host, {@code --simulate-nodes} starts all {@code nnodes x n} ranks here, each node's
 * ranks with their own {@code IRIS_NODE_ID} and {@code NCCL_HOSTID}, so that Iris and NCCL treat
 * them as separate machines (NCCL then connects them over loopback sockets): correctness only.
 * <pre>
 * iris-run -n 2 --nnodes 2 --simulate-nodes -- ./train      # 2 simulated nodes x 2 ranks
 * </pre>
 *
 * <p>From code, start with {@link #of} and adjust with the {@code with...} methods:
 * <pre>{@code
 * LaunchOptions opts = LaunchOptions.parse("-n", "2", "--timeout", "60", "--", "java", "-cp", cp, "Main");
 * LaunchOptions same = LaunchOptions.of(2, "java", "-cp", cp, "Main").withTimeout(Duration.ofSeconds(60));
 * }</pre>
 *
 * @param ranksPerNode number of ranks to start on this node ({@code -n}, {@code --nproc-per-node}),
 *                    at least 1
 * @param masterAddr  address the rendezvous listens on (rank 0's host)
 * @param masterPort  its port; 0 lets the launcher pick a free one
 * @param timeout     wall-clock limit of the whole job, or null for none
 * @param dryRun      print what would be started instead of starting it
 * @param command     the program and its arguments, run once per rank
 * @param extraEnv    more variables for every rank (not settable from the command line); may
 *                    not name a variable the launcher sets itself
 * @param gracePeriod how long a stopped rank gets between SIGTERM and SIGKILL
 * @param stopDelay   after the first rank fails, how long the others get to notice (their
 *                    watchdog sees the lost rank) and exit on their own, reporting what they saw,
 *                    before they are stopped; zero stops them at once
 * @param gpus        GPUs to place the ranks on, round robin; 0: every GPU the host shows
 *                    (see {@link GpuPlacement})
 * @param ranksPerGpu ranks on each GPU, filled in order; 0: round robin instead
 * @param nodeCount   nodes of the job, each running its own launcher ({@code --nnodes}); at least 1
 * @param nodeRank    this node's index, in {@code [0, nodeCount)} ({@code --node-rank}); 0 when simulating
 * @param simulateNodes this launcher starts every node's ranks on this host, each simulated node
 *                    with a node id and an NCCL host id of its own ({@code --simulate-nodes}), so that
 *                    Iris and NCCL treat them as separate machines: for testing multi-node jobs on one host
 */
public record LaunchOptions(
        int ranksPerNode,
        String masterAddr,
        int masterPort,
        Duration timeout,
        boolean dryRun,
        List<String> command,
        Map<String, String> extraEnv,
        Duration gracePeriod,
        Duration stopDelay,
        int gpus,
        int ranksPerGpu,
        int nodeCount,
        int nodeRank,
        boolean simulateNodes) {

    /** The one-line synopsis printed with every usage error. */
    public static final String USAGE =
            "usage: iris-run -n N [--nnodes M (--node-rank R | --simulate-nodes)] [--gpus G | --ranks-per-gpu K] [--master-addr A]"
                    + " [--master-port P] [--timeout SECONDS] [--stop-delay SECONDS] [--dry-run] -- CMD [ARGS...]";

    /** Where the rendezvous listens unless {@code --master-addr} says otherwise: this host. */
    public static final String DEFAULT_MASTER_ADDR = "127.0.0.1";
    /** Time a stopped rank gets to exit on SIGTERM before SIGKILL. */
    public static final Duration DEFAULT_GRACE_PERIOD = Duration.ofSeconds(3);
    /**
     * Time the other ranks get, after the first failure, to exit on their own: enough for a rank's
     * watchdog to notice the lost rank (at once when its process ended) and for the rank to say so.
     */
    public static final Duration DEFAULT_STOP_DELAY = Duration.ofSeconds(2);

    /** Checks every component; see the class comment for their meaning. */
    public LaunchOptions {
        if (ranksPerNode < 1) {
            throw new IllegalArgumentException("ranksPerNode must be >= 1, got " + ranksPerNode);
        }
        if (nodeCount < 1 || nodeCount > MAX_NODES) {
            throw new IllegalArgumentException("nodeCount must be in [1, " + MAX_NODES + "], got " + nodeCount);
        }
        if (nodeRank < 0 || nodeRank >= nodeCount) {
            throw new IllegalArgumentException("nodeRank must be in [0, nodeCount=" + nodeCount + "), got " + nodeRank);
        }
        if (masterAddr == null || masterAddr.isBlank()) {
            throw new IllegalArgumentException("masterAddr must be a host name or address, got '" + masterAddr + "'");
        }
        if (masterPort < 0 || masterPort > 65535) {
            throw new IllegalArgumentException("masterPort must be in 0..65535 (0: pick a free one), got " + masterPort);
        }
        if (nodeCount > 1 && masterPort == 0 && !simulateNodes) {
            throw new IllegalArgumentException("masterPort must be given when nodeCount is " + nodeCount
                    + ": a free port picked on one host cannot be agreed on by the others");
        }
        if (timeout != null && (timeout.isNegative() || timeout.isZero())) {
            throw new IllegalArgumentException("timeout must be positive or null (none), got " + timeout);
        }
        command = List.copyOf(Objects.requireNonNull(command, "command"));
        if (command.isEmpty()) {
            throw new IllegalArgumentException("command must name a program to run");
        }
        extraEnv = Map.copyOf(extraEnv == null ? Map.of() : extraEnv);
        for (String name : extraEnv.keySet()) {
            if (Launcher.MANAGED_VARIABLES.contains(name)) {
                throw new IllegalArgumentException("extraEnv must not set " + name + ": the launcher sets it for each rank");
            }
        }
        Objects.requireNonNull(gracePeriod, "gracePeriod");
        if (gracePeriod.isNegative()) {
            throw new IllegalArgumentException("gracePeriod must not be negative, got " + gracePeriod);
        }
        Objects.requireNonNull(stopDelay, "stopDelay");
        if (stopDelay.isNegative()) {
            throw new IllegalArgumentException("stopDelay must not be negative, got " + stopDelay);
        }
        if (gpus < 0) {
            throw new IllegalArgumentException("gpus must be >= 1, or 0 for every GPU the host shows, got " + gpus);
        }
        if (ranksPerGpu < 0) {
            throw new IllegalArgumentException("ranksPerGpu must be >= 1, or 0 for round robin, got " + ranksPerGpu);
        }
        if (gpus > 0 && ranksPerGpu > 0) {
            throw new IllegalArgumentException("give gpus or ranksPerGpu, not both (got " + gpus + " and " + ranksPerGpu + ")");
        }
        if (simulateNodes && nodeRank != 0) {
            throw new IllegalArgumentException("nodeRank must be 0 when simulating nodes (this launcher starts every"
                    + " node), got " + nodeRank);
        }
        // Checked here so that a bad combination fails at parse time, before anything starts.
        GpuPlacement.plan(simulateNodes ? nodeCount * ranksPerNode : ranksPerNode, gpus, ranksPerGpu);
    }

    /** The options without simulated nodes, the form before {@code --simulate-nodes}. */
    public LaunchOptions(int ranksPerNode, String masterAddr, int masterPort, Duration timeout, boolean dryRun,
                         List<String> command, Map<String, String> extraEnv, Duration gracePeriod, Duration stopDelay,
                         int gpus, int ranksPerGpu, int nodeCount, int nodeRank) {
        this(ranksPerNode, masterAddr, masterPort, timeout, dryRun, command, extraEnv, gracePeriod, stopDelay, gpus,
                ranksPerGpu, nodeCount, nodeRank, false);
    }

    /** The options of a launch on one node, the form before {@code --nnodes}. */
    public LaunchOptions(int ranks, String masterAddr, int masterPort, Duration timeout, boolean dryRun,
                         List<String> command, Map<String, String> extraEnv, Duration gracePeriod, Duration stopDelay,
                         int gpus, int ranksPerGpu) {
        this(ranks, masterAddr, masterPort, timeout, dryRun, command, extraEnv, gracePeriod, stopDelay, gpus, ranksPerGpu,
                1, 0, false);
    }

    /** Ranks of the whole job, on every node: {@code nodeCount x ranksPerNode}. */
    public int worldSize() {
        return nodeCount * ranksPerNode;
    }

    /**
     * The global rank of this launcher's process {@code process} (this node's local rank, or, when
     * simulating nodes, the index among every node's ranks): node-major, as torchrun numbers them.
     */
    public int globalRank(int process) {
        return simulateNodes ? process : nodeRank * ranksPerNode + process;
    }

    /** How many ranks this launcher starts: this node's, or every node's when simulating nodes. */
    public int processCount() {
        return simulateNodes ? worldSize() : ranksPerNode;
    }

    /** The node of this launcher's process {@code process}. */
    public int nodeOf(int process) {
        return simulateNodes ? process / ranksPerNode : nodeRank;
    }

    /** The local rank (index on its node) of this launcher's process {@code process}. */
    public int localRankOf(int process) {
        return simulateNodes ? process % ranksPerNode : process;
    }

    /**
     * A copy that starts {@code count} simulated nodes of {@code ranksPerNode()} ranks each on this
     * host ({@code --nnodes count --simulate-nodes}); 1 ends the simulation.
     */
    public LaunchOptions withSimulatedNodes(int count) {
        return new LaunchOptions(ranksPerNode, masterAddr, masterPort, timeout, dryRun, command, extraEnv, gracePeriod,
                stopDelay, gpus, ranksPerGpu, count, 0, count > 1);
    }

    /** {@code ranks} ranks of {@code command} on this host alone, everything else at its default. */
    public static LaunchOptions of(int ranks, List<String> command) {
        return new LaunchOptions(ranks, DEFAULT_MASTER_ADDR, 0, null, false, command, Map.of(),
                DEFAULT_GRACE_PERIOD, DEFAULT_STOP_DELAY, 0, 0, 1, 0);
    }

    /** {@code ranks} ranks of {@code command} on this host alone, everything else at its default. */
    public static LaunchOptions of(int ranks, String... command) {
        return of(ranks, List.of(command));
    }

    /** A copy with another master address. */
    public LaunchOptions withMasterAddr(String addr) {
        return new LaunchOptions(ranksPerNode, addr, masterPort, timeout, dryRun, command, extraEnv, gracePeriod, stopDelay, gpus, ranksPerGpu, nodeCount, nodeRank, simulateNodes);
    }

    /** A copy with another master port (0: pick a free one). */
    public LaunchOptions withMasterPort(int port) {
        return new LaunchOptions(ranksPerNode, masterAddr, port, timeout, dryRun, command, extraEnv, gracePeriod, stopDelay, gpus, ranksPerGpu, nodeCount, nodeRank, simulateNodes);
    }

    /** A copy with another wall-clock limit for the whole job, or none when {@code limit} is null. */
    public LaunchOptions withTimeout(Duration limit) {
        return new LaunchOptions(ranksPerNode, masterAddr, masterPort, limit, dryRun, command, extraEnv, gracePeriod, stopDelay, gpus, ranksPerGpu, nodeCount, nodeRank, simulateNodes);
    }

    /** A copy that only prints (true) or really starts (false). */
    public LaunchOptions withDryRun(boolean dry) {
        return new LaunchOptions(ranksPerNode, masterAddr, masterPort, timeout, dry, command, extraEnv, gracePeriod, stopDelay, gpus, ranksPerGpu, nodeCount, nodeRank, simulateNodes);
    }

    /** A copy with these extra variables for every rank, replacing earlier ones. */
    public LaunchOptions withExtraEnv(Map<String, String> env) {
        return new LaunchOptions(ranksPerNode, masterAddr, masterPort, timeout, dryRun, command, env, gracePeriod, stopDelay, gpus, ranksPerGpu, nodeCount, nodeRank, simulateNodes);
    }

    /** A copy with another SIGTERM-to-SIGKILL grace period. */
    public LaunchOptions withGracePeriod(Duration grace) {
        return new LaunchOptions(ranksPerNode, masterAddr, masterPort, timeout, dryRun, command, extraEnv, grace, stopDelay, gpus, ranksPerGpu, nodeCount, nodeRank, simulateNodes);
    }

    /** A copy in which the other ranks get {@code delay} to exit on their own after the first failure. */
    public LaunchOptions withStopDelay(Duration delay) {
        return new LaunchOptions(ranksPerNode, masterAddr, masterPort, timeout, dryRun, command, extraEnv, gracePeriod, delay, gpus, ranksPerGpu, nodeCount, nodeRank, simulateNodes);
    }

    /** A copy that places the ranks round robin on {@code count} GPUs (0: every GPU the host shows). */
    public LaunchOptions withGpus(int count) {
        return new LaunchOptions(ranksPerNode, masterAddr, masterPort, timeout, dryRun, command, extraEnv, gracePeriod, stopDelay, count, 0, nodeCount, nodeRank, simulateNodes);
    }

    /**
     * A copy that is node {@code rank} of {@code count} nodes, each running {@code ranksPerNode()}
     * ranks; more than one node needs a master port ({@link #withMasterPort}).
     */
    public LaunchOptions withNodes(int count, int rank) {
        return new LaunchOptions(ranksPerNode, masterAddr, masterPort, timeout, dryRun, command, extraEnv, gracePeriod, stopDelay, gpus, ranksPerGpu, count, rank, simulateNodes);
    }

    /** A copy that puts {@code k} ranks on each GPU in turn (0: round robin instead). */
    public LaunchOptions withRanksPerGpu(int k) {
        return new LaunchOptions(ranksPerNode, masterAddr, masterPort, timeout, dryRun, command, extraEnv, gracePeriod, stopDelay, 0, k, nodeCount, nodeRank, simulateNodes);
    }

    /** True when the arguments before {@code --} ask for help ({@code -h} or {@code --help}). */
    public static boolean wantsHelp(List<String> args) {
        for (String arg : args) {
            if (arg.equals("--")) {
                return false;
            }
            if (arg.equals("-h") || arg.equals("--help")) {
                return true;
            }
        }
        return false;
    }

    /** @see #parse(List) */
    public static LaunchOptions parse(String... args) {
        return parse(List.of(args));
    }

    /** {@link #parse(List, Map)} in this process's environment. */
    public static LaunchOptions parse(List<String> args) {
        return parse(args, System.getenv());
    }

    /**
     * Parses an {@code iris-run} command line. Everything after the first {@code --} is the
     * command, verbatim. Long options also take the {@code --name=value} form. {@code env} is
     * the launcher's environment, where a launch over several nodes must find the shared job
     * token ({@link #requireSharedJobToken}).
     *
     * <pre>{@code
     * LaunchOptions o = LaunchOptions.parse(List.of("-n", "4", "--nnodes", "2", "--node-rank", "1",
     *         "--master-addr", "gpu03", "--master-port", "29600", "--", "./train"), Map.of("IRIS_JOB_TOKEN", token));
     * o.worldSize();       // 8
     * o.globalRank(0);     // 4
     * }</pre>
     *
     * @throws IllegalArgumentException with a one-line message naming the offending option
     */
    public static LaunchOptions parse(List<String> args, Map<String, String> env) {
        Integer ranks = null;
        int nodeCount = 1;
        Integer nodeRank = null;
        String addr = DEFAULT_MASTER_ADDR;
        boolean addrGiven = false;
        int port = 0;
        Duration timeout = null;
        Duration stopDelay = DEFAULT_STOP_DELAY;
        boolean dryRun = false;
        boolean simulate = false;
        int gpus = 0;
        int ranksPerGpu = 0;
        List<String> command = null;

        for (int i = 0; i < args.size(); i++) {
            String arg = Objects.requireNonNull(args.get(i), "argument");
            if (arg.equals("--")) {
                command = args.subList(i + 1, args.size());
                break;
            }
            String name = arg;
            String inline = null;
            int eq = arg.indexOf('=');
            if (arg.startsWith("--") && eq > 0) {
                name = arg.substring(0, eq);
                inline = arg.substring(eq + 1);
            }
            String value = null;
            if (VALUED.contains(name)) {
                if (inline == null) {
                    value = nextValue(args, i, name);
                    i++;
                } else {
                    value = inline;
                }
            } else if (inline != null && (name.equals("--dry-run") || name.equals("--simulate-nodes"))) {
                throw new IllegalArgumentException(name + " takes no value, got '" + arg + "'");
            }
            switch (name) {
                case "-n", "--nproc-per-node" -> ranks = parseRanks(name, value);
                case "--nnodes" -> nodeCount = parseNodes(value);
                case "--node-rank" -> nodeRank = parseNodeRank(value);
                case "--master-addr" -> {
                    addr = parseAddr(value);
                    addrGiven = true;
                }
                case "--master-port" -> port = parsePort(value);
                case "--timeout" -> timeout = parseTimeout(value);
                case "--stop-delay" -> stopDelay = parseStopDelay(value);
                case "--gpus" -> gpus = parseCount(name, value, "GPUs");
                case "--ranks-per-gpu" -> ranksPerGpu = parseCount(name, value, "ranks per GPU");
                case "--dry-run" -> dryRun = true;
                case "--simulate-nodes" -> simulate = true;
                default -> throw new IllegalArgumentException(arg.startsWith("-")
                        ? "unknown option " + arg
                        : "unexpected argument '" + arg + "': the command must follow '--'");
            }
        }

        if (ranks == null) {
            throw new IllegalArgumentException("missing -n N (the number of ranks to start on this node)");
        }
        if (command == null) {
            throw new IllegalArgumentException("missing '--' followed by the command to run");
        }
        if (command.isEmpty()) {
            throw new IllegalArgumentException("no command after '--'");
        }
        if (gpus > 0 && ranksPerGpu > 0) {
            throw new IllegalArgumentException("--gpus and --ranks-per-gpu are alternatives: give one");
        }
        if (simulate) {
            checkSimulatedNodes(nodeCount, nodeRank, addrGiven, ranks);
        } else {
            checkNodes(nodeCount, nodeRank, addrGiven, port, ranks);
            requireSharedJobToken(nodeCount, env);
        }
        return new LaunchOptions(ranks, addr, port, timeout, dryRun, new ArrayList<>(command),
                new LinkedHashMap<>(), DEFAULT_GRACE_PERIOD, stopDelay, gpus, ranksPerGpu, nodeCount,
                nodeRank == null ? 0 : nodeRank, simulate);
    }

    /**
     * Checks that a launch over {@code nodeCount} nodes can share one job token: the launchers of
     * different nodes cannot agree on a random one, so the environment must hold the token
     * ({@value RankVariables#IRIS_JOB_TOKEN}) or name a file with it ({@value RankVariables#IRIS_JOB_TOKEN_FILE}).
     * One node needs neither: its launcher makes a token up.
     *
     * @throws IllegalArgumentException naming both variables when neither is set
     */
    public static void requireSharedJobToken(int nodeCount, Map<String, String> env) {
        if (nodeCount <= 1 || isSet(env, RankVariables.IRIS_JOB_TOKEN) || isSet(env, RankVariables.IRIS_JOB_TOKEN_FILE)) {
            return;
        }
        throw new IllegalArgumentException("--nnodes " + nodeCount + " needs the same job token on every node: set "
                + RankVariables.IRIS_JOB_TOKEN + " (e.g. from openssl rand -hex 16) or " + RankVariables.IRIS_JOB_TOKEN_FILE
                + " (a file readable on every node) in the environment of each node's iris-run");
    }

    /** The options that only make sense together once a job spans several hosts. */
    private static void checkNodes(int nodeCount, Integer nodeRank, boolean addrGiven, int port, int ranks) {
        if (nodeRank != null && nodeRank >= nodeCount) {
            throw new IllegalArgumentException("--node-rank expects a node index in [0, --nnodes " + nodeCount + "), got "
                    + nodeRank);
        }
        if (nodeCount == 1) {
            return;
        }
        if (nodeRank == null) {
            throw new IllegalArgumentException("--nnodes " + nodeCount + " needs --node-rank R, this node's index in [0, "
                    + nodeCount + "): each node runs its own iris-run");
        }
        if (!addrGiven) {
            throw new IllegalArgumentException("--nnodes " + nodeCount + " needs --master-addr A, the host of node 0,"
                    + " where rank 0 serves the rendezvous");
        }
        if (port == 0) {
            throw new IllegalArgumentException("--nnodes " + nodeCount + " needs --master-port P, the same on every node:"
                    + " a free port picked on one host cannot be agreed on by the others");
        }
        if ((long) nodeCount * ranks > MAX_JOB_SIZE) {
            throw new IllegalArgumentException("--nnodes " + nodeCount + " x -n " + ranks + " is more than "
                    + MAX_JOB_SIZE + " ranks");
        }
    }

    /** Simulated nodes all run here, from this one launcher, which picks the port and makes the token up. */
    private static void checkSimulatedNodes(int nodeCount, Integer nodeRank, boolean addrGiven, int ranks) {
        if (nodeCount < 2) {
            throw new IllegalArgumentException("--simulate-nodes needs --nnodes M with M >= 2, the number of nodes to"
                    + " simulate on this host, got " + nodeCount);
        }
        if (nodeRank != null) {
            throw new IllegalArgumentException("--simulate-nodes starts every node here: leave out --node-rank (got "
                    + nodeRank + ")");
        }
        if (addrGiven) {
            throw new IllegalArgumentException("--simulate-nodes runs the rendezvous on this host: leave out --master-addr");
        }
        if ((long) nodeCount * ranks > MAX_JOB_SIZE) {
            throw new IllegalArgumentException("--nnodes " + nodeCount + " x -n " + ranks + " is more than "
                    + MAX_JOB_SIZE + " ranks");
        }
    }

    private static boolean isSet(Map<String, String> env, String name) {
        String value = env.get(name);
        return value != null && !value.isBlank();
    }

    private static final Set<String> VALUED = Set.of("-n", "--nproc-per-node", "--nnodes", "--node-rank", "--gpus",
            "--ranks-per-gpu", "--master-addr", "--master-port", "--timeout", "--stop-delay");

    private static String nextValue(List<String> args, int i, String name) {
        if (i + 1 >= args.size() || args.get(i + 1).equals("--")) {
            throw new IllegalArgumentException(name + " needs a value");
        }
        return args.get(i + 1);
    }

    /** The most ranks one launch starts: each is a process with its own GPU context. */
    static final int MAX_WORLD_SIZE = 4096;
    /** The most nodes of one job. */
    static final int MAX_NODES = 4096;
    /** The most ranks of one job, on all nodes together. */
    static final int MAX_JOB_SIZE = 1 << 20;

    private static int parseRanks(String option, String value) {
        int n = parseCount(option, value, "ranks");
        if (n > MAX_WORLD_SIZE) {
            throw new IllegalArgumentException(option + " expects at most " + MAX_WORLD_SIZE + " ranks on one host, got " + n);
        }
        return n;
    }

    private static int parseNodes(String value) {
        int n = parseCount("--nnodes", value, "nodes");
        if (n > MAX_NODES) {
            throw new IllegalArgumentException("--nnodes expects at most " + MAX_NODES + " nodes, got " + n);
        }
        return n;
    }

    private static int parseNodeRank(String value) {
        try {
            int r = Integer.parseInt(value);
            if (r >= 0) {
                return r;
            }
        } catch (NumberFormatException e) {
            // reported below, with the form expected
        }
        throw new IllegalArgumentException("--node-rank expects a node index >= 0, got '" + value + "'");
    }

    private static int parseCount(String option, String value, String what) {
        int n;
        try {
            n = Integer.parseInt(value);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(option + " expects a whole number of " + what + " >= 1, got '" + value + "'");
        }
        if (n < 1) {
            throw new IllegalArgumentException(option + " expects a number of " + what + " >= 1, got " + n);
        }
        return n;
    }

    private static String parseAddr(String value) {
        if (value.isBlank()) {
            throw new IllegalArgumentException("--master-addr expects a host name or address, got '" + value + "'");
        }
        return value;
    }

    private static int parsePort(String value) {
        int port;
        try {
            port = Integer.parseInt(value);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("--master-port expects a port number in 1..65535, got '" + value + "'");
        }
        if (port < 1 || port > 65535) {
            throw new IllegalArgumentException("--master-port expects a port number in 1..65535, got " + port);
        }
        return port;
    }

    private static Duration parseStopDelay(String value) {
        if (!value.matches("[0-9]+(\\.[0-9]*)?|\\.[0-9]+")) {
            throw new IllegalArgumentException("--stop-delay expects a number of seconds >= 0, got '" + value + "'");
        }
        return Duration.ofNanos(Math.round(Math.min(Double.parseDouble(value), 1e6) * 1e9));
    }

    private static Duration parseTimeout(String value) {
        // Plain decimals only: Double.parseDouble would also take "1e3", "0x1p3", "NaN" or "1d".
        if (!value.matches("[0-9]+(\\.[0-9]*)?|\\.[0-9]+") || Double.parseDouble(value) <= 0) {
            throw new IllegalArgumentException("--timeout expects a positive number of seconds, got '" + value + "'");
        }
        double seconds = Double.parseDouble(value);
        return Duration.ofNanos(Math.max(1_000_000L, Math.round(Math.min(seconds, 1e9) * 1e9)));
    }
}
