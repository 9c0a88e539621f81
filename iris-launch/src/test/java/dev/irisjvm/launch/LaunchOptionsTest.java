package dev.irisjvm.launch;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class LaunchOptionsTest {

    @Test
    void defaultsWithOnlyRanksAndCommand() {
        LaunchOptions o = LaunchOptions.parse("-n", "4", "--", "java", "-cp", "x", "Main");
        assertEquals(4, o.worldSize());
        assertEquals("127.0.0.1", o.masterAddr());
        assertEquals(0, o.masterPort(), "0 means the launcher picks a free port");
        assertNull(o.timeout());
        assertFalse(o.dryRun());
        assertEquals(List.of("java", "-cp", "x", "Main"), o.command());
        assertEquals(Map.of(), o.extraEnv());
        assertEquals(LaunchOptions.DEFAULT_GRACE_PERIOD, o.gracePeriod());
        assertEquals(LaunchOptions.DEFAULT_STOP_DELAY, o.stopDelay());
    }

    @Test
    void stopDelayIsSecondsAndMayBeZero() {
        assertEquals(Duration.ofMillis(2500), LaunchOptions.parse("-n", "2", "--stop-delay", "2.5", "--", "x").stopDelay());
        assertEquals(Duration.ZERO, LaunchOptions.parse("-n", "2", "--stop-delay=0", "--", "x").stopDelay());
        assertEquals("--stop-delay expects a number of seconds >= 0, got '-1'", assertThrows(IllegalArgumentException.class,
                () -> LaunchOptions.parse("-n", "2", "--stop-delay", "-1", "--", "x")).getMessage());
        assertEquals("--stop-delay needs a value", assertThrows(IllegalArgumentException.class,
                () -> LaunchOptions.parse("-n", "2", "--stop-delay", "--", "x")).getMessage());
    }

    @Test
    void allOptions() {
        LaunchOptions o = LaunchOptions.parse("--dry-run", "--master-addr", "10.0.0.5", "--master-port", "29500",
                "--timeout", "1.5", "-n", "8", "--", "./train");
        assertEquals(8, o.worldSize());
        assertEquals("10.0.0.5", o.masterAddr());
        assertEquals(29500, o.masterPort());
        assertEquals(Duration.ofMillis(1500), o.timeout());
        assertTrue(o.dryRun());
        assertEquals(List.of("./train"), o.command());
    }

    @Test
    void longOptionsTakeEqualsForm() {
        LaunchOptions o = LaunchOptions.parse("-n", "2", "--master-addr=host1", "--master-port=1234", "--timeout=60",
                "--", "cmd");
        assertEquals("host1", o.masterAddr());
        assertEquals(1234, o.masterPort());
        assertEquals(Duration.ofSeconds(60), o.timeout());
    }

    @Test
    void everythingAfterTheFirstDoubleDashIsTheCommandVerbatim() {
        LaunchOptions o = LaunchOptions.parse("-n", "1", "--", "sh", "-n", "--dry-run", "--", "--bogus");
        assertEquals(List.of("sh", "-n", "--dry-run", "--", "--bogus"), o.command());
        assertFalse(o.dryRun());
    }

    @Test
    void lastRepeatedOptionWins() {
        assertEquals(3, LaunchOptions.parse("-n", "2", "-n", "3", "--", "x").worldSize());
    }

    @ParameterizedTest(name = "{0} -> {1}")
    @CsvSource(delimiter = '|', value = {
            "--                            | missing -n N (the number of ranks to start on this node)",
            "-n 2                          | missing '--' followed by the command to run",
            "-n 2 --                       | no command after '--'",
            "-n 0 -- x                     | -n expects a number of ranks >= 1, got 0",
            "-n -3 -- x                    | -n expects a number of ranks >= 1, got -3",
            "-n two -- x                   | -n expects a whole number of ranks >= 1, got 'two'",
            "-n                            | -n needs a value",
            "-n -- x                       | -n needs a value",
            "-n 2 --bogus -- x             | unknown option --bogus",
            "-n 2 -x -- x                  | unknown option -x",
            "-n 2 --bogus=1 -- x           | unknown option --bogus=1",
            "-n 2 cmd                      | unexpected argument 'cmd': the command must follow '--'",
            "-n 2 --master-port abc -- x   | --master-port expects a port number in 1..65535, got 'abc'",
            "-n 2 --master-port 0 -- x     | --master-port expects a port number in 1..65535, got 0",
            "-n 2 --master-port 65536 -- x | --master-port expects a port number in 1..65535, got 65536",
            "-n 2 --master-port -- x       | --master-port needs a value",
            "-n 2 --master-addr= -- x      | --master-addr expects a host name or address, got ''",
            "-n 2 --timeout 0 -- x         | --timeout expects a positive number of seconds, got '0'",
            "-n 2 --timeout -1 -- x        | --timeout expects a positive number of seconds, got '-1'",
            "-n 2 --timeout soon -- x      | --timeout expects a positive number of seconds, got 'soon'",
            "-n 2 --timeout NaN -- x       | --timeout expects a positive number of seconds, got 'NaN'",
            "-n 2 --timeout 1e3 -- x       | --timeout expects a positive number of seconds, got '1e3'",
            "-n 2 --dry-run=yes -- x       | --dry-run takes no value, got '--dry-run=yes'",
            "--nproc-per-node 0 -- x       | --nproc-per-node expects a number of ranks >= 1, got 0",
            "-n 2 --nnodes 0 -- x          | --nnodes expects a number of nodes >= 1, got 0",
            "-n 2 --nnodes two -- x        | --nnodes expects a whole number of nodes >= 1, got 'two'",
            "-n 2 --nnodes 5000 -- x       | --nnodes expects at most 4096 nodes, got 5000",
            "-n 2 --node-rank -1 -- x      | --node-rank expects a node index >= 0, got '-1'",
            "-n 2 --node-rank x -- x       | --node-rank expects a node index >= 0, got 'x'",
            "-n 2 --node-rank 1 -- x       | --node-rank expects a node index in [0, --nnodes 1), got 1",
            "-n 2 --nnodes 2 --node-rank 2 --master-addr h --master-port 1 -- x | --node-rank expects a node index in [0, --nnodes 2), got 2",
            "-n 2 --nnodes 2 --master-addr h --master-port 1 -- x | --nnodes 2 needs --node-rank R, this node's index in [0, 2): each node runs its own iris-run",
            "-n 2 --nnodes 2 --node-rank 1 --master-port 1 -- x | --nnodes 2 needs --master-addr A, the host of node 0, where rank 0 serves the rendezvous",
            "-n 2 --nnodes 2 --node-rank 1 --master-addr h -- x | --nnodes 2 needs --master-port P, the same on every node: a free port picked on one host cannot be agreed on by the others",
            "-n 4096 --nnodes 4096 --node-rank 0 --master-addr h --master-port 1 -- x | --nnodes 4096 x -n 4096 is more than 1048576 ranks",
    })
    void usageErrorsNameTheProblem(String commandLine, String message) {
        List<String> args = List.of(commandLine.trim().split("\\s+"));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> LaunchOptions.parse(args));
        assertEquals(message, e.getMessage());
    }

    @Test
    void helpIsOnlyRecognizedBeforeTheCommand() {
        assertTrue(LaunchOptions.wantsHelp(List.of("-n", "2", "--help")));
        assertTrue(LaunchOptions.wantsHelp(List.of("-h")));
        assertFalse(LaunchOptions.wantsHelp(List.of("-n", "2", "--", "ls", "--help")));
    }

    @Test
    void programmaticConstructionValidatesToo() {
        LaunchOptions o = LaunchOptions.of(2, "x").withMasterPort(80).withTimeout(Duration.ofSeconds(5))
                .withDryRun(true).withMasterAddr("h").withGracePeriod(Duration.ZERO)
                .withExtraEnv(Map.of("FOO", "bar")).withStopDelay(Duration.ofMillis(1500));
        assertEquals(new LaunchOptions(2, "h", 80, Duration.ofSeconds(5), true, List.of("x"), Map.of("FOO", "bar"),
                Duration.ZERO, Duration.ofMillis(1500), 0, 0), o);
        assertEquals("stopDelay must not be negative, got PT-1S", assertThrows(IllegalArgumentException.class,
                () -> LaunchOptions.of(1, "x").withStopDelay(Duration.ofSeconds(-1))).getMessage());

        assertEquals("ranksPerNode must be >= 1, got 0",
                assertThrows(IllegalArgumentException.class, () -> LaunchOptions.of(0, "x")).getMessage());
        assertEquals("command must name a program to run",
                assertThrows(IllegalArgumentException.class, () -> LaunchOptions.of(1)).getMessage());
        assertThrows(IllegalArgumentException.class, () -> LaunchOptions.of(1, "x").withMasterPort(70000));
        assertThrows(IllegalArgumentException.class, () -> LaunchOptions.of(1, "x").withTimeout(Duration.ZERO));
        assertThrows(IllegalArgumentException.class, () -> LaunchOptions.of(1, "x").withMasterAddr(" "));
        assertThrows(IllegalArgumentException.class,
                () -> LaunchOptions.of(1, "x").withGracePeriod(Duration.ofSeconds(-1)));
    }

    @Test
    void extraEnvCannotOverrideLauncherVariables() {
        for (String name : List.of("IRIS_RANK", "IRIS_JOB_TOKEN", "NCCL_NVLS_ENABLE", "NVSHMEM_DISABLE_NVLS",
                "TORCH_SYMM_MEM_DISABLE_MULTICAST")) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> LaunchOptions.of(1, "x").withExtraEnv(Map.of(name, "1")));
            assertEquals("extraEnv must not set " + name + ": the launcher sets it for each rank", e.getMessage());
        }
    }

    @Test
    void gpuPlacementOptions() {
        LaunchOptions o = LaunchOptions.parse("-n", "4", "--gpus", "1", "--", "x");
        assertEquals(1, o.gpus());
        assertEquals(0, o.ranksPerGpu());
        LaunchOptions k = LaunchOptions.parse("-n", "4", "--ranks-per-gpu=2", "--", "x");
        assertEquals(2, k.ranksPerGpu());
        assertEquals(0, k.gpus());
        assertEquals(3, LaunchOptions.of(3, "x").withRanksPerGpu(2).withGpus(3).gpus());
        assertEquals(0, LaunchOptions.of(3, "x").withRanksPerGpu(2).withGpus(3).ranksPerGpu());

        assertEquals("--gpus expects a number of GPUs >= 1, got 0", assertThrows(IllegalArgumentException.class,
                () -> LaunchOptions.parse("-n", "2", "--gpus", "0", "--", "x")).getMessage());
        assertEquals("--ranks-per-gpu expects a whole number of ranks per GPU >= 1, got 'two'",
                assertThrows(IllegalArgumentException.class,
                        () -> LaunchOptions.parse("-n", "2", "--ranks-per-gpu", "two", "--", "x")).getMessage());
        assertEquals("--gpus and --ranks-per-gpu are alternatives: give one", assertThrows(IllegalArgumentException.class,
                () -> LaunchOptions.parse("-n", "2", "--gpus", "1", "--ranks-per-gpu", "2", "--", "x")).getMessage());
        assertEquals("-n expects at most 4096 ranks on one host, got 2147483647", assertThrows(IllegalArgumentException.class,
                () -> LaunchOptions.parse("-n", "2147483647", "--", "x")).getMessage());
        assertEquals("100 ranks would put 100 ranks on one GPU; at most 64 are supported",
                assertThrows(IllegalArgumentException.class, () -> LaunchOptions.parse("-n", "100", "--gpus", "1", "--", "x"))
                        .getMessage());
    }

    private static final Map<String, String> TOKEN = Map.of("IRIS_JOB_TOKEN", "0123abcd");

    @Test
    void severalNodesLikeTorchrun() {
        LaunchOptions o = LaunchOptions.parse(List.of("--nproc-per-node", "4", "--nnodes", "2", "--node-rank=1",
                "--master-addr", "gpu03", "--master-port", "29600", "--", "./train"), TOKEN);
        assertEquals(4, o.ranksPerNode());
        assertEquals(2, o.nodeCount());
        assertEquals(1, o.nodeRank());
        assertEquals(8, o.worldSize());
        assertEquals(4, o.globalRank(0));
        assertEquals(7, o.globalRank(3));
        assertEquals(o, LaunchOptions.parse(List.of("-n", "4", "--nnodes=2", "--node-rank", "1", "--master-addr=gpu03",
                "--master-port=29600", "--", "./train"), Map.of("IRIS_JOB_TOKEN_FILE", "/shared/token")));

        LaunchOptions one = LaunchOptions.parse(List.of("-n", "3", "--", "x"), Map.of());
        assertEquals(1, one.nodeCount());
        assertEquals(0, one.nodeRank());
        assertEquals(3, one.worldSize());
        assertEquals(2, one.globalRank(2));
        assertEquals(one, LaunchOptions.parse(List.of("-n", "3", "--nnodes", "1", "--node-rank", "0", "--", "x"), Map.of()));
    }

    @Test
    void severalNodesNeedASharedJobToken() {
        List<String> args = List.of("-n", "4", "--nnodes", "2", "--node-rank", "0", "--master-addr", "gpu03",
                "--master-port", "29600", "--", "./train");
        String expected = "--nnodes 2 needs the same job token on every node: set IRIS_JOB_TOKEN (e.g. from openssl rand"
                + " -hex 16) or IRIS_JOB_TOKEN_FILE (a file readable on every node) in the environment of each node's"
                + " iris-run";
        assertEquals(expected, assertThrows(IllegalArgumentException.class,
                () -> LaunchOptions.parse(args, Map.of())).getMessage());
        assertEquals(expected, assertThrows(IllegalArgumentException.class,
                () -> LaunchOptions.parse(args, Map.of("IRIS_JOB_TOKEN", " "))).getMessage());
        LaunchOptions.requireSharedJobToken(1, Map.of());
        LaunchOptions.requireSharedJobToken(2, TOKEN);
    }

    @Test
    void programmaticNodesValidateToo() {
        LaunchOptions o = LaunchOptions.of(4, "x").withMasterPort(29600).withNodes(2, 1);
        assertEquals(8, o.worldSize());
        assertEquals(5, o.globalRank(1));
        assertEquals(o, o.withGpus(2).withRanksPerGpu(0).withGpus(0));
        assertEquals(2, o.withTimeout(Duration.ofSeconds(1)).nodeCount(), "other copies keep the nodes");
        assertEquals("masterPort must be given when nodeCount is 2: a free port picked on one host cannot be agreed on"
                + " by the others", assertThrows(IllegalArgumentException.class,
                () -> LaunchOptions.of(4, "x").withNodes(2, 0)).getMessage());
        assertEquals("nodeRank must be in [0, nodeCount=2), got 2", assertThrows(IllegalArgumentException.class,
                () -> LaunchOptions.of(4, "x").withMasterPort(1).withNodes(2, 2)).getMessage());
        assertEquals("nodeCount must be in [1, 4096], got 0", assertThrows(IllegalArgumentException.class,
                () -> LaunchOptions.of(4, "x").withNodes(0, 0)).getMessage());
    }
}
