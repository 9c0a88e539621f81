package dev.irisjvm.bench.rma;

import dev.irisjvm.core.Iris;
import dev.irisjvm.core.SymTensor;
import dev.irisjvm.core.gpu.LaunchShape;
import dev.irisjvm.core.gpu.Stream;
import dev.irisjvm.core.internal.Memcpy;

/**
 * Bandwidth points: load, store, all_load, all_store, store_tiles (iris kernels), and the baselines
 * copy_engine (cudaMemcpyPeerAsync both ways) and local_copy (cudaMemcpyAsync device to device and
 * the same SM copy loop on local memory). For every size, every ordered pair (issuer i, peer j),
 * i != j, runs on i alone; the data is fresh random floats per size, the destination is poisoned
 * before each pair and compared in full afterwards.
 *
 * <pre>{@code
 * new BandwidthBench(ctx).run(RmaOp.LOAD);
 * }</pre>
 */
public final class BandwidthBench {
    private final SweepContext ctx;
    private final Iris iris;
    private final RmaKernels kernels;
    private final SweepOptions options;
    private final int world;

    public BandwidthBench(SweepContext ctx) {
        this.ctx = ctx;
        this.iris = ctx.iris();
        this.kernels = ctx.kernels();
        this.options = ctx.options();
        this.world = ctx.world();
    }

    public void run(RmaOp op) {
        for (long bytes : options.sizes()) {
            switch (op) {
                case LOAD, STORE, LOAD_BULK, STORE_BULK, COPY_ENGINE -> pairs(op, bytes);
                case ALL_LOAD, ALL_STORE -> allPeers(op, bytes);
                case STORE_TILES -> storeTiles(bytes);
                case LOCAL_COPY -> local(bytes);
                default -> throw new IllegalArgumentException("not a bandwidth op: " + op);
            }
        }
    }

    /** load / store (each in its SM-copy and bulk-copy form) and copy_engine for every ordered pair. */
    private void pairs(RmaOp op, long bytes) {
        int reps = options.repsFor(bytes);
        boolean load = op == RmaOp.LOAD || op == RmaOp.LOAD_BULK;
        boolean bulk = op == RmaOp.LOAD_BULK || op == RmaOp.STORE_BULK;
        try (SymTensor src = ctx.freshData(bytes); SymTensor dst = ctx.buffer(bytes)) {
            ctx.forEachPair((i, j) -> {
                if (op == RmaOp.COPY_ENGINE) {
                    copyEngine(bytes, i, j, src, dst, reps);
                    return;
                }
                LaunchShape shape = bulk ? kernels.bulkShape(bytes, options.blocks)
                        : kernels.copyShape(load ? "rma_load" : "rma_store", bytes, options.blocks, options.threads);
                if (load) {
                    point(op.id(), "iris", bytes, i, j, dst,
                            () -> {
                                if (bulk) {
                                    kernels.loadBulk(dst.deviceAddress(), src, bytes, j, shape, ctx.stream());
                                } else {
                                    kernels.load(dst.deviceAddress(), src, bytes, j, shape, ctx.stream());
                                }
                            },
                            () -> ctx.verifier().sameBytes(src.deviceAddress(j), dst.deviceAddress(), bytes,
                                    "dst vs rank " + j + "'s src"), reps);
                } else {
                    point(op.id(), "iris", bytes, i, j, dst,
                            () -> {
                                if (bulk) {
                                    kernels.storeBulk(dst, src.deviceAddress(), bytes, j, shape, ctx.stream());
                                } else {
                                    kernels.store(dst, src.deviceAddress(), bytes, j, shape, ctx.stream());
                                }
                            },
                            () -> ctx.verifier().sameBytes(src.deviceAddress(), dst.deviceAddress(j), bytes,
                                    "rank " + j + "'s dst vs src"), reps);
                }
            });
        }
    }

    /** cudaMemcpyPeerAsync on the issuer's stream: pull (peer's src into the issuer's dst), then push. */
    private void copyEngine(long bytes, int i, int j, SymTensor src, SymTensor dst, int reps) {
        Stream s = ctx.stream();
        point("copy_engine_pull", "copy_engine", bytes, i, j, dst,
                () -> Memcpy.peer(dst.deviceAddress(), iris.device(), src.deviceAddress(j), iris.deviceOf(j), bytes, s),
                () -> ctx.verifier().sameBytes(src.deviceAddress(j), dst.deviceAddress(), bytes, "dst vs rank " + j + "'s src"),
                reps);
        point("copy_engine_push", "copy_engine", bytes, i, j, dst,
                () -> Memcpy.peer(dst.deviceAddress(j), iris.deviceOf(j), src.deviceAddress(), iris.device(), bytes, s),
                () -> ctx.verifier().sameBytes(src.deviceAddress(), dst.deviceAddress(j), bytes, "rank " + j + "'s dst vs src"),
                reps);
    }

