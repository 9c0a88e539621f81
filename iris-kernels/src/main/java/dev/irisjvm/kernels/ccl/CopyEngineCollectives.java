package dev.irisjvm.kernels.ccl;

import dev.irisjvm.core.DeviceBarrier;
import dev.irisjvm.core.DeviceContext;
import dev.irisjvm.core.Iris;
import dev.irisjvm.core.gpu.Event;
import dev.irisjvm.core.gpu.LaunchShape;
import dev.irisjvm.core.gpu.Stream;
import dev.irisjvm.core.internal.Kernel;
import dev.irisjvm.core.internal.Memcpy;
import dev.irisjvm.core.internal.Resources;
import java.util.ArrayList;
import java.util.List;
import java.util.function.IntToLongFunction;
import java.util.function.LongFunction;

/**
 * The collectives whose NVLink traffic runs on the copy engines: {@link AllReduceAlgorithm#COPY_ENGINE},
 * and all-gather and all-to-all with large blocks ({@link Collectives.Options#copyEngineBytes()}).
 * SM loads and stores top out at about 372 GB/s one way on 2 x H200, the copy engines at 396
 * (docs/benchmarks/rma.md), so for large messages the copy engines set the pace.
 *
 * <p>Every call runs between two device barriers: the opening one means every peer's input is
 * ready and its output free; the closing one that every peer's copies into this rank have landed
 * and its copies out of this rank are done, so the next call, of any collective, may reuse the
 * staging and the tensors. In between, copies to and from peers address the peers' tensors through
 * the symmetric heap's mapping (plain device-to-device copies, which a graph can capture).
 *
 * <p><b>All-reduce</b> (two-shot): rank r works through shard r (TWO_SHOT's shards) in chunks of
 * {@code staging / world} bytes, on three streams:
 * <ol>
 * <li>the pull stream copies the chunk from every peer's input into a staging slot (two slots,
 *     one per staging buffer, used alternately);</li>
 * <li>the caller's stream reduces the chunk from local memory ({@code ccl_all_reduce_copy_engine_*},
 *     the reduction of ONE_SHOT and TWO_SHOT, so the result is bit-identical to theirs);</li>
 * <li>the push stream copies the result into every peer's output.</li>
 * </ol>
 * Events order a chunk's three steps and keep a pull from overwriting a slot before the reduction
 * two chunks back has read it, so the pulls of one chunk overlap the pushes of the one before.
 *
 * <p><b>All-gather, all-to-all</b>: the push stream copies this rank's block for each peer into
 * that peer's output while the caller's stream copies its own block.
 *
 * <p>Everything is enqueued: the streams and events exist from construction, so a call can be
 * captured in a CUDA graph (the side streams fork from and join the caller's stream). Calls must
 * not overlap, which the Collectives contract already asks.
 */
final class CopyEngineCollectives implements AutoCloseable {
    /** Staging slots the all-reduce's pulls cycle through: the two staging buffers. */
    private static final int SLOTS = 2;

    private final Iris iris;
    private final int rank;
    private final int world;
    private final long stagingBase;
    private final long stagingBytes;
    private final Stream pullStream;
    private final Stream pushStream;
    private final Event start;
    private final Event pullsDone;
    private final Event pushed;
    private final Event[] pulled = new Event[SLOTS];
    private final Event[] reduced = new Event[SLOTS];
    /** Its own device barrier, so that its barriers pair only with its own on the peers. */
    private final DeviceBarrier barrier;

    CopyEngineCollectives(Iris iris, long stagingBase, long stagingBytes) {
        this.iris = iris;
        this.rank = iris.node().index();
        this.world = iris.node().size();
        this.stagingBase = stagingBase;
        this.stagingBytes = stagingBytes;
        List<AutoCloseable> made = new ArrayList<>();
        try {
            barrier = add(made, iris.newBarrier());
            pullStream = add(made, Stream.create());
            pushStream = add(made, Stream.create());
            start = add(made, Event.untimed());
            pullsDone = add(made, Event.untimed());
            pushed = add(made, Event.untimed());
            for (int s = 0; s < SLOTS; s++) {
                pulled[s] = add(made, Event.untimed());
                reduced[s] = add(made, Event.untimed());
            }
        } catch (RuntimeException | Error e) {
            Resources.closeAfter(e, made);
            throw e;
        }
    }

    private static <T extends AutoCloseable> T add(List<AutoCloseable> made, T resource) {
        made.add(resource);
        return resource;
    }

    /** Elements per all-reduce chunk for an element type of that size: one peer's part of a staging slot, whole 16-byte vectors. */
    static long chunkElements(long stagingBytes, int world, int elementBytes) {
        return stagingBytes / world / 16 * 16 / elementBytes;
    }

