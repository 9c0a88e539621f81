package dev.irisjvm.bench.rma;

import dev.irisjvm.core.Iris;
import dev.irisjvm.core.gpu.Event;
import dev.irisjvm.core.gpu.Stream;
import dev.irisjvm.core.internal.MappedHostMemory;
import java.util.ArrayList;
import java.util.List;

/**
 * Times repetitions of GPU work with one pair of CUDA events per repetition.
 *
 * <p>Warm-up repetitions run first and are waited for. The timed ones are queued behind a gate (a
 * one-thread kernel that waits on a word of mapped host memory), and the gate is opened only once
 * all of them are queued: the repetitions then run back to back, and no event pair includes the
 * host's launch overhead. Each repetition has a part outside its events ({@code before}, e.g. a
 * two-rank meeting) and the timed part ({@code body}).
 *
 * <pre>{@code
 * try (RepTimer timer = new RepTimer(iris, kernels, stream, true)) {
 *     float[] ms = timer.run(3, 20, i -> {}, i -> kernels.load(dst, src, bytes, peer, shape, stream), true);
 *     TimingStats t = TimingStats.ofMillis(ms, 1);
 * }
 * }</pre>
 */
public final class RepTimer implements AutoCloseable {
    /** One repetition's work; index counts warm-up and timed repetitions together, from 0. */
    @FunctionalInterface
    public interface Rep {
        void run(int index);
    }

    private final Iris iris;
    private final RmaKernels kernels;
    private final Stream stream;
    private final boolean gated;
    private final MappedHostMemory gateWord;
    private final List<Event[]> events = new ArrayList<>();
    private long gateValue;

    public RepTimer(Iris iris, RmaKernels kernels, Stream stream, boolean gated) {
        this.iris = iris;
        this.kernels = kernels;
        this.stream = stream;
        this.gated = gated;
        this.gateWord = MappedHostMemory.allocate(64);
    }

    /**
     * Runs {@code warmup} + {@code reps} repetitions and waits for them (raising what a kernel
     * recorded). Returns each timed repetition's milliseconds, or null when {@code timed} is false
     * (a rank that only takes part, such as the consumer of message passing).
     */
    public float[] run(int warmup, int reps, Rep before, Rep body, boolean timed) {
        for (int i = 0; i < warmup; i++) {
            before.run(i);
            body.run(i);
        }
        iris.synchronize(stream);
        ensureEvents(reps);
        boolean open = !gated;
        try {
            if (gated) {
                kernels.gate(gateWord.address(), ++gateValue, stream);
            }
            for (int r = 0; r < reps; r++) {
                before.run(warmup + r);
                if (timed) {
                    events.get(r)[0].record(stream);
                }
                body.run(warmup + r);
                if (timed) {
                    events.get(r)[1].record(stream);
                }
            }
        } finally {
            if (!open) {
                gateWord.buffer().putLong(0, gateValue);  // open it even if queuing failed, so the stream drains
            }
        }
        iris.synchronize(stream);
        if (!timed) {
            return null;
        }
        float[] ms = new float[reps];
        for (int r = 0; r < reps; r++) {
            ms[r] = events.get(r)[1].elapsedSince(events.get(r)[0]);
        }
        return ms;
    }

    private void ensureEvents(int reps) {
        while (events.size() < reps) {
            events.add(new Event[] {Event.timed(), Event.timed()});
        }
    }

    @Override
    public void close() {
        for (Event[] pair : events) {
            pair[0].close();
            pair[1].close();
        }
        events.clear();
        gateWord.close();
    }
}
