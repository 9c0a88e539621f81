package dev.irisjvm.kernels.fault;

import dev.irisjvm.core.DType;
import dev.irisjvm.core.DeviceContext;
import dev.irisjvm.core.Iris;
import dev.irisjvm.core.IrisConfig;
import dev.irisjvm.core.IrisRankLostException;
import dev.irisjvm.core.SymTensor;
import dev.irisjvm.core.gpu.LaunchShape;
import dev.irisjvm.core.internal.Kernel;
import dev.irisjvm.core.internal.KernelArgs;
import dev.irisjvm.core.testing.Failures;
import dev.irisjvm.core.testing.ScenarioRunner;
import dev.irisjvm.kernels.KernelLibrary;
import dev.irisjvm.kernels.ScenarioConfigs;
import dev.irisjvm.kernels.attention.AttentionProblem;
import dev.irisjvm.kernels.attention.RingAttention;
import dev.irisjvm.kernels.attention.Sharding;
import dev.irisjvm.kernels.ccl.Collectives;
import dev.irisjvm.kernels.ccl.ReduceOp;
import dev.irisjvm.kernels.fused.GemmAllReduce;
import dev.irisjvm.kernels.gemm.GemmLayout;
import java.time.Duration;
import java.util.OptionalInt;

/**
 * One rank dies with SIGKILL, stops with SIGSTOP (a hung process) or ends with an uncaught
 * exception (exit 1), while the others are inside a collective operation; run by {@link RankLossGpuTest} through the launcher, one job per
 * (operation, victim, signal):
 * <pre>
 *   java ... RankLossScenarios barrier|all_reduce|fused_all_reduce|ring_attention|peer_flag_kernel VICTIM [KILL|STOP|THROW]
 * </pre>
 * Every rank first runs the operation once normally, then the ranks meet on the host; the victim
 * then sleeps {@value #VICTIM_SLEEP_MS} ms (so that the others are spinning inside the operation)
 * and sends itself the signal (or throws), while the others run the operation again and synchronize:
 * <ul>
 * <li>{@code barrier}: {@link Iris#barrier()}, a one-block device barrier;</li>
 * <li>{@code all_reduce}: {@link Collectives#allReduce} (AUTO) of 4 Mi bf16;</li>
 * <li>{@code fused_all_reduce}: {@link GemmAllReduce} (AUTO variant) of 2048 x 2048 x 2048 per
 *     rank, whose owners wait inside the GEMM kernel for the peers' partial tiles;</li>
 * <li>{@code ring_attention}: {@link RingAttention#forward} of a 4096-token shard per rank, whose
 *     steps wait for the K/V shards the peers push;</li>
 * <li>{@code peer_flag_kernel}: a kernel in which every block signals every peer and waits for every
 *     peer's flag ({@code ft_wait_peer_flags}, fault_test.cu): the bare pattern of a kernel that
 *     waits on peers.</li>
 * </ul>
 * Each survivor must raise {@link IrisRankLostException} naming the victim within
 * {@value #DEADLINE_SECONDS} s of starting the wait after a SIGKILL (the victim's sleep plus the
 * {@value #WATCHDOG_TIMEOUT_MS} ms watchdog timeout plus slack; the device timeout is
 * {@value #DEVICE_TIMEOUT_MS} ms, so only the watchdog can be that fast), within
 * {@value #STOPPED_DEADLINE_SECONDS} s after a SIGSTOP (a stopped rank's socket stays open: the
 * watchdog notices its silence, a heartbeat interval later), with its stream idle afterwards (no
 * kernel left spinning), refuse further collective calls at once with the same exception, and
 * close within {@value #CLOSE_SECONDS} s. Survivors then exit 0 by themselves. The launcher
 * reports the victim as the rank that failed first: killed, with exit 137; thrown, with 1; stopped, it is
 * continued {@value #RESUME_SECONDS} s later by a process it started before stopping (after the
 * survivors' deadline and close time have both passed, so they must have ended by themselves) and
 * exits {@value #RESUMED_EXIT_CODE}.
 */
public final class RankLossScenarios {
    static final long WATCHDOG_TIMEOUT_MS = 3_000;
    static final long DEVICE_TIMEOUT_MS = 60_000;
    static final long VICTIM_SLEEP_MS = 500;
    static final double DEADLINE_SECONDS = 5.0;
    static final double STOPPED_DEADLINE_SECONDS = 7.0;
    static final int RESUMED_EXIT_CODE = 4;
    static final int RING_SHARD = 4096;
    static final double CLOSE_SECONDS = 10.0;
    static final int RESUME_SECONDS = (int) (STOPPED_DEADLINE_SECONDS + CLOSE_SECONDS) + 1;
    static final int FLAG_BLOCKS = 132;
    static final int FLAG_SITE = 4242;
    static final int FUSED_SIZE = 2048;

