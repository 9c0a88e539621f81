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
 *
 * <p>Free device memory is a figure of the whole GPU, so where ranks share a GPU it moves with
 * what the others are doing. The cycles therefore read it inside a lifetime between two host
 * barriers, when every rank holds the same things, and the first cycle's device-memory cost
 * (which then includes the other ranks' CUDA contexts starting up) is only printed.
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
        Usage before = Usage.now();
        Usage[] inside = new Usage[cycles + 1];  // read in cycle 1, every 50th and the last
        boolean[] shared = new boolean[1];
        long start = System.nanoTime();
        for (int cycle = 1; cycle <= cycles; cycle++) {
            boolean measure = cycle == 1 || cycle == cycles || cycle % 50 == 0;
            int c = cycle;
            oneLifetime(config, cycle, iris -> {
                shared[0] = iris.sharesGpus();
                if (measure) {
                    iris.hostBarrier();  // every rank holds the same things while each reads
                    inside[c] = Usage.now();
                    iris.hostBarrier();
                }
            });
            if (cycle == 1) {
                System.out.println("resources: before the first cycle " + before.describe() + "; inside it "
                        + inside[1].describe() + "; new threads " + difference(inside[1].threads(), before.threads()));
            } else if (measure) {
                System.out.printf("resources: %d cycles, %.1f ms per cycle, inside the last %s%n", cycle,
                        (System.nanoTime() - start) / 1e6 / cycle, inside[cycle].describe());
            }
        }
        Usage first = inside[1];
        Usage last = inside[cycles];
        Usage after = Usage.now();
        System.out.println("resources: after " + cycles + " cycles " + after.describe());

        long firstCost = (before.freeDeviceBytes() - first.freeDeviceBytes()) >> 20;
        if (shared[0]) {
            System.out.println("resources: ranks share this GPU, so the first cycle's " + firstCost
                    + " MiB include other ranks' start-up; only the drift over the cycles is checked");
        } else {
            check(firstCost <= FIRST_CYCLE_MEMORY_MIB, "the first cycle holds " + firstCost + " MiB of device memory");
        }
        check(first.fds() - before.fds() <= FIRST_CYCLE_FDS, "the first cycle holds "
                + (first.fds() - before.fds()) + " file descriptors");
        check(first.threads().size() - before.threads().size() <= FIRST_CYCLE_THREADS, "the first cycle holds threads "
                + difference(first.threads(), before.threads()));

        long drift = (first.freeDeviceBytes() - last.freeDeviceBytes()) >> 20;
        check(Math.abs(drift) <= MEMORY_SLACK_MIB, "free device memory moved by " + drift + " MiB over " + (cycles - 1)
                + " cycles (" + first.describe() + " -> " + last.describe() + ")");
        check(last.fds() - first.fds() <= FD_SLACK, "open file descriptors went from " + first.fds() + " to "
                + last.fds() + " over " + (cycles - 1) + " cycles: " + fdTargets());
        check(last.threads().size() - first.threads().size() <= THREAD_SLACK, "threads went from "
                + first.threads().size() + " to " + last.threads().size() + "; new: "
                + difference(last.threads(), first.threads()));
        check(after.threads().stream().noneMatch(t -> t.startsWith("iris-watchdog")), "a watchdog thread outlived its Iris: "
                + after.threads());
    }

    /** One Iris lifetime that uses what a lifetime builds: heap, peers' mappings, kernels, barrier, rendezvous. */
    private static void oneLifetime(IrisConfig config, int cycle, java.util.function.Consumer<Iris> whileOpen) {
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
                whileOpen.accept(iris);
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
