package dev.irisjvm.core;

import static dev.irisjvm.core.testing.Checks.check;

import dev.irisjvm.core.gpu.Gpu;
import dev.irisjvm.core.testing.ScenarioRunner;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * Nothing leaks over many Iris lifetimes in one process: {@value #DEFAULT_CYCLES} init/close cycles
 * (IRIS_TEST_CYCLES to change), each allocating, storing into the next rank, meeting and checking,
 * leave free device memory (cudaMemGetInfo), open file descriptors (/proc/self/fd) and live threads
 * where they were. Run by {@link ResourceGpuTest} through the launcher.
 *
 * <p>The baseline is taken after the first cycle, which loads what loads once per process (the
 * JNI library, JavaCPP's pointer deallocator thread, the CUDA context and its module cache, the
 * JIT's own threads). Against it the 200th cycle may differ by at most
 * {@value #MEMORY_SLACK_MIB} MiB of device memory (the driver's allocation granularity), 
 * {@value #FD_SLACK} file descriptors and {@value #THREAD_SLACK} threads (a JVM may start a
 * service thread at any time); the first cycle's own cost against the state before it is printed
 * and bounded loosely ({@value #FIRST_CYCLE_MEMORY_MIB} MiB, {@value #FIRST_CYCLE_FDS} fds,
 * {@value #FIRST_CYCLE_THREADS} threads). A leak of one heap (32 MiB), one socket or one watchdog
 * thread per cycle would exceed the slack by two hundred times.
 */
public final class ResourceScenarios {
    public static final List<String> SCENARIOS = List.of("init_close_cycles_leak_nothing");

    static final int DEFAULT_CYCLES = 200;
    static final long MEMORY_SLACK_MIB = 16;
    static final int FD_SLACK = 2;
    static final int THREAD_SLACK = 2;
    static final long FIRST_CYCLE_MEMORY_MIB = 512;
    static final int FIRST_CYCLE_FDS = 64;
    static final int FIRST_CYCLE_THREADS = 16;

    private ResourceScenarios() {}

    /** What the process holds at one moment. */
    private record Usage(long freeDeviceBytes, int fds, Set<String> threads) {
        static Usage now() {
            System.gc();  // direct buffers and JavaCPP pointers freed by their cleaners, not by us, settle first
            return new Usage(Gpu.memoryInfo()[0], openFds(), liveThreads());
        }

        String describe() {
            return (freeDeviceBytes >> 20) + " MiB free on the GPU, " + fds + " fds, " + threads.size() + " threads";
        }
    }

    public static void main(String[] args) {
        String n = System.getenv("IRIS_TEST_CYCLES");
        int cycles = n == null || n.isBlank() ? DEFAULT_CYCLES : Integer.parseInt(n.trim());
        IrisConfig config = IrisConfig.fromEnvironment().withHeapSize(32L << 20).withDeviceTimeout(Duration.ofSeconds(10));
        int failed = new ScenarioRunner()
                .add("init_close_cycles_leak_nothing", () -> cycles(config, cycles))
                .runAll();
        System.exit(failed);
    }

    private static void cycles(IrisConfig config, int cycles) {
        Gpu.setDevice(config.device());
        Usage before = Usage.now();
        Usage afterFirst = null;
        long start = System.nanoTime();
        for (int cycle = 1; cycle <= cycles; cycle++) {
            oneLifetime(config, cycle);
            if (cycle == 1) {
                afterFirst = Usage.now();
                System.out.println("resources: before the first cycle " + before.describe() + "; after it "
                        + afterFirst.describe() + "; new threads " + difference(afterFirst.threads(), before.threads()));
            } else if (cycle % 50 == 0) {
                System.out.printf("resources: %d cycles, %.1f ms per cycle, %s%n", cycle,
                        (System.nanoTime() - start) / 1e6 / cycle, Usage.now().describe());
            }
        }
        Usage after = Usage.now();
        System.out.println("resources: after " + cycles + " cycles " + after.describe());

        long firstCost = (before.freeDeviceBytes() - afterFirst.freeDeviceBytes()) >> 20;
        check(firstCost <= FIRST_CYCLE_MEMORY_MIB, "the first cycle kept " + firstCost + " MiB of device memory");
        check(afterFirst.fds() - before.fds() <= FIRST_CYCLE_FDS, "the first cycle kept "
                + (afterFirst.fds() - before.fds()) + " file descriptors");
        check(afterFirst.threads().size() - before.threads().size() <= FIRST_CYCLE_THREADS, "the first cycle kept threads "
                + difference(afterFirst.threads(), before.threads()));

        long drift = (afterFirst.freeDeviceBytes() - after.freeDeviceBytes()) >> 20;
        check(Math.abs(drift) <= MEMORY_SLACK_MIB, "free device memory moved by " + drift + " MiB over " + (cycles - 1)
                + " cycles (" + afterFirst.describe() + " -> " + after.describe() + ")");
        check(after.fds() - afterFirst.fds() <= FD_SLACK, "open file descriptors went from " + afterFirst.fds() + " to "
                + after.fds() + " over " + (cycles - 1) + " cycles: " + fdTargets());
        check(after.threads().size() - afterFirst.threads().size() <= THREAD_SLACK, "threads went from "
                + afterFirst.threads().size() + " to " + after.threads().size() + "; new: "
                + difference(after.threads(), afterFirst.threads()));
        check(after.threads().stream().noneMatch(t -> t.startsWith("iris-watchdog")), "a watchdog thread outlived its Iris: "
                + after.threads());
    }

    /** One Iris lifetime that uses what a lifetime builds: heap, peers' mappings, kernels, barrier, rendezvous. */
    private static void oneLifetime(IrisConfig config, int cycle) {
        try (Iris iris = Iris.init(config)) {
            int rank = iris.rank();
            int next = (rank + 1) % iris.worldSize();
            int prev = (rank - 1 + iris.worldSize()) % iris.worldSize();
            try (SymTensor mine = iris.heap().full(cycle * 100 + rank, DType.I32, 4096);
                 SymTensor slot = iris.heap().zeros(DType.I32, 4096)) {
                iris.barrier();
                slot.whole().on(next).storeRemote(mine.whole());
                iris.barrier();
                iris.synchronize();
                int[] got = slot.toIntArray();
                int expected = cycle * 100 + prev;
                check(Arrays.stream(got).allMatch(v -> v == expected), "cycle " + cycle + ": slot holds " + got[0]
                        + ", expected " + expected + " from rank " + prev);
                iris.barrier();  // nobody frees a block a peer may still write
                iris.synchronize();
            }
        }
    }

    private static int openFds() {
        try (Stream<Path> fds = Files.list(Path.of("/proc/self/fd"))) {
            return (int) fds.count();
        } catch (IOException e) {
            throw new IllegalStateException("cannot list /proc/self/fd", e);
        }
    }

    /** Where the open descriptors point, for a failure message. */
    private static String fdTargets() {
        try (Stream<Path> fds = Files.list(Path.of("/proc/self/fd"))) {
            return fds.map(p -> {
                try {
                    return Files.readSymbolicLink(p).toString();
                } catch (IOException e) {
                    return "?";
                }
            }).collect(Collectors.groupingBy(t -> t.replaceAll("\\d+", "N"), Collectors.counting())).toString();
        } catch (IOException e) {
            return "(cannot list /proc/self/fd)";
        }
    }

    /** Thread names with an id suffix, so that two threads of one name both count. */
    private static Set<String> liveThreads() {
        Set<String> names = new TreeSet<>();
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            if (t.isAlive()) {
                names.add(t.getName() + "#" + t.getId());
            }
        }
        return names;
    }

    private static Set<String> difference(Set<String> a, Set<String> b) {
        Set<String> d = new TreeSet<>(a);
        d.removeAll(b);
        return d;
    }
}
