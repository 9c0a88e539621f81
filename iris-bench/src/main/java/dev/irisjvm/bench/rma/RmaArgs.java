package dev.irisjvm.bench.rma;

import dev.irisjvm.core.internal.DeviceAddress;
import dev.irisjvm.runtime.abi.iris_rma_bench_args;
import org.bytedeco.javacpp.BytePointer;

/**
 * The one argument every RMA benchmark kernel takes ({@code iris_rma_bench_args},
 * iris/abi/rma_bench.h), kept for the life of a {@link RmaKernels}: the context is set once, each
 * call sets the fields its kernel reads (rma_bench.cu names them) and launches; the launch copies
 * the struct, so the next call may refill it at once. Fields a kernel does not read keep whatever
 * an earlier call left there. Not thread-safe (RmaKernels' calls are synchronized).
 */
final class RmaArgs implements AutoCloseable {
    private final iris_rma_bench_args args = new iris_rma_bench_args();
    private final DeviceAddress dst = new DeviceAddress();
    private final DeviceAddress src = new DeviceAddress();
    private final DeviceAddress landing = new DeviceAddress();
    private final DeviceAddress flags = new DeviceAddress();
    private final DeviceAddress acks = new DeviceAddress();
    private final DeviceAddress result = new DeviceAddress();

    /** @param ctx the packed context ({@code DeviceContext.bytes()}) */
    RmaArgs(byte[] ctx) {
        new BytePointer(args.ctx()).put(ctx);
    }

    /** The copies (load, store, bulk, local): dst = src, {@code bytes}, the peer translated on one side. */
    iris_rma_bench_args copy(long dstAddress, long srcAddress, long bytes, int peer) {
        return args.dst(dst.at(dstAddress)).src(src.at(srcAddress)).bytes(bytes).peer(peer);
    }

    /** The all-peer copies: each rank's slot {@code stride} bytes after the previous one's. */
    iris_rma_bench_args allPeers(long dstAddress, long srcAddress, long bytes, long stride) {
        return args.dst(dst.at(dstAddress)).src(src.at(srcAddress)).bytes(bytes).stride(stride);
    }

    /** store_tiles: a rows x ld matrix of 2-byte elements in tileRows x tileCols tiles. */
    iris_rma_bench_args tiles(long dstAddress, long srcAddress, long rows, long ld, int tileRows, int tileCols, int peer) {
        return args.dst(dst.at(dstAddress)).src(src.at(srcAddress)).rows(rows).ld(ld).tile_rows(tileRows).tile_cols(tileCols)
                .peer(peer);
    }

    /**
     * The atomics on {@code ops} slots: {@code generation} is the launch's (rma_atomic) or the
     * launches done (the check); {@code resultAddress} the failures or the check's result (init: unread).
     */
    iris_rma_bench_args atomics(long slots, long ops, int op, long seed, long generation, int peer, long resultAddress) {
        return args.dst(dst.at(slots)).count(ops).op(op).seed(seed).value(generation).peer(peer).result(result.at(resultAddress));
    }

    /**
     * Message passing, either side: {@code payload} is the producer's source or the consumer's
     * out; {@code counter} the producer's done or the consumer's errors. The inline-flag kernels
     * read no flags (0).
     */
    iris_rma_bench_args message(long landingAddress, long payload, long bytes, long flagsAddress, long acksAddress, long seq0,
                                long iterations, int peer, long counter) {
        return args.landing(landing.at(landingAddress)).src(src.at(payload)).dst(dst.at(payload)).bytes(bytes)
                .flags(flags.at(flagsAddress)).acks(acks.at(acksAddress)).seq0(seq0).iterations(iterations).peer(peer)
                .result(result.at(counter));
    }

    /** Ping-pong on the uint64 at {@code flag}: rounds seq0 + 1 ... seq0 + rounds; done counts them. */
    iris_rma_bench_args pingPong(long flag, long seq0, long rounds, int peer, boolean initiator, long done) {
        return args.flags(flags.at(flag)).seq0(seq0).iterations(rounds).peer(peer).initiator(initiator ? 1 : 0)
                .result(result.at(done));
    }

    /** pair_sync (flags: the slots, peer: the other rank) and gate (flags: the host word; peer unread). */
    iris_rma_bench_args meet(long flagsAddress, long value, int peer) {
        return args.flags(flags.at(flagsAddress)).value(value).peer(peer);
    }

    /** compare: a and b, {@code bytes} each; result {mismatches, first}. */
    iris_rma_bench_args compare(long a, long b, long bytes, long resultAddress) {
        return args.dst(dst.at(a)).src(src.at(b)).bytes(bytes).result(result.at(resultAddress));
    }

    /** The all-reduce check: out against the sum of every rank's in, {@code count} elements; result as {@link #compare}. */
    iris_rma_bench_args allReduceCheck(long in, long out, long count, long resultAddress) {
        return args.src(src.at(in)).dst(dst.at(out)).count(count).result(result.at(resultAddress));
    }

    @Override
    public void close() {
        args.close();
    }
}