    private RankLossScenarios() {}

    public static void main(String[] args) throws Exception {
        String op = args[0];
        IrisConfig config = ScenarioConfigs.of(256L << 20, Duration.ofMillis(DEVICE_TIMEOUT_MS)).withWatchdogTimeout(Duration.ofMillis(WATCHDOG_TIMEOUT_MS));
        Iris iris = Iris.init(config);
        int world = iris.worldSize();
        int victim = Math.floorMod(Integer.parseInt(args[1]), world);
        String signal = args.length > 2 ? args[2] : "KILL";
        if (!signal.equals("KILL") && !signal.equals("STOP") && !signal.equals("THROW")) {
            throw new IllegalArgumentException("signal must be KILL, STOP or THROW, got " + signal);
        }
        Collectives ccl = op.equals("all_reduce") ? Collectives.create(iris) : null;
        GemmAllReduce fused = op.equals("fused_all_reduce") ? GemmAllReduce.create(iris, FUSED_SIZE, FUSED_SIZE, FUSED_SIZE) : null;
        SymTensor fa = fused == null ? null : iris.heap().ones(DType.BF16, FUSED_SIZE, FUSED_SIZE);
        SymTensor fb = fused == null ? null : iris.heap().ones(DType.BF16, FUSED_SIZE, FUSED_SIZE);
        SymTensor fc = fused == null ? null : iris.heap().zeros(DType.BF16, FUSED_SIZE, FUSED_SIZE);
        AttentionProblem shard = AttentionProblem.of(DType.BF16, 1, 8, 8, RING_SHARD, RING_SHARD, 128, false);
        RingAttention ring = op.equals("ring_attention") ? RingAttention.create(iris, shard, Sharding.CONTIGUOUS) : null;
        SymTensor rq = ring == null ? null : iris.heap().randn(DType.BF16, 1, 8, RING_SHARD, 128);
        SymTensor rk = ring == null ? null : iris.heap().randn(DType.BF16, 1, 8, RING_SHARD, 128);
        SymTensor rv = ring == null ? null : iris.heap().randn(DType.BF16, 1, 8, RING_SHARD, 128);
        SymTensor ro = ring == null ? null : iris.heap().empty(DType.BF16, 1, 8, RING_SHARD, 128);
        KernelLibrary library = KernelLibrary.forIris(iris);
        KernelArgs args2 = new KernelArgs();
        Kernel waitKernel = library.module("fault_test").kernel("ft_wait_peer_flags");
        SymTensor flags = iris.heap().zeros(DType.I64, (long) FLAG_BLOCKS * DeviceContext.MAX_RANKS);
        SymTensor x = iris.heap().ones(DType.BF16, 4L << 20);
        SymTensor y = iris.heap().zeros(DType.BF16, 4L << 20);
        Runnable operation = switch (op) {
            case "barrier" -> iris::barrier;
            case "all_reduce" -> () -> ccl.allReduce(x, y, ReduceOp.SUM, iris.stream());
            case "fused_all_reduce" -> () -> fused.run(fa, fb, GemmLayout.NK, null, fc, iris.stream());
            case "ring_attention" -> () -> ring.forward(rq, rk, rv, ro, null, iris.stream());
            case "peer_flag_kernel" -> new Runnable() {
                long epoch;

                @Override
                public void run() {
                    waitKernel.launch(LaunchShape.of(FLAG_BLOCKS, 32), iris.stream(), args2.clear()
                            .putBytes(iris.deviceContext().bytes(), DeviceContext.ALIGNMENT).putLong(flags.deviceAddress())
                            .putLong(++epoch).putInt(FLAG_SITE));
                }
            };
            default -> throw new IllegalArgumentException(
                    "operation must be barrier, all_reduce, fused_all_reduce, ring_attention or peer_flag_kernel, got " + op);
        };

        iris.hostBarrier();  // every rank's flags are zeroed before any peer signals into them
        operation.run();     // once normally: everything is loaded and works
        iris.synchronize();
        iris.hostBarrier();

        if (iris.rank() == victim) {
            System.out.println("rank-loss: rank " + victim + " (pid " + ProcessHandle.current().pid()
                    + ") sends itself SIG" + signal + " while the others are in " + op);
            System.out.flush();
            Thread.sleep(VICTIM_SLEEP_MS);
            if (signal.equals("THROW")) {
                throw new IllegalStateException("rank " + victim + ": a deliberate failure between two calls of " + op);
            }
            String pid = Long.toString(ProcessHandle.current().pid());
            if (signal.equals("STOP")) {
                new ProcessBuilder("sh", "-c", "sleep " + RESUME_SECONDS + "; kill -CONT " + pid).inheritIO().start();
            }
            new ProcessBuilder("kill", "-" + signal, pid).inheritIO().start().waitFor();
            if (signal.equals("STOP")) {
                System.out.println("rank-loss: rank " + victim + " continues after SIGSTOP and ends");
                System.exit(RESUMED_EXIT_CODE);
            }
            Thread.sleep(60_000);
            System.exit(99);  // not reached: SIGKILL
        }
        AutoCloseable owner = ccl != null ? ccl : fused != null ? fused : ring;
        double deadline = signal.equals("STOP") ? STOPPED_DEADLINE_SECONDS : DEADLINE_SECONDS;
        int failed = new ScenarioRunner().add("rank_loss_" + op + (signal.equals("STOP") ? "_stopped" : ""),
                () -> survive(iris, owner, library, args2, operation, victim, op, deadline)).runAll();
        System.exit(failed);
    }

