package dev.irisjvm.kernels;

import dev.irisjvm.core.Iris;
import dev.irisjvm.core.gpu.DeviceProperties;
import dev.irisjvm.core.gpu.LaunchShape;
import dev.irisjvm.core.gpu.Stream;
import dev.irisjvm.core.internal.Kernel;
import dev.irisjvm.core.internal.KernelArgs;
import dev.irisjvm.core.internal.MappedHostMemory;
import dev.irisjvm.core.testing.ScenarioRunner;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.time.Duration;

/**
 * Other work that holds all but {@code free} SMs of this rank's GPU ({@code rt_hold_sms},
 * residency_test.cu, on a stream of its own), for scenarios that check that a library kernel needs
 * no block of its own grid to be resident or to start in index order: CUDA promises neither when
 * another stream, another process or an MPS limit holds SMs. Deterministic: one block per SM (each
 * takes the most shared memory a block may have, so nothing that uses shared memory fits beside
 * it), and {@link #hold} returns only once every block has started, so the call made next finds
 * exactly {@code free} SMs. Bounded: the blocks let go at {@link #close()} or after {@code atMost},
 * whichever comes first.
 *
 * <pre>{@code
 * try (SmHog hog = SmHog.hold(iris, 1, Duration.ofSeconds(60))) {   // collective
 *     op.run(..., iris.stream());
 *     iris.synchronize();
 *     hog.checkStillHolding();   // the call finished while the SMs were held
 * }
 * }</pre>
 */
public final class SmHog implements AutoCloseable {
    /** The test module and its kernel (residency_test.cu). */
    static final String MODULE = "residency_test";
    static final String KERNEL = "rt_hold_sms";
    /** Seconds the blocks may take to start: they start at once on a GPU that nothing else uses. */
    static final long START_SECONDS = 10;
    private static final VarHandle WORD = MethodHandles.byteBufferViewVarHandle(int[].class, ByteOrder.nativeOrder());
    private static final int STARTED = 0;
    private static final int STOP = 4;
    private static final int ENDED_BY_DEADLINE = 8;

    private final int blocks;
    private final int free;
    private final KernelLibrary library;
    private final Stream stream;
    private final MappedHostMemory status;
    private boolean closed;

    private SmHog(int blocks, int free, KernelLibrary library, Stream stream, MappedHostMemory status) {
        this.blocks = blocks;
        this.free = free;
        this.library = library;
        this.stream = stream;
        this.status = status;
    }

    /**
     * Collective: on every rank, holds all SMs of its GPU but {@code free} until {@link #close()} (at
     * most {@code atMost}) and returns once every block holds its SM. When some rank's blocks do not
     * all start within {@value #START_SECONDS} s (the GPU is shared with concurrent work: ranks
     * under MPS, another job), every rank lets go and the scenario is skipped, saying so.
     */
    public static SmHog hold(Iris iris, int free, Duration atMost) {
        DeviceProperties device = iris.deviceProperties();
        int sms = device.multiprocessorCount();
        if (free < 1 || free >= sms) {
            throw new IllegalArgumentException("free must be in [1, " + (sms - 1) + "], got " + free);
        }
        KernelLibrary library = KernelLibrary.forIris(iris);
        Stream stream = null;
        MappedHostMemory status = null;
        SmHog hog;
        try {
            Kernel kernel = library.module(MODULE).kernel(KERNEL);
            int shared = Math.toIntExact(device.sharedMemoryPerBlockOptin());
            kernel.setMaxDynamicSharedBytes(shared);
            stream = Stream.create();
            status = MappedHostMemory.allocate(16);
            hog = new SmHog(sms - free, free, library, stream, status);
            try (KernelArgs args = new KernelArgs()) {
                kernel.launch(LaunchShape.of(sms - free, 32).withSharedBytes(shared), stream,
                        args.clear().putLong(status.address()).putLong(atMost.toNanos()));
            }
        } catch (RuntimeException | Error e) {
            if (status != null) {
                WORD.setVolatile(status.buffer(), STOP, 1);
            }
            if (stream != null) {
                stream.synchronize();
                stream.close();
            }
            if (status != null) {
                status.close();
            }
            library.close();
            throw e;
        }
        long deadline = System.nanoTime() + Duration.ofSeconds(START_SECONDS).toNanos();
        while (hog.started() < hog.blocks && System.nanoTime() < deadline) {
            Thread.onSpinWait();
        }
        int started = hog.started();
        byte[][] all = iris.allGather(new byte[] {(byte) (started == hog.blocks ? 1 : 0)});
        for (int r = 0; r < all.length; r++) {
            if (all[r][0] == 0) {
                hog.close();
                throw ScenarioRunner.skip("rank " + r + " could not hold all but " + free + " SMs of its GPU: not every block of "
                        + "rt_hold_sms started within " + START_SECONDS + " s (this rank: " + started + " of "
                        + hog.blocks + "); the GPU is shared with concurrent work, e.g. ranks under MPS");
            }
        }
        return hog;
    }

    private int started() {
        return (int) WORD.getVolatile(status.buffer(), STARTED);
    }

    /** SMs held. */
    public int blocks() {
        return blocks;
    }

    /** SMs left free. */
    public int free() {
        return free;
    }

    /**
     * Throws if a block let go by its deadline: whatever ran meanwhile may have run on the SMs
     * the hog was to hold.
     */
    public void checkStillHolding() {
        int ended = (int) WORD.getVolatile(status.buffer(), ENDED_BY_DEADLINE);
        if (ended != 0) {
            throw new AssertionError(ended + " of the " + blocks + " blocks holding SMs reached their deadline before they were "
                    + "told to stop: the call ran on SMs that were to be held");
        }
    }

    /** Lets go of the SMs and waits until every block has ended. Safe to call twice. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        WORD.setVolatile(status.buffer(), STOP, 1);
        try {
            stream.synchronize();
        } finally {
            stream.close();
            status.close();
            library.close();
        }
    }

    @Override
    public String toString() {
        return "SmHog(" + blocks + " SMs held, " + free + " free)";
    }
}