    /** Whether staging buffers of that many bytes hold an all-reduce chunk of at least one 16-byte vector per rank. */
    static boolean fits(long stagingBytes, int world) {
        return stagingBytes / world >= 16;
    }

    /**
     * Enqueues the all-reduce of {@code n} elements of {@code elementBytes} each from {@code in} into
     * {@code out} (symmetric addresses, checked by the caller) on {@code stream}.
     *
     * @param reduce the chunk's reduction, {@code ccl_all_reduce_copy_engine_<type>_<op>}
     * @param args   the collectives' kernel argument, filled here for each chunk
     * @param shape  the launch shape for a reduction of that many bytes
     */
    void allReduce(Kernel reduce, long in, long out, long n, int elementBytes, Stream stream, CclArgs args,
                   LongFunction<LaunchShape> shape) {
        long[] mine = Partition.shard(n, rank, world, Partition.lanes(elementBytes));
        long chunk = chunkElements(stagingBytes, world, elementBytes);
        long chunks = Partition.ceilDiv(mine[1] - mine[0], chunk);
        DeviceContext ctx = iris.deviceContext();

        fork(stream);
        for (long c = 0; c < chunks; c++) {
            int s = (int) (c % SLOTS);
            long lo = mine[0] + c * chunk;
            long hi = Math.min(mine[1], lo + chunk);
            long offset = lo * elementBytes;
            long bytes = (hi - lo) * elementBytes;
            long slot = stagingBase + s * stagingBytes;   // peer p's part at slot + p * chunk elements
            if (c >= SLOTS) {
                pullStream.waitFor(reduced[s]);           // the reduction of chunk c - 2 has read the slot
            }
            for (int k = 1; k < world; k++) {
                int p = (rank + k) % world;
                Memcpy.deviceToDevice(slot + p * chunk * elementBytes, ctx.translate(in + offset, p), bytes, pullStream);
            }
            pulled[s].record(pullStream);
            stream.waitFor(pulled[s]);
            reduce.launch(shape.apply(bytes), stream, args.chunk(in, out, slot, chunk, lo, hi), false);
            reduced[s].record(stream);
            pushStream.waitFor(reduced[s]);
            for (int k = 1; k < world; k++) {
                int p = (rank + k) % world;
                Memcpy.deviceToDevice(ctx.translate(out + offset, p), out + offset, bytes, pushStream);
            }
        }
        join(stream);
    }

    /**
     * All-gather of {@code bytes} per rank: this rank's {@code in} into block {@code rank} of every
     * rank's {@code out} ({@code inPlace}: in is that block here already).
     */
    void allGather(long in, long out, long bytes, boolean inPlace, Stream stream) {
        exchange(out + rank * bytes, bytes, p -> in, !inPlace, stream);
    }

    /** All-to-all of blocks of {@code block} bytes: block p of {@code in} into block {@code rank} of rank p's {@code out}. */
    void allToAll(long in, long out, long block, Stream stream) {
        exchange(out + rank * block, block, p -> in + p * block, true, stream);
    }

    /**
     * For every rank p, {@code bytes} from {@code source(p)} here to {@code target} on rank p; this
     * rank's own copy only when {@code local} (in place it would copy a block onto itself).
     */
    private void exchange(long target, long bytes, IntToLongFunction source, boolean local, Stream stream) {
        DeviceContext ctx = iris.deviceContext();
        fork(stream);
        for (int k = 1; k < world; k++) {
            int p = (rank + k) % world;
            Memcpy.deviceToDevice(ctx.translate(target, p), source.applyAsLong(p), bytes, pushStream);
        }
        if (local) {
            Memcpy.deviceToDevice(target, source.applyAsLong(rank), bytes, stream);
        }
        join(stream);
    }

    /** The opening barrier, then the side streams start behind it. */
    private void fork(Stream stream) {
        barrier.enqueue(stream);
        start.record(stream);
        pullStream.waitFor(start);
        pushStream.waitFor(start);
    }

    /** The caller's stream waits for both side streams (a graph capture needs every fork joined), then the closing barrier. */
    private void join(Stream stream) {
        pullsDone.record(pullStream);
        pushed.record(pushStream);
        stream.waitFor(pullsDone);
        stream.waitFor(pushed);
        barrier.enqueue(stream);
    }

    @Override
    public void close() {
        Resources.closeAll(start, pullsDone, pushed, pulled[0], pulled[1], reduced[0], reduced[1], pullStream, pushStream, barrier);
    }
}