    /** {@code owner}: the collectives or fused instance of the operation (null for the others), closed after the loss. */
    private static void survive(Iris iris, AutoCloseable owner, KernelLibrary library, KernelArgs args, Runnable operation,
                                int victim, String op, double deadlineSeconds) throws Exception {
        Failures f = new Failures();
        int rank = iris.rank();
        long start = System.nanoTime();
        operation.run();
        IrisRankLostException lost = null;
        Throwable other = null;
        try {
            iris.synchronize();
        } catch (IrisRankLostException e) {
            lost = e;
        } catch (Throwable t) {
            other = t;
        }
        double seconds = (System.nanoTime() - start) / 1e9;
        System.out.printf("rank-loss: rank %d: %s ended after %.3f s: %s%n", rank, op, seconds,
                lost != null ? lost.getMessage() : String.valueOf(other));
        if (lost == null) {
            f.fail(other == null ? "synchronize returned normally although rank " + victim + " is dead"
                    : "expected IrisRankLostException, got " + other);
        } else {
            IrisRankLostException e = lost;
            String m = String.valueOf(e.getMessage());
            f.check(e.lostRank() == victim, () -> "lost rank " + e.lostRank() + ", expected " + victim + ": " + m);
            f.check(e.rank() == rank && m.startsWith("rank " + rank + ":"), () -> "does not start with this rank: " + m);
            f.check(m.contains("rank " + victim + " was lost"), () -> "does not name the lost rank " + victim + ": " + m);
        }
        f.check(seconds < deadlineSeconds, () -> "took " + seconds + " s, deadline " + deadlineSeconds + " s (watchdog timeout "
                + WATCHDOG_TIMEOUT_MS + " ms, device timeout " + DEVICE_TIMEOUT_MS + " ms)");
        boolean idle = iris.stream().isIdle();
        f.check(idle, () -> "a kernel is still running on the stream after the exception");
        f.check(iris.lostRank().equals(OptionalInt.of(victim)), () -> "Iris.lostRank() is " + iris.lostRank());

        // Every collective call fails at once now, naming the lost rank.
        for (Runnable call : new Runnable[] {iris::barrier, iris::hostBarrier, () -> iris.broadcast(1L, 0), operation}) {
            long t0 = System.nanoTime();
            try {
                call.run();
                iris.synchronize();
                f.fail("a collective call after the loss returned normally");
            } catch (IrisRankLostException e) {
                f.check(e.lostRank() == victim, () -> "later call names rank " + e.lostRank() + ": " + e.getMessage());
            } catch (RuntimeException e) {
                f.fail("a collective call after the loss raised " + e);
            }
            double s = (System.nanoTime() - t0) / 1e9;
            f.check(s < 2, () -> "a call after the loss took " + s + " s");
        }

        long c0 = System.nanoTime();
        if (owner != null) {
            try {
                owner.close();
            } catch (IrisRankLostException expected) {
                // freeing its workspace synchronizes, which reports the loss; the kernels are unloaded anyway
            }
        }
        library.close();
        args.close();
        try {
            iris.close();
        } catch (RuntimeException e) {
            f.fail("Iris.close after the loss raised " + e);
        }
        double closeSeconds = (System.nanoTime() - c0) / 1e9;
        f.check(closeSeconds < CLOSE_SECONDS, () -> "close took " + closeSeconds + " s");
        f.throwIfAny();
    }
}
