package dev.irisjvm.launch;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.math.BigDecimal;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Collections;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Predicate;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * Starts the ranks of a multi-GPU job on this host, one process per rank, and watches them:
 * the JVM counterpart of {@code torchrun --standalone}. {@code bin/iris-run} runs {@link #main}.
 *
 * <pre>
 * bin/iris-run -n 2 -- java -cp app.jar com.example.Train
 * </pre>
 *
 * <p>Each rank r of N gets {@code IRIS_RANK=r}, {@code IRIS_WORLD_SIZE=N},
 * {@code IRIS_LOCAL_RANK=r}, {@code IRIS_LOCAL_WORLD_SIZE=N}, {@code IRIS_NODE_RANK=0},
 * {@code IRIS_NODE_COUNT=1}, {@code IRIS_MASTER_ADDR},
 * {@code IRIS_MASTER_PORT} (a free port unless given) and {@code IRIS_JOB_TOKEN} (random, one per
 * launch), on top of the launcher's own environment, and always {@link #SAFETY_ENV}.
 *
 * <p>Over several nodes ({@code --nnodes M --node-rank R}, one launcher per node, as with
 * torchrun) node R starts local ranks l = 0..n-1 as global ranks {@code R*n + l}: each gets
 * {@code IRIS_RANK=R*n+l}, {@code IRIS_WORLD_SIZE=M*n}, {@code IRIS_LOCAL_RANK=l},
 * {@code IRIS_LOCAL_WORLD_SIZE=n}, {@code IRIS_NODE_RANK=R}, {@code IRIS_NODE_COUNT=M}. The
 * token then comes from the environment every node's launcher was given ({@code IRIS_JOB_TOKEN} or
 * {@code IRIS_JOB_TOKEN_FILE}, see {@link LaunchOptions#requireSharedJobToken}), which the ranks
 * inherit; the launcher sets none itself. Output prefixes, failures and stopped ranks name global
 * ranks. Each launcher watches only its own node's ranks. Where the
 * launcher can count the host's GPUs (or {@code --gpus} / {@code --ranks-per-gpu} says), each rank
 * also gets {@code IRIS_DEVICE} as {@link GpuPlacement} plans it, round robin by default, so that
 * four ranks on a one-GPU machine all use GPU 0; ranks that share a GPU also get a
 * {@code NCCL_HOSTID} each, so that NCCL accepts them (see {@link #sharedGpuNcclEnv}).
 * {@code CUDA_VISIBLE_DEVICES} is left alone because peer IPC mappings need every device visible in
 * every rank.
 *
 * <p>With {@code --simulate-nodes} this one launcher plays every node of {@code --nnodes M} on
 * this host: it starts all {@code M x n} ranks, numbered and given node variables as above, and
 * each simulated node's ranks also get {@code IRIS_NODE_ID=simulated-node-R} and
 * {@code NCCL_HOSTID=iris-simulated-node-R} (with {@code NCCL_SOCKET_IFNAME=lo} and
 * {@code NCCL_IB_DISABLE=1} unless set), so that Iris maps a heap per simulated node and NCCL
 * talks between them over sockets (see {@link #simulatedNodeNcclEnv}).
 *
 * <p>Each rank's stdout and stderr come back line by line with a {@code "[r] "} prefix. When a
 * rank exits non-zero the others get {@code --stop-delay} (default 2 s) to notice (Iris's watchdog
 * sees a lost rank at once) and exit on their own, saying what they saw; then the ones still
 * running are stopped: SIGTERM to each one's process tree and to any
 * process that still carries its {@code IRIS_RANK} and this launch's {@code IRIS_JOB_TOKEN} (a
 * detached helper would otherwise keep a GPU busy), SIGKILL after the grace period. The launcher
 * then exits with the failed rank's code. Past {@code --timeout} it stops everything and exits
 * 124; on SIGINT/SIGTERM it stops everything too; bad usage exits 2.
 *
 * <p>Nothing is left behind, however the job ends. On Linux each rank starts through
 * {@code setpriv --pdeathsig TERM} and {@code setsid} ({@link RankWrapper}): the kernel sends it
 * SIGTERM if the launcher dies, and it leads a session that its children and grandchildren share
 * even after they detach. When the job ends (every rank exited, one failed, the timeout passed,
 * SIGINT or SIGTERM) the launcher stops every process left in the ranks' sessions or carrying a rank
 * of this launch in its environment, a background child of a rank that exited 0 included, and says
 * so. If the launcher itself is killed (SIGKILL included) before it can do that, a small guard
 * process that watches a pipe from the launcher does it instead ({@link ProcessGuard}). Since the
 * ranks have sessions of their own, Ctrl-C reaches only the launcher, which stops them with SIGTERM
 * and, after the grace period, SIGKILL. Without setsid, setpriv or {@code /proc} (macOS) the
 * launcher stops the ranks' process trees and the guard the ranks themselves; there, what a rank
 * started may survive a launcher that is killed.
 *
 * <p>From code (tests, GPU harnesses):
 * <pre>{@code
 * List<String> lines = new ArrayList<>();
 * LaunchResult r = Launcher.run(LaunchOptions.of(2, "sh", "-c", "echo $IRIS_RANK"), lines::add);
 * // r.exitCode() == 0; lines holds "[0] 0" and "[1] 1" in some order
 * }</pre>
 */
public final class Launcher {

    /** Exit code for a bad command line. */
    public static final int EXIT_USAGE = 2;
    /** Exit code when the job ran past {@code --timeout}, as with coreutils' {@code timeout}. */
    public static final int EXIT_TIMEOUT = 124;
    /** Exit code when a rank's program could not be started, as a shell reports "not found". */
    public static final int EXIT_CANNOT_START = 127;
    /** Exit code when the launcher itself was interrupted (128 + SIGINT). */
    public static final int EXIT_INTERRUPTED = 130;

    /**
     * Set in every rank, over anything inherited. NVLink multicast (NVLS) on a shared host can
     * wedge the fabric for every tenant, so no launch may turn it on.
     */
    public static final Map<String, String> SAFETY_ENV = orderedMap(
            "NCCL_NVLS_ENABLE", "0",
            "TORCH_SYMM_MEM_DISABLE_MULTICAST", "1",
            "NVSHMEM_DISABLE_NVLS", "1");

    /** The GPU a rank drives, set when the launcher places the ranks ({@link GpuPlacement}). */
    static final String IRIS_DEVICE = "IRIS_DEVICE";
    private static final String NCCL_HOSTID = "NCCL_HOSTID";
    /** The node a rank belongs to when nodes are simulated (iris-core's NodeKey reads it). */
    static final String IRIS_NODE_ID = "IRIS_NODE_ID";
    /** IRIS_NODE_ID of simulated node i is this prefix and i. */
    static final String SIMULATED_NODE_PREFIX = "simulated-node-";
    private static final Map<String, String> SHARED_GPU_NCCL_DEFAULTS = orderedMap(
            "NCCL_SOCKET_IFNAME", "lo",
            "NCCL_IB_DISABLE", "1");
    private static final Path NVIDIA_PROC_GPUS = Path.of("/proc/driver/nvidia/gpus");

    /** Variables the launcher sets for each rank; {@link LaunchOptions#extraEnv()} may not name them. */
    static final Set<String> MANAGED_VARIABLES = Set.of(
            RankVariables.IRIS_RANK, RankVariables.IRIS_WORLD_SIZE,
            RankVariables.IRIS_LOCAL_RANK, RankVariables.IRIS_LOCAL_WORLD_SIZE,
            RankVariables.IRIS_NODE_RANK, RankVariables.IRIS_NODE_COUNT,
            RankVariables.IRIS_MASTER_ADDR, RankVariables.IRIS_MASTER_PORT,
            RankVariables.IRIS_JOB_TOKEN,
            "NCCL_NVLS_ENABLE", "TORCH_SYMM_MEM_DISABLE_MULTICAST", "NVSHMEM_DISABLE_NVLS");

    private static final String PREFIX = "iris-run: ";
    private static final String HELP = """
            Starts N ranks of CMD on this host, one process each. Rank r uses GPU r mod G, G the
            host's GPUs; with fewer GPUs than ranks, ranks share GPUs (for correctness, not timing).
            Over several hosts, run one iris-run per node with the same -n, --nnodes, --master-addr
            and --master-port, and IRIS_JOB_TOKEN (or IRIS_JOB_TOKEN_FILE) set alike on each.
              -n N, --nproc-per-node N  number of ranks on this node (required)
              --nnodes M         nodes of the job (default 1); the world is M x N ranks
              --node-rank R      this node's index in 0..M-1 (required with --nnodes > 1);
                                 its ranks are R*N .. R*N+N-1
              --simulate-nodes   with --nnodes M: start all M x N ranks on this host, node i's
                                 with IRIS_NODE_ID=simulated-node-i and an NCCL_HOSTID of its
                                 own (NCCL over loopback sockets); for tests, never for timing
              --gpus G           place the ranks round robin on G GPUs (default: all the host shows)
              --ranks-per-gpu K  K ranks on GPU 0, the next K on GPU 1, ...
              --master-addr A    rendezvous address, node 0's host (default 127.0.0.1;
                                 required with --nnodes > 1)
              --master-port P    rendezvous port (default: a free port; required with
                                 --nnodes > 1)
              --timeout SECONDS  stop every rank and exit 124 after this long
              --stop-delay SECONDS  after a rank fails, give the others this long to exit on
                                 their own before stopping them (default 2; 0: at once)
              --dry-run          print each rank's environment and command; start nothing
            Exits with the code of the first rank to fail, after stopping the others. When the job
            ends, whatever the ranks started is stopped too, even if iris-run itself is killed.""";

    /** How long to wait for a rank's output to drain after every rank has exited. */
    private static final Duration DRAIN_LIMIT = Duration.ofSeconds(2);
    /** How long to wait for SIGKILLed processes to vanish, so callers see them gone. */
    private static final Duration KILL_WAIT = Duration.ofSeconds(1);
    private static final boolean HAS_PROC = Files.isDirectory(Path.of("/proc/self"));
    private static final Pattern SHELL_SAFE = Pattern.compile("[A-Za-z0-9_@%+=:,./-]+");

    private Launcher() {
    }

    /** Runs {@code iris-run}'s command line and exits the JVM with its code. */
    public static void main(String[] args) {
        System.exit(execute(args, System.out, System.err));
    }

    /**
     * {@link #main} without {@code System.exit}: parses, runs, reports to the given streams and
     * returns the exit code.
     *
     * <pre>{@code
     * int code = Launcher.execute(new String[] {"-n", "2", "--", "./worker"}, System.out, System.err);
     * }</pre>
     */
    public static int execute(String[] args, PrintStream out, PrintStream err) {
        List<String> list = Arrays.asList(args);
        if (LaunchOptions.wantsHelp(list)) {
            out.println(LaunchOptions.USAGE);
            out.println(HELP);
            return 0;
        }
        LaunchOptions options;
        try {
            options = LaunchOptions.parse(list, System.getenv());
        } catch (IllegalArgumentException e) {
            err.println(PREFIX + e.getMessage());
            err.println(LaunchOptions.USAGE);
            return EXIT_USAGE;
        }
        try {
            return run(options, out::println, err::println).exitCode();
        } catch (RuntimeException e) {
            err.println(PREFIX + e.getMessage());
            return 1;
        }
    }

    /**
     * Runs a job, sending every rank's stdout and stderr lines (prefixed {@code "[r] "}) and the
     * launcher's own messages (prefixed {@code "iris-run: "}) to one consumer. Calls to the
     * consumer are serialized, one whole line at a time, so it need not be thread-safe. The ranks
     * are started from the calling thread, which stays here until every rank has exited: their
     * parent-death signal ({@link RankWrapper}) fires when that thread ends.
     *
     * <pre>{@code
     * List<String> lines = new ArrayList<>();
     * LaunchResult r = Launcher.run(LaunchOptions.parse("-n", "2", "--", "./worker"), lines::add);
     * }</pre>
     *
     * @throws UncheckedIOException if no master port could be picked
     */
    public static LaunchResult run(LaunchOptions options, Consumer<String> outputLines) {
        return run(options, outputLines, outputLines);
    }

    /**
     * Like {@link #run(LaunchOptions, Consumer)}, with the ranks' stdout lines (and dry-run lines)
     * going to {@code stdoutLines} and their stderr lines and the launcher's messages to
     * {@code stderrLines}. Calls to both consumers are serialized together.
     */
    public static LaunchResult run(LaunchOptions options, Consumer<String> stdoutLines, Consumer<String> stderrLines) {
        return run(options, stdoutLines, stderrLines, System.getenv());
    }

    /**
     * Like {@link #run(LaunchOptions, Consumer, Consumer)}, in {@code environment} instead of this
     * process's: the ranks inherit it, and a launch over several nodes finds its job token there.
     *
     * @throws IllegalArgumentException when the options span several nodes and the environment
     *         holds no shared job token
     */
    static LaunchResult run(LaunchOptions options, Consumer<String> stdoutLines, Consumer<String> stderrLines,
                            Map<String, String> environment) {
        LaunchOptions.requireSharedJobToken(options.simulateNodes() ? 1 : options.nodeCount(), environment);
        return new Job(options, stdoutLines, stderrLines, Map.copyOf(environment)).run();
    }

    /**
     * The variables the launcher sets for each of this node's ranks, by local rank, in the order a
     * dry run prints them.
     *
     * <pre>{@code
     * // node 1 of 2 with 4 ranks each: local rank 1 is rank 5
     * rankEnvironments(options, 29600, null, GpuPlacement.plan(4, 0, 0), System.getenv()).get(1)
     * //   IRIS_RANK=5 IRIS_WORLD_SIZE=8 IRIS_LOCAL_RANK=1 IRIS_LOCAL_WORLD_SIZE=4 IRIS_NODE_RANK=1 ...
     * }</pre>
     *
     * @param port      the master port to hand out (already picked, not 0)
     * @param token     the job token shared by every rank, or null when the ranks inherit it (several nodes)
     * @param placement each local rank's GPU; when not planned, each rank chooses its own
     * @param inherited the launcher's own environment, which every rank inherits
     */
    static List<Map<String, String>> rankEnvironments(LaunchOptions options, int port, String token, GpuPlacement placement,
                                                      Map<String, String> inherited) {
        List<Map<String, String>> envs = new ArrayList<>();
        int n = options.ranksPerNode();
        for (int process = 0; process < options.processCount(); process++) {
            int rank = options.globalRank(process);
            int node = options.nodeOf(process);
            Map<String, String> env = new LinkedHashMap<>();
            env.put(RankVariables.IRIS_RANK, Integer.toString(rank));
            env.put(RankVariables.IRIS_WORLD_SIZE, Integer.toString(options.worldSize()));
            env.put(RankVariables.IRIS_LOCAL_RANK, Integer.toString(options.localRankOf(process)));
            env.put(RankVariables.IRIS_LOCAL_WORLD_SIZE, Integer.toString(n));
            env.put(RankVariables.IRIS_NODE_RANK, Integer.toString(node));
            env.put(RankVariables.IRIS_NODE_COUNT, Integer.toString(options.nodeCount()));
            env.put(RankVariables.IRIS_MASTER_ADDR, options.masterAddr());
            env.put(RankVariables.IRIS_MASTER_PORT, Integer.toString(port));
            if (token != null) {
                env.put(RankVariables.IRIS_JOB_TOKEN, token);
            }
            // The placement is per host: this launcher's ranks on this host's GPUs.
            if (placement.isPlanned() && !options.extraEnv().containsKey(IRIS_DEVICE)) {
                env.put(IRIS_DEVICE, Integer.toString(placement.device(process)));
            }
            if (options.simulateNodes()) {
                env.put(IRIS_NODE_ID, SIMULATED_NODE_PREFIX + node);
                env.putAll(simulatedNodeNcclEnv(node, sharesGpuWithinNode(options, placement, process) ? rank : -1,
                        options.extraEnv(), inherited));
            } else if (placement.sharesGpus()) {
                env.putAll(sharedGpuNcclEnv(rank, options.extraEnv(), inherited));
            }
            env.putAll(SAFETY_ENV);
            envs.add(env);
        }
        return envs;
    }

    /**
     * NCCL refuses two ranks of one host on one GPU; a rank with a host id of its own is another
     * host to NCCL, which then reaches it over sockets. So NCCL baselines and cross-checks run
     * where ranks share a GPU (slowly: never time them). A host id the caller set is kept, as is
     * a socket interface or IB choice the environment already makes.
     */
    static Map<String, String> sharedGpuNcclEnv(int rank, Map<String, String> extraEnv, Map<String, String> inherited) {
        return ncclHostEnv("iris-shared-gpu-rank-" + rank, extraEnv, inherited);
    }

    /**
     * A simulated node is another host to NCCL through a host id of its own, and NCCL reaches it
     * over loopback sockets. Two ranks of one simulated node on one GPU would still be refused
     * (one host, one GPU), so such a rank ({@code sharedGpuRank} >= 0) gets a host id of its own,
     * as without simulation. Choices the caller or the environment made are kept.
     */
    static Map<String, String> simulatedNodeNcclEnv(int node, int sharedGpuRank, Map<String, String> extraEnv,
                                                    Map<String, String> inherited) {
        if (sharedGpuRank >= 0) {
            return sharedGpuNcclEnv(sharedGpuRank, extraEnv, inherited);
        }
        return ncclHostEnv("iris-simulated-node-" + node, extraEnv, inherited);
    }

    /** NCCL's host id {@code hostId} and its socket defaults, each unless the caller (or, for a default, the environment) set it. */
    private static Map<String, String> ncclHostEnv(String hostId, Map<String, String> extraEnv, Map<String, String> inherited) {
        Map<String, String> env = new LinkedHashMap<>();
        if (!extraEnv.containsKey(NCCL_HOSTID)) {
            env.put(NCCL_HOSTID, hostId);
        }
        for (Map.Entry<String, String> e : SHARED_GPU_NCCL_DEFAULTS.entrySet()) {
            if (!extraEnv.containsKey(e.getKey()) && !inherited.containsKey(e.getKey())) {
                env.put(e.getKey(), e.getValue());
            }
        }
        return env;
    }

    /** Whether another rank of {@code process}'s simulated node is placed on its GPU. */
    private static boolean sharesGpuWithinNode(LaunchOptions options, GpuPlacement placement, int process) {
        if (!placement.isPlanned()) {
            return false;
        }
        for (int other = 0; other < options.processCount(); other++) {
            if (other != process && options.nodeOf(other) == options.nodeOf(process)
                    && placement.device(other) == placement.device(process)) {
                return true;
            }
        }
        return false;
    }

    /** The launcher's GPU plan for the ranks it starts, on a host that shows {@code visibleGpus} (0: unknown). */
    static GpuPlacement placement(LaunchOptions options, int visibleGpus) {
        int gpus = options.gpus() > 0 ? options.gpus() : visibleGpus;
        return GpuPlacement.plan(options.processCount(), gpus, options.ranksPerGpu());
    }

    /** A dry run's line for one rank: {@code [r] NAME=value ... -- cmd args}, shell-quoted. */
    static String dryRunLine(int rank, Map<String, String> extraEnv, Map<String, String> rankEnv, List<String> command) {
        StringBuilder line = new StringBuilder("[").append(rank).append(']');
        Map<String, String> all = new LinkedHashMap<>(new TreeMap<>(extraEnv));
        all.putAll(rankEnv);
        all.forEach((name, value) -> line.append(' ').append(name).append('=').append(shellQuote(value)));
        line.append(" --");
        command.forEach(arg -> line.append(' ').append(shellQuote(arg)));
        return line.toString();
    }

    /** Quotes a word for a POSIX shell, leaving words that need no quoting as they are. */
    static String shellQuote(String word) {
        if (SHELL_SAFE.matcher(word).matches()) {
            return word;
        }
        return "'" + word.replace("'", "'\\''") + "'";
    }

    /**
     * A port that was free on {@code addr} a moment ago. Rank 0 binds it shortly after; the
     * small race with other programs is the price of not needing a coordinator.
     */
    static int pickFreePort(String addr) {
        try (ServerSocket socket = new ServerSocket()) {
            socket.bind(new InetSocketAddress(InetAddress.getByName(addr), 0));
            return socket.getLocalPort();
        } catch (IOException notLocal) {
            // The address may name another interface or host; a port free here is still a fair guess.
            try (ServerSocket socket = new ServerSocket(0)) {
                return socket.getLocalPort();
            } catch (IOException e) {
                throw new UncheckedIOException("could not pick a free port for " + RankVariables.IRIS_MASTER_PORT
                        + " on " + addr + "; pass --master-port", e);
            }
        }
    }

    /** 128 random bits in hex: enough that a stray process cannot guess its way into a job. */
    static String newJobToken() {
        byte[] bytes = new byte[16];
        new SecureRandom().nextBytes(bytes);
        return HexFormat.of().formatHex(bytes);
    }

    /**
     * Whether a process still runs. {@link ProcessHandle#isAlive()} counts zombies, and a killed
     * grandchild whose parent died stays one until PID 1 reaps it, which some container inits
     * never do.
     */
    static boolean isRunning(ProcessHandle process) {
        if (!process.isAlive()) {
            return false;
        }
        if (!ProcStat.AVAILABLE) {
            return true;
        }
        // No stat: gone since the check above, or unreadable; isAlive tells which.
        return ProcStat.read(process.pid()).map(ProcStat::isRunning).orElseGet(process::isAlive);
    }

    /**
     * Stops process trees: SIGTERM to every root, its descendants and every process that
     * {@code isStray} claims, then SIGKILL to whatever is left after {@code grace}.
     *
     * <p>Descendants alone are not enough: a process forked in the instant between listing a
     * rank's children and the rank's death, or a daemon that detached, is re-parented away from
     * the tree. {@code isStray} (see {@link #belongsToRanks} and {@link #inSessions}) finds those by
     * the variables every process of a rank inherits and by the session a rank leads.
     *
     * @return every process that was signalled
     */
    static Set<ProcessHandle> terminate(List<ProcessHandle> roots, Predicate<ProcessHandle> isStray, Duration grace) {
        long deadline = System.nanoTime() + grace.toNanos();
        Set<ProcessHandle> signalled = new LinkedHashSet<>();
        boolean interrupted = false;
        // The second round catches what was forked while the first was being delivered.
        for (int round = 0; round < 2 && !interrupted; round++) {
            Set<ProcessHandle> found = gather(roots, isStray);
            found.removeAll(signalled);
            found.forEach(ProcessHandle::destroy);
            signalled.addAll(found);
            interrupted = !waitUntilGone(signalled, Duration.ofNanos(Math.max(0, deadline - System.nanoTime())));
        }
        Set<ProcessHandle> left = gather(roots, isStray);
        left.addAll(signalled);
        left.stream().filter(Launcher::isRunning).forEach(ProcessHandle::destroyForcibly);
        interrupted |= !waitUntilGone(left, KILL_WAIT);
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
        signalled.addAll(left);
        return signalled;
    }

    /** The running roots, their descendants and the strays; roots first, so they are signalled first. */
    private static Set<ProcessHandle> gather(List<ProcessHandle> roots, Predicate<ProcessHandle> isStray) {
        Set<ProcessHandle> found = new LinkedHashSet<>();
        for (ProcessHandle root : roots) {
            if (isRunning(root)) {
                found.add(root);
            }
        }
        for (ProcessHandle root : roots) {
            root.descendants().filter(Launcher::isRunning).forEach(found::add);
        }
        long self = ProcessHandle.current().pid();
        ProcessHandle.allProcesses()
                .filter(h -> h.pid() != self && isStray.test(h) && isRunning(h))
                .forEach(found::add);
        return found;
    }

    /**
     * Recognizes any process started by one of {@code ranks} of the launch with {@code token}: its
     * environment, inherited down the tree, carries both. Linux only ({@code /proc/PID/environ});
     * elsewhere, or without a token, it claims nothing.
     */
    static Predicate<ProcessHandle> belongsToRanks(String token, Collection<Integer> ranks) {
        if (!HAS_PROC || ranks.isEmpty() || token == null || token.isEmpty()) {
            return process -> false;
        }
        String tokenEntry = RankVariables.IRIS_JOB_TOKEN + "=" + token;
        Set<String> rankEntries = ranks.stream()
                .map(rank -> RankVariables.IRIS_RANK + "=" + rank)
                .collect(Collectors.toSet());
        return process -> {
            byte[] environ;
            try {
                environ = Files.readAllBytes(Path.of("/proc", Long.toString(process.pid()), "environ"));
            } catch (IOException | SecurityException | UncheckedIOException e) {
                return false; // another user's process, or already gone
            }
            boolean hasToken = false;
            boolean hasRank = false;
            int from = 0;
            for (int i = 0; i <= environ.length; i++) {
                if (i == environ.length || environ[i] == 0) {
                    String entry = new String(environ, from, i - from, StandardCharsets.UTF_8);
                    hasToken |= entry.equals(tokenEntry);
                    hasRank |= rankEntries.contains(entry);
                    from = i + 1;
                }
            }
            return hasToken && hasRank;
        };
    }

    /**
     * Recognizes a process in one of {@code sessions}: a rank started through {@code setsid} leads
     * a session whose id is its pid, which its children and grandchildren keep when they are
     * re-parented. Linux only ({@code /proc/PID/stat}); elsewhere it claims nothing. A session id is
     * not handed out again while any process of the session lives, so once the session is empty
     * nothing matches it but a new session that took the same number, a small window this accepts.
     */
    static Predicate<ProcessHandle> inSessions(Collection<Long> sessions) {
        if (!ProcStat.AVAILABLE || sessions.isEmpty()) {
            return process -> false;
        }
        Set<Long> ids = Set.copyOf(sessions);
        return process -> ProcStat.read(process.pid()).filter(stat -> ids.contains(stat.session())).isPresent();
    }

    /** Polls until every process is gone or the time is up; false if interrupted. */
    private static boolean waitUntilGone(Set<ProcessHandle> processes, Duration limit) {
        long deadline = System.nanoTime() + limit.toNanos();
        while (processes.stream().anyMatch(Launcher::isRunning)) {
            if (System.nanoTime() - deadline >= 0) {
                return true;
            }
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                return false;
            }
        }
        return true;
    }

    /** Names the likely signal behind a shell-style exit code such as 137. */
    static String describeExitCode(int code) {
        String text = "exit code " + code;
        if (code > 128 && code <= 128 + 64) {
            int signal = code - 128;
            String name = switch (signal) {
                case 1 -> " (SIGHUP)";
                case 2 -> " (SIGINT)";
                case 6 -> " (SIGABRT)";
                case 9 -> " (SIGKILL)";
                case 11 -> " (SIGSEGV)";
                case 15 -> " (SIGTERM)";
                default -> "";
            };
            text += ", likely killed by signal " + signal + name;
        }
        return text;
    }

    static String formatSeconds(Duration duration) {
        return BigDecimal.valueOf(duration.toMillis(), 3).stripTrailingZeros().toPlainString() + " s";
    }

    private static Map<String, String> orderedMap(String... keysAndValues) {
        Map<String, String> map = new LinkedHashMap<>();
        for (int i = 0; i < keysAndValues.length; i += 2) {
            map.put(keysAndValues[i], keysAndValues[i + 1]);
        }
        return Collections.unmodifiableMap(map);
    }

    private record RankExit(int rank, int code) {
    }

    /** One launch: its processes, their output pumps and the bookkeeping to stop them. */
    private static final class Job {
        private final LaunchOptions options;
        private final Consumer<String> out;
        private final Consumer<String> err;
        private final Process[] processes;
        private final List<Thread> pumps = new ArrayList<>();
        private final BlockingQueue<RankExit> exits = new LinkedBlockingQueue<>();
        private final Object stopLock = new Object();
        private final SortedSet<Integer> stopped = new TreeSet<>(); // guarded by stopLock
        private boolean shuttingDown;                                // guarded by stopLock
        private final Map<String, String> environment;
        /** What marks this launch's processes for {@link #belongsToRanks}; null when nothing does. */
        private volatile String token = "";
        /** How ranks start: with a parent-death signal and a session each where Linux allows. */
        private volatile RankWrapper wrapper = RankWrapper.none();
        /** Stops the job's processes if this launcher dies without doing so. */
        private volatile ProcessGuard guard = ProcessGuard.none();

        Job(LaunchOptions options, Consumer<String> stdoutLines, Consumer<String> stderrLines,
            Map<String, String> environment) {
            this.options = options;
            this.environment = environment;
            Object outputLock = new Object();
            // One lock for both streams: callers often pass the same consumer or print to one terminal.
            this.out = line -> {
                synchronized (outputLock) {
                    stdoutLines.accept(line);
                }
            };
            this.err = line -> {
                synchronized (outputLock) {
                    stderrLines.accept(line);
                }
            };
            this.processes = new Process[options.processCount()];
        }

        LaunchResult run() {
            // One node makes its token up; several share the one in their environment, which the
            // ranks inherit (from IRIS_JOB_TOKEN_FILE alone, strays are found by process tree only).
            boolean ownToken = options.nodeCount() == 1 || options.simulateNodes();
            token = ownToken ? newJobToken() : environment.get(RankVariables.IRIS_JOB_TOKEN);
            int port = options.masterPort() != 0 ? options.masterPort() : pickFreePort(options.masterAddr());
            GpuPlacement placement = placement(options, GpuPlacement.countVisibleGpus(environment, NVIDIA_PROC_GPUS));
            List<Map<String, String>> envs = rankEnvironments(options, port, ownToken ? token : null, placement,
                    environment);
            if (placement.sharesGpus()) {
                err.accept(PREFIX + placement.describe());
            }
            if (options.dryRun()) {
                for (int local = 0; local < envs.size(); local++) {
                    out.accept(dryRunLine(options.globalRank(local), options.extraEnv(), envs.get(local), options.command()));
                }
                return new LaunchResult(0, LaunchResult.NO_RANK, 0, List.of(), List.of(), false);
            }
            wrapper = RankWrapper.detect(environment);
            List<Integer> ranks = new ArrayList<>();
            for (int process = 0; process < options.processCount(); process++) {
                ranks.add(options.globalRank(process));
            }
            guard = ProcessGuard.start(wrapper, environment, ranks, token, options.gracePeriod(), err);
            Thread hook = new Thread(this::onShutdown, "iris-run-shutdown");
            Runtime.getRuntime().addShutdownHook(hook);
            boolean hookRemoved = false;
            boolean cleanedUp = false;
            try {
                // This thread starts every rank and stays here until all have exited: a rank's
                // parent-death signal fires when the thread that forked it ends (RankWrapper).
                LaunchResult result = supervise(envs);
                cleanedUp = true;
                return result;
            } finally {
                try {
                    Runtime.getRuntime().removeShutdownHook(hook);
                    hookRemoved = true;
                } catch (IllegalStateException shutdownUnderWay) {
                    // The hook is running or has run; it stops whatever is left.
                }
                if (hookRemoved && cleanedUp) {
                    guard.close();
                } else if (hookRemoved) {
                    guard.abandon(); // supervise threw: ranks may still run, so let the guard stop them
                }
                // Otherwise the JVM is exiting: the guard sees the pipe close and checks once more
                // that nothing is left, in case the hook is cut short.
            }
        }

        /** Runs this node's ranks; {@code rank} below is the local rank, reports name global ranks. */
        private LaunchResult supervise(List<Map<String, String>> envs) {
            int n = options.processCount();
            int[] codes = new int[n];
            Arrays.fill(codes, LaunchResult.NOT_STARTED);
            int failedRank = LaunchResult.NO_RANK;
            int failedCode = 0;
            String startError = null;
            boolean timedOut = false;
            boolean interrupted = false;
            List<Integer> stillRunningAtTimeout = List.of();
            long deadline = options.timeout() == null ? Long.MAX_VALUE
                    : System.nanoTime() + options.timeout().toNanos();
            long stopAt = Long.MAX_VALUE;  // after a failure: when the ranks still running are stopped

            int running = 0;
            for (int rank = 0; rank < n; rank++) {
                try {
                    if (!start(rank, envs.get(rank))) {
                        break; // shutting down
                    }
                    running++;
                } catch (IOException e) {
                    failedRank = options.globalRank(rank);
                    failedCode = EXIT_CANNOT_START;
                    startError = e.getMessage();
                    stopRunning();
                    break;
                }
            }

            while (running > 0) {
                RankExit exit;
                long until = Math.min(deadline, stopAt);
                try {
                    exit = until == Long.MAX_VALUE ? exits.take()
                            : exits.poll(until - System.nanoTime(), TimeUnit.NANOSECONDS);
                } catch (InterruptedException e) {
                    interrupted = true;
                    deadline = Long.MAX_VALUE;
                    stopAt = Long.MAX_VALUE;
                    stopRunning();
                    continue;
                }
                if (exit == null) {
                    if (stopAt != Long.MAX_VALUE) {
                        stopAt = Long.MAX_VALUE;  // the others had their time to exit on their own
                        stopRunning();
                        continue;
                    }
                    timedOut = true;
                    deadline = Long.MAX_VALUE;
                    stillRunningAtTimeout = stopRunning();
                    continue;
                }
                codes[exit.rank()] = exit.code();
                running--;
                if (exit.code() != 0 && failedRank == LaunchResult.NO_RANK && !timedOut && !interrupted
                        && !isShuttingDown()) {
                    failedRank = options.globalRank(exit.rank());
                    failedCode = exit.code();
                    deadline = Long.MAX_VALUE; // the stop below ends the job; no timeout on top
                    if (options.stopDelay().isZero() || running == 0) {
                        stopRunning();
                    } else {
                        err.accept(PREFIX + "rank " + failedRank + " failed with " + describeExitCode(failedCode)
                                + "; stopping the other ranks in " + formatSeconds(options.stopDelay())
                                + " unless they exit first");
                        stopAt = System.nanoTime() + options.stopDelay().toNanos();
                    }
                }
            }
            // Before draining: a process the ranks left behind may hold their output open.
            reapLeftovers();
            drainOutput();

            List<Integer> stoppedRanks;
            synchronized (stopLock) {
                stoppedRanks = List.copyOf(stopped);
            }
            int exitCode = 0;
            if (failedRank != LaunchResult.NO_RANK) {
                // A code outside 1..255 cannot be a process's exit status; report plain failure.
                exitCode = failedCode >= 1 && failedCode <= 255 ? failedCode : 1;
                String how = startError != null
                        ? "could not be started (" + startError + ")"
                        : "failed first with " + describeExitCode(failedCode);
                err.accept(PREFIX + "rank " + failedRank + " " + how + "; stopped ranks " + stoppedRanks);
            } else if (timedOut) {
                exitCode = EXIT_TIMEOUT;
                err.accept(PREFIX + "job ran past --timeout " + formatSeconds(options.timeout())
                        + "; stopped ranks still running " + stillRunningAtTimeout);
            } else if (interrupted || isShuttingDown()) {
                exitCode = EXIT_INTERRUPTED;
            }
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
            return new LaunchResult(exitCode, failedRank, failedCode,
                    Arrays.stream(codes).boxed().toList(), stoppedRanks, timedOut);
        }

        /** Starts one rank and its pumps; false if the launcher is shutting down instead. */
        private boolean start(int rank, Map<String, String> rankEnv) throws IOException {
            ProcessBuilder builder = new ProcessBuilder(wrapper.wrap(options.command()));
            builder.environment().clear();
            builder.environment().putAll(environment);
            builder.environment().putAll(options.extraEnv());
            builder.environment().putAll(rankEnv);
            if (wrapper.wraps()) {
                RankWrapper.requireExecutable(options.command().get(0), builder.environment());
            }
            Process process;
            // Under the lock so that a shutdown hook sees every process that was started.
            synchronized (stopLock) {
                if (shuttingDown) {
                    return false;
                }
                process = builder.start();
                processes[rank] = process;
                guard.watch(process.pid());
            }
            // Ranks are not interactive; an open stdin would hang a rank that reads it.
            process.getOutputStream().close();
            pump(rank, process.getInputStream(), out, "out");
            pump(rank, process.getErrorStream(), err, "err");
            process.onExit().thenAccept(done -> exits.add(new RankExit(rank, done.exitValue())));
            return true;
        }

        private void pump(int rank, InputStream stream, Consumer<String> sink, String kind) {
            String prefix = "[" + options.globalRank(rank) + "] ";
            Thread thread = new Thread(() -> {
                try (BufferedReader reader = new BufferedReader(new InputStreamReader(stream, Charset.defaultCharset()))) {
                    String line;
                    while ((line = reader.readLine()) != null) {
                        try {
                            sink.accept(prefix + line);
                        } catch (RuntimeException e) {
                            // Keep draining: a rank whose pipe fills up blocks forever.
                        }
                    }
                } catch (IOException closed) {
                    // The stream closes under us when the process is torn down; nothing left to forward.
                }
            }, "iris-run-rank" + rank + "-" + kind);
            // A grandchild that outlives its rank can hold the pipe open forever; that must not
            // keep the JVM alive.
            thread.setDaemon(true);
            thread.start();
            pumps.add(thread);
        }

        /** Waits, boundedly, for the ranks' last lines to be forwarded. */
        private void drainOutput() {
            long deadline = System.nanoTime() + DRAIN_LIMIT.toNanos();
            List<String> stuck = new ArrayList<>();
            for (Thread pump : pumps) {
                try {
                    long left = Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime()));
                    pump.join(left);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
                if (pump.isAlive()) {
                    stuck.add(pump.getName());
                }
            }
            if (!stuck.isEmpty()) {
                err.accept(PREFIX + "not waiting for more output on " + String.join(", ", stuck)
                        + ": a process the rank started still holds the stream open");
            }
        }

        /** Global ranks of started processes, their sessions, and the handles of those still running. */
        private record Started(List<Integer> ranks, List<Long> sessions, List<ProcessHandle> running) {}

        /** The ranks started so far, or only those still running; call under {@code stopLock}. */
        private Started started(boolean runningOnly) {
            List<Integer> ranks = new ArrayList<>();
            List<Long> sessions = new ArrayList<>();
            List<ProcessHandle> running = new ArrayList<>();
            for (int rank = 0; rank < processes.length; rank++) {
                Process process = processes[rank];
                if (process == null || (runningOnly && !process.isAlive())) {
                    continue;
                }
                ranks.add(options.globalRank(rank));
                addSession(process, sessions);
                if (process.isAlive()) {
                    running.add(process.toHandle());
                }
            }
            return new Started(ranks, sessions, running);
        }

        /** Stops every rank still running; returns those ranks. */
        private List<Integer> stopRunning() {
            synchronized (stopLock) {
                Started s = started(true);
                if (!s.ranks().isEmpty()) {
                    stopped.addAll(s.ranks());
                    terminate(s.running(), processesOf(s.ranks(), s.sessions()), options.gracePeriod());
                }
                return s.ranks();
            }
        }

        /**
         * Stops whatever the ranks left running once they have exited or been stopped: background
         * children of a rank that exited 0, the children and grandchildren of a rank that failed,
         * detached ones. Says so when it found any.
         */
        private void reapLeftovers() {
            Set<ProcessHandle> reaped;
            synchronized (stopLock) {
                Started s = started(false);
                if (s.ranks().isEmpty()) {
                    return;
                }
                reaped = terminate(s.running(), processesOf(s.ranks(), s.sessions()), options.gracePeriod());
            }
            if (!reaped.isEmpty()) {
                List<Long> pids = reaped.stream().map(ProcessHandle::pid).sorted().toList();
                err.accept(PREFIX + "stopped " + pids.size() + (pids.size() == 1 ? " process" : " processes")
                        + " the ranks left running: " + pids);
            }
        }

        /** The processes of these global ranks beyond their trees: by environment, and by session. */
        private Predicate<ProcessHandle> processesOf(List<Integer> ranks, List<Long> sessions) {
            return belongsToRanks(token, ranks).or(inSessions(sessions));
        }

        /** Adds the session a rank leads, when it was started into one. */
        private void addSession(Process process, List<Long> sessions) {
            if (wrapper.startsSessions()) {
                sessions.add(process.pid());
            }
        }

        private boolean isShuttingDown() {
            synchronized (stopLock) {
                return shuttingDown;
            }
        }

        /** Shutdown hook: the launcher got SIGINT/SIGTERM (or the JVM is exiting) mid-job. */
        private void onShutdown() {
            List<Integer> alive;
            synchronized (stopLock) {
                shuttingDown = true;
                alive = new ArrayList<>();
                for (int rank = 0; rank < processes.length; rank++) {
                    if (processes[rank] != null && processes[rank].isAlive()) {
                        alive.add(options.globalRank(rank));
                    }
                }
            }
            if (!alive.isEmpty()) {
                err.accept(PREFIX + "interrupted; stopping ranks " + alive);
                stopRunning();
            }
            // Also when every rank has already gone (Ctrl-C reached them first, say): what they
            // started may not have.
            reapLeftovers();
        }
    }
}