    /** all_load / all_store: issuer i with every other rank at once; bytes counts all peers' data. */
    private void allPeers(RmaOp op, long bytes) {
        if (world < 2) {
            return;
        }
        int reps = options.repsFor(bytes);
        long stride = RmaKernels.slotStride(bytes);
        String kernel = op == RmaOp.ALL_LOAD ? "rma_all_load" : "rma_all_store";
        try (SymTensor src = ctx.freshData(bytes); SymTensor dst = ctx.buffer(stride * world)) {
            LaunchShape shape = kernels.allPeersShape(kernel, bytes, options.blocks, options.threads);
            long total = bytes * (world - 1);
            boolean load = op == RmaOp.ALL_LOAD;
            for (int i = 0; i < world; i++) {
                int issuer = i;
                point(op.id(), "iris", total, i, -1, dst,
                        () -> {
                            if (load) {
                                kernels.allLoad(dst.deviceAddress(), src, bytes, shape, ctx.stream());
                            } else {
                                kernels.allStore(dst, src.deviceAddress(), bytes, shape, ctx.stream());
                            }
                        },
                        () -> {
                            for (int p = 0; p < world; p++) {
                                if (p == issuer) {
                                    continue;
                                }
                                String c = load
                                        ? ctx.verifier().sameBytes(src.deviceAddress(p), dst.deviceAddress() + p * stride, bytes,
                                                "slot " + p + " vs rank " + p + "'s src")
                                        : ctx.verifier().sameBytes(src.deviceAddress(), dst.deviceAddress(p) + issuer * stride, bytes,
                                                "rank " + p + "'s slot " + issuer + " vs src");
                                if (!Verifier.OK.equals(c)) {
                                    return c;
                                }
                            }
                            return Verifier.OK;
                        }, reps);
            }
        }
    }

    /**
     * store_tiles: the issuer stores a rows x ld matrix of 2-byte elements into the peer tile by tile
     * (a GEMM epilogue's pattern), rows = bytes / (2 x ld) rounded down to whole tile rows; sizes
     * below one row of tiles are skipped. Compare with store at the same size.
     */
    private void storeTiles(long bytes) {
        long ld = options.tileLd;
        long rows = bytes / (2 * ld) / options.tileRows * options.tileRows;
        if (rows == 0) {
            return;
        }
        long moved = rows * ld * 2;
        int reps = options.repsFor(moved);
        int blocks = options.tileBlocks > 0 ? options.tileBlocks : kernels.multiprocessors();
        LaunchShape shape = LaunchShape.of(blocks, options.tileThreads);
        try (SymTensor src = ctx.freshData(moved); SymTensor dst = ctx.buffer(moved)) {
            ctx.forEachPair((i, j) -> point("store_tiles", "iris", moved, i, j, dst,
                    () -> kernels.storeTiles(dst, src.deviceAddress(), rows, ld, options.tileRows, options.tileCols, j, shape,
                            ctx.stream()),
                    () -> ctx.verifier().sameBytes(src.deviceAddress(), dst.deviceAddress(j), moved, "rank " + j + "'s matrix vs src"),
                    reps));
        }
    }

    /** local_copy (cudaMemcpyAsync) and local_copy_sm (rma_local_copy) on each rank in turn. */
    private void local(long bytes) {
        int reps = options.repsFor(bytes);
        try (SymTensor src = ctx.freshData(bytes); SymTensor dst = ctx.buffer(bytes)) {
            LaunchShape shape = kernels.copyShape("rma_local_copy", bytes, options.blocks, options.threads);
            for (int i = 0; i < world; i++) {
                Lockstep.Check same = () -> ctx.verifier().sameBytes(src.deviceAddress(), dst.deviceAddress(), bytes, "dst vs src");
                point("local_copy", "local", bytes, i, i, dst,
                        () -> Memcpy.deviceToDevice(dst.deviceAddress(), src.deviceAddress(), bytes, ctx.stream()), same, reps);
                point("local_copy_sm", "local", bytes, i, i, dst,
                        () -> kernels.localCopy(dst.deviceAddress(), src.deviceAddress(), bytes, shape, ctx.stream()), same, reps);
            }
        }
    }

    /** One timed point run by the issuer alone; every rank poisons its copy of dst first. */
    private void point(String op, String impl, long bytes, int issuer, int peer, SymTensor dst, Runnable body,
                       Lockstep.Check verify, int reps) {
        long number = ctx.nextPoint();
        Lockstep.Outcome o = ctx.lockstep().pair(issuer, peer, false,
                () -> {
                    ctx.poison(dst);
                    iris.synchronize();
                },
                () -> ctx.timer().run(options.warmup(), reps, r -> {}, r -> body.run(), true),
                null, verify);
        if (o != null) {
            ctx.record(number, Points.bandwidth(op, impl, bytes, issuer, peer, o));
        }
    }
}
