package dev.irisjvm.bench.cli;

import static dev.irisjvm.bench.TextAssertions.assertContains;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.irisjvm.bench.nodes.NodesOptions;
import dev.irisjvm.bench.nodes.NodesSweep;
import dev.irisjvm.bench.report.ReportKind;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * {@code iris-bench nodes}: the launcher simulates the nodes ({@code --nnodes M --simulate-nodes
 * -n N}), nonsense layouts are refused before anything starts, and what --quick stands for parses
 * as the sweep's.
 */
class NodesRunTest {
    @TempDir
    Path dir;

    private static NodesRun parse(String... args) {
        return ParsedRun.parse(NodesRun.class, "nodes", args);
    }

    /** The launcher's words after its path, up to the rank's command. */
    private static String launcherOptions(BenchRun run) {
        List<String> words = run.launch(run.ranks());
        assertEquals(run.home.launcher(), words.get(0));
        return String.join(" ", words.subList(1, words.size()));
    }

    @Test
    void theLauncherSimulatesTheNodes() {
        NodesRun run = parse("--nodes", "2", "-n", "1", "--quick", "--out", "/tmp/n", "--", "--ops", "all_reduce");
        assertEquals(1, run.ranks(), "-n is the ranks of each node, as bin/iris-run takes it");
        assertEquals("--nnodes 2 --simulate-nodes -n 1 --", launcherOptions(run));
        assertTrue(run.options.quick);
        assertEquals("/tmp/n", run.options.out.dir.toString());
        assertEquals(List.of("--ops", "all_reduce"), run.options.sweepArgs);
        assertEquals(ReportKind.NODES, run.kind());
        assertEquals("iris-bench nodes", run.name());

        assertEquals("--nnodes 2 --simulate-nodes -n 1 --", launcherOptions(parse()), "2 nodes of 1 rank by default");
        assertEquals("--nnodes 4 --simulate-nodes -n 2 --", launcherOptions(parse("--nodes", "4", "--ranks-per-node", "2")));
    }

    @Test
    void otherBenchmarksLaunchAsBefore() {
        StepRun step = ParsedRun.parse(StepRun.class, "step", "-n", "2");
        assertEquals(List.of(), step.launchOptions());
        assertEquals("-n 2 --", launcherOptions(step));
    }

    @Test
    void nonsenseLayoutsAreRefused() {
        assertRefused("--nodes 1: needs 2 or more nodes to simulate", "-n", "1", "--nodes", "1");
        assertRefused("--nodes 0: needs 2 or more nodes", "--nodes", "0");
        assertRefused("-n 0: needs 1 or more ranks per node", "-n", "0");
        assertRefused("-n -3: needs 1 or more ranks per node", "--ranks-per-node", "-3");
        assertRefused("--nodes 4 x -n 4 = 16 ranks: the simulated nodes share this host, at most 8 ranks", "--nodes", "4", "-n", "4");
        assertRefused("at most 8 ranks", "--nodes", "2147483647", "-n", "2");
    }

    private static void assertRefused(String message, String... args) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> parse(args).ranks());
        assertTrue(e.getMessage().contains(message), e.getMessage());
    }

    @Test
    void aRefusedLayoutExitsWithTheUsageCodeBeforeAnythingStarts() {
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        PrintStream stderr = System.err;
        System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
        int rc;
        try {
            rc = IrisBench.commandLine().execute("nodes", "--nodes", "1", "-n", "1", "--out", dir.toString());
        } finally {
            System.setErr(stderr);
        }
        assertEquals(BenchRun.EXIT_USAGE, rc);
        String said = err.toString(StandardCharsets.UTF_8);
        assertTrue(said.startsWith("iris-bench nodes: --nodes 1: needs 2 or more nodes to simulate"), said);
    }

    @Test
    void theQuickArgumentsAreValidSweepOptions() {
        // What --quick adds must be the sweep's own valid options, or a quick run dies at once.
        List<String> quick = parse("--quick").quickSweepArgs();
        assertEquals(List.of("--sizes", "1m,16m", "--rounds", "2"), quick);
        NodesOptions o = new NodesOptions();
        new CommandLine(o).parseArgs(quick.toArray(String[]::new));
        o.validate();
        new CommandLine(new NodesSweep()).parseArgs(quick.toArray(String[]::new));
    }

    @Test
    void helpSaysWhatLoopbackCannotSay() {
        String help = ParsedRun.help("nodes");
        assertContains(help,
                "--nodes=M",
                "-n, --ranks-per-node=N",
                "loopback sockets, which says nothing about a real network",
                "--quick: --sizes 1m,16m, 2 rounds.");
    }
}
