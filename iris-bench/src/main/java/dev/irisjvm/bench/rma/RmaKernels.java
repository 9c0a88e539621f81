package dev.irisjvm.bench.rma;

import dev.irisjvm.core.DType;
import dev.irisjvm.core.DeviceContext;
import dev.irisjvm.core.Iris;
import dev.irisjvm.core.SymTensor;
import dev.irisjvm.core.gpu.LaunchShape;
import dev.irisjvm.core.gpu.Stream;
import dev.irisjvm.core.internal.Kernel;
import dev.irisjvm.core.internal.KernelModule;
import dev.irisjvm.kernels.KernelLibrary;
import dev.irisjvm.runtime.abi.global.KernelAbi;
import dev.irisjvm.runtime.abi.iris_rma_bench_args;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The remote-memory-access microbenchmark kernels ({@code rma_bench.cu}): bandwidth (load, store,
 * all-peer load and store, local copy), atomics, message passing and ping-pong, plus the helpers a
 * timed run needs around them (a two-rank meeting, a launch gate, verification kernels).
 *
 * <p>Every launch is asynchronous on the stream given. Symmetric buffers are {@link SymTensor}s
 * (their address is translated to the peer inside the kernel); local buffers are plain device
 * addresses of this rank. Launch shapes are arguments, so a sweep can tune them; the
 * {@code ...Shape} methods give defaults sized from the payload and this GPU's SM count.
 *
 * <pre>{@code
 * try (Iris iris = Iris.init(); KernelLibrary lib = KernelLibrary.forClasspath();
 *      RmaKernels rma = new RmaKernels(iris, lib)) {
 *     long bytes = 64L << 20;
 *     SymTensor src = iris.heap().uniform(-1, 1, DType.F32, bytes / 4);
 *     SymTensor dst = iris.heap().empty(DType.F32, bytes / 4);
 *     iris.barrier();
 *     int peer = (iris.rank() + 1) % iris.worldSize();
 *     rma.load(dst.deviceAddress(), src, bytes, peer, rma.copyShape(bytes), iris.stream());  // dst = peer's src
 *     iris.synchronize();
 * }
 * }</pre>
 */
public final class RmaKernels implements AutoCloseable {
    /** Threads per block of the copy kernels unless the caller says otherwise. */
    public static final int DEFAULT_THREADS = 512;
    /** 16-byte words each thread of a copy kernel has in flight per pass (iris/abi/rma_bench.h). */
    public static final int VECS_IN_FLIGHT = KernelAbi.IRIS_RMA_BENCH_VECS_IN_FLIGHT;
    /** Atomics each thread of {@code rma_atomic} issues per pass. */
    public static final int ATOMICS_IN_FLIGHT = KernelAbi.IRIS_RMA_BENCH_ATOMICS_IN_FLIGHT;
    /** Every pointer handed to these kernels must be aligned to this (16-byte vector accesses). */
    public static final int ALIGNMENT = 16;

    // Hopper (compute capability 9.0) per-SM limits, for the resident-block count.
    private static final int REGISTERS_PER_SM = 65536;
    private static final int THREADS_PER_SM = 2048;
    private static final int BLOCKS_PER_SM = 32;
    private static final int REGISTER_ALLOCATION_UNIT = 256;  // per warp

    /** Atomic operations of {@code rma_atomic}; the codes are iris_rma_bench_atomic_op. */
    public enum AtomicOp {
        /** Relaxed system-scope add of 1 to a uint64 slot, result unused. */
        ADD_U64(KernelAbi.IRIS_RMA_BENCH_ATOMIC_ADD_U64, 8),
        /** Exchange on a uint64 slot; the old value is checked. */
        XCHG_U64(KernelAbi.IRIS_RMA_BENCH_ATOMIC_XCHG_U64, 8),
        /** Compare-and-swap on a uint64 slot; the old value is checked. */
        CAS_U64(KernelAbi.IRIS_RMA_BENCH_ATOMIC_CAS_U64, 8),
        /** Add of 1.0f to a float slot, result unused. */
        ADD_F32(KernelAbi.IRIS_RMA_BENCH_ATOMIC_ADD_F32, 4);

        private final int code;
        private final int slotBytes;

        AtomicOp(int code, int slotBytes) {
            this.code = code;
            this.slotBytes = slotBytes;
        }

        public int code() {
            return code;
        }

        /** Bytes of one slot. */
        public int slotBytes() {
            return slotBytes;
        }
    }

    private final Iris iris;
    private final KernelModule module;
    private final RmaArgs args;
    private final int rank;
    private final int world;
    private final int multiprocessors;
    private final Map<String, Integer> residentBlocks = new ConcurrentHashMap<>();

    /**
     * Loads {@code rma_bench} (into the current device) for this rank, in the checked variant when
     * {@code library} loads checked modules. The module ships in this jar, not in the library's:
     * it is benchmark-only code.
     */
    public RmaKernels(Iris iris, KernelLibrary library) {
        this.iris = iris;
        this.module = KernelModule.fromResource(RmaKernels.class, "rma_bench.fatbin", library.checked());
        this.args = new RmaArgs(iris.deviceContext().bytes());
        this.rank = iris.rank();
        this.world = iris.worldSize();
        this.multiprocessors = iris.deviceProperties().multiprocessorCount();
    }

    public int multiprocessors() {
        return multiprocessors;
    }

    // ---- launch shapes ---------------------------------------------------------------------------

    /** How many blocks of {@code threads} threads of this kernel fit on one SM at once. */
    public int residentBlocksPerSm(String kernel, int threads) {
        checkThreads(threads);
        return residentBlocks.computeIfAbsent(kernel + "/" + threads, key -> computeResidentBlocks(kernel, threads));
    }

    private int computeResidentBlocks(String kernel, int threads) {
        int registers = Math.max(1, module.kernel(kernel).attributes().registers());
        int perWarp = (registers * 32 + REGISTER_ALLOCATION_UNIT - 1) / REGISTER_ALLOCATION_UNIT * REGISTER_ALLOCATION_UNIT;
        int warpsPerBlock = (threads + 31) / 32;
        int byRegisters = (REGISTERS_PER_SM / perWarp) / warpsPerBlock;
        int byThreads = THREADS_PER_SM / threads;
        return Math.max(1, Math.min(BLOCKS_PER_SM, Math.min(byRegisters, byThreads)));
    }

    /**
     * Default shape of a copy kernel ({@code rma_load}, {@code rma_store}, {@code rma_local_copy}) for
     * {@code bytes}: enough blocks that each thread has a full pass of {@link #VECS_IN_FLIGHT} words,
     * at most as many as are resident on all SMs at once (a second wave would only add a tail).
     */
    public LaunchShape copyShape(long bytes) {
        return copyShape("rma_load", bytes, 0, DEFAULT_THREADS);
    }

    /** As {@link #copyShape(long)} for {@code kernel}, with {@code blocks} (0: derived) and {@code threads}. */
    public LaunchShape copyShape(String kernel, long bytes, int blocks, int threads) {
        checkThreads(threads);
        if (blocks < 0) {
            throw new IllegalArgumentException(label() + ": blocks must be >= 0 (0 = derived from the size), got " + blocks);
        }
        if (blocks > 0) {
            return LaunchShape.of(blocks, threads);
        }
        long perBlock = (long) threads * VECS_IN_FLIGHT * 16;
        long wanted = Math.max(1, (bytes + perBlock - 1) / perBlock);
        long resident = (long) multiprocessors * residentBlocksPerSm(kernel, threads);
        return LaunchShape.of((int) Math.min(wanted, resident), threads);
    }

    /** Default shape of the all-peer copies: per peer as {@link #copyShape}, at least one block per peer. */
    public LaunchShape allPeersShape(String kernel, long bytesPerPeer, int blocks, int threads) {
        int peers = world - 1;
        LaunchShape one = copyShape(kernel, bytesPerPeer * Math.max(1, peers), blocks, threads);
        return LaunchShape.of(Math.max(one.gridX(), peers), threads);
    }

    /** Default shape of {@code rma_atomic} for {@code ops} operations. */
    public LaunchShape atomicShape(long ops, int blocks, int threads) {
        checkThreads(threads);
        if (blocks > 0) {
            return LaunchShape.of(blocks, threads);
        }
        long perBlock = (long) threads * ATOMICS_IN_FLIGHT;
        long wanted = Math.max(1, (ops + perBlock - 1) / perBlock);
        long resident = (long) multiprocessors * residentBlocksPerSm("rma_atomic", threads);
        return LaunchShape.of((int) Math.min(wanted, resident), threads);
    }

    /**
     * Default shape of message passing for {@code bytes}: one channel (block) per pass of 512 threads
     * x {@link #VECS_IN_FLIGHT} words (64 KiB), at most one per SM; a block of at most 512 threads
     * and at least one warp, no wider than the message needs.
     */
    public LaunchShape messageShape(long bytes, int blocks, int threads) {
        if (threads == 0) {
            long words = Math.max(1, (bytes + 15) / 16);
            threads = (int) Math.min(DEFAULT_THREADS, (words + 31) / 32 * 32);
        }
        checkThreads(threads);
        if (blocks > 0) {
            return LaunchShape.of(blocks, threads);
        }
        long perBlock = (long) DEFAULT_THREADS * VECS_IN_FLIGHT * 16;
        return LaunchShape.of((int) Math.min(multiprocessors, Math.max(1, (bytes + perBlock - 1) / perBlock)), threads);
    }

    // ---- bandwidth -------------------------------------------------------------------------------

    /** dst (local) = rank {@code peer}'s copy of src, {@code bytes} bytes, pulled by this rank's SMs. */
    public synchronized void load(long dst, SymTensor src, long bytes, int peer, LaunchShape shape, Stream stream) {
        pull("rma_load", dst, src, bytes, peer, shape, stream);
    }

    /** rma_load or rma_load_bulk: dst (local) = rank {@code peer}'s copy of src. */
    private void pull(String kernel, long dst, SymTensor src, long bytes, int peer, LaunchShape shape, Stream stream) {
        checkPeer(peer, "peer");
        checkBytes(bytes);
        checkLocal(dst, "dst");
        checkSym(src, bytes, "src");
        launch(kernel, shape, stream, args.copy(dst, src.deviceAddress(), bytes, peer));
    }

    private static final int BULK_CHUNK = KernelAbi.IRIS_RMA_BENCH_BULK_CHUNK;
    /** Shared memory of one bulk-copy block: the stages' chunks, then an 8-byte mbarrier each (iris::bulk_smem_bytes). */
    public static final int BULK_SMEM_BYTES = KernelAbi.IRIS_RMA_BENCH_BULK_STAGES * (BULK_CHUNK + 8);
    private boolean bulkConfigured;

    /** Default shape of the bulk copies: a block per chunk, at most three per SM (their shared memory). */
    public LaunchShape bulkShape(long bytes, int blocks) {
        long chunks = Math.max(1, (bytes + BULK_CHUNK - 1) / BULK_CHUNK);
        int b = blocks > 0 ? blocks : (int) Math.min(chunks, 3L * multiprocessors);
        return LaunchShape.of(b, 128).withSharedBytes(BULK_SMEM_BYTES);
    }

    private void configureBulk() {
        if (!bulkConfigured) {
            module.kernel("rma_load_bulk").setMaxDynamicSharedBytes(BULK_SMEM_BYTES);
            module.kernel("rma_store_bulk").setMaxDynamicSharedBytes(BULK_SMEM_BYTES);
            bulkConfigured = true;
        }
    }

    /** As {@link #load}, through shared memory with Hopper bulk copies (cp.async.bulk). */
    public synchronized void loadBulk(long dst, SymTensor src, long bytes, int peer, LaunchShape shape, Stream stream) {
        configureBulk();
        pull("rma_load_bulk", dst, src, bytes, peer, shape, stream);
    }

    /** As {@link #store}, through shared memory with Hopper bulk copies (cp.async.bulk). */
    public synchronized void storeBulk(SymTensor dst, long src, long bytes, int peer, LaunchShape shape, Stream stream) {
        configureBulk();
        push("rma_store_bulk", dst, src, bytes, peer, shape, stream);
    }

    /** Rank {@code peer}'s copy of dst = src (local), pushed by this rank's SMs. */
    public synchronized void store(SymTensor dst, long src, long bytes, int peer, LaunchShape shape, Stream stream) {
        push("rma_store", dst, src, bytes, peer, shape, stream);
    }

    /** rma_store or rma_store_bulk: rank {@code peer}'s copy of dst = src (local). */
    private void push(String kernel, SymTensor dst, long src, long bytes, int peer, LaunchShape shape, Stream stream) {
        checkPeer(peer, "peer");
        checkBytes(bytes);
        checkSym(dst, bytes, "dst");
        checkLocal(src, "src");
        launch(kernel, shape, stream, args.copy(dst.deviceAddress(), src, bytes, peer));
    }

    /**
     * From every other rank p at once: dst + p * {@link #slotStride(long)} (local, world slots) =
     * rank p's copy of src. The grid is split among the peers, so it needs at least world - 1 blocks.
     */
    public synchronized void allLoad(long dst, SymTensor src, long bytes, LaunchShape shape, Stream stream) {
        checkAllPeers(shape);
        checkBytes(bytes);
        checkLocal(dst, "dst");
        checkSym(src, bytes, "src");
        launch("rma_all_load", shape, stream, args.allPeers(dst, src.deviceAddress(), bytes, slotStride(bytes)));
    }

    /** Into every other rank p at once: rank p's copy of dst + rank * {@link #slotStride(long)} = src (local). */
    public synchronized void allStore(SymTensor dst, long src, long bytes, LaunchShape shape, Stream stream) {
        checkAllPeers(shape);
        checkBytes(bytes);
        checkSym(dst, slotStride(bytes) * world, "dst (world slots)");
        checkLocal(src, "src");
        launch("rma_all_store", shape, stream, args.allPeers(dst.deviceAddress(), src, bytes, slotStride(bytes)));
    }

    /**
     * Rank {@code peer}'s dst matrix = src (local), rows x ld elements of 2 bytes, stored tile by tile
     * with {@code iris::put_tile} from a persistent grid (block b takes tiles b, b + blocks, ...), the
     * way a GEMM epilogue stores. rows must be a multiple of tileRows and ld of tileCols.
     */
    public synchronized void storeTiles(SymTensor dst, long src, long rows, long ld, int tileRows, int tileCols, int peer,
                                        LaunchShape shape, Stream stream) {
        checkPeer(peer, "peer");
        if (rows <= 0 || ld <= 0 || tileRows <= 0 || tileCols <= 0 || rows % tileRows != 0 || ld % tileCols != 0) {
            throw new IllegalArgumentException(label() + ": storeTiles needs rows (" + rows + ") a positive multiple of tileRows ("
                    + tileRows + ") and ld (" + ld + ") a positive multiple of tileCols (" + tileCols + ")");
        }
        if (tileCols % 8 != 0) {
            throw new IllegalArgumentException(label() + ": tileCols must be a multiple of 8 (16-byte rows), got " + tileCols);
        }
        checkSym(dst, Math.multiplyExact(rows, ld) * 2, "dst");
        checkLocal(src, "src");
        launch("rma_store_tiles", shape, stream, args.tiles(dst.deviceAddress(), src, rows, ld, tileRows, tileCols, peer));
    }

    /** Distance between the per-rank slots of {@link #allLoad} and {@link #allStore}: bytes rounded up to 16. */
    public static long slotStride(long bytes) {
        return (bytes + ALIGNMENT - 1) / ALIGNMENT * ALIGNMENT;
    }

    /** dst = src, both local: the SM copy baseline. */
    public synchronized void localCopy(long dst, long src, long bytes, LaunchShape shape, Stream stream) {
        checkBytes(bytes);
        checkLocal(dst, "dst");
        checkLocal(src, "src");
        launch("rma_local_copy", shape, stream, args.copy(dst, src, bytes, -1));
    }

    // ---- atomics ---------------------------------------------------------------------------------

    /** Writes the starting value of each of {@code ops} slots into rank {@code peer}'s copy of slots. */
    public synchronized void atomicInit(AtomicOp op, SymTensor slots, long ops, long seed, int peer, Stream stream) {
        checkPeer(peer, "peer");
        checkSlots(op, slots, ops);
        launch("rma_atomic_init", atomicShape(ops, 0, DEFAULT_THREADS), stream,
                args.atomics(slots.deviceAddress(), ops, op.code(), seed, 0, peer, 0));
    }

    /**
     * {@code ops} relaxed system-scope atomics on rank {@code peer}'s slots, generation
     * {@code generation} (1 for the first launch after {@link #atomicInit}, then 2, 3, ...). Fetch
     * results that are not what the generation implies are counted into {@code failures} (a local
     * uint64).
     */
    public synchronized void atomic(AtomicOp op, SymTensor slots, long ops, long seed, long generation, int peer,
                                    long failures, LaunchShape shape, Stream stream) {
        checkPeer(peer, "peer");
        checkSlots(op, slots, ops);
        if (generation < 1) {
            throw new IllegalArgumentException(label() + ": generation must be >= 1, got " + generation);
        }
        checkLocal(failures, "failures");
        launch("rma_atomic", shape, stream, args.atomics(slots.deviceAddress(), ops, op.code(), seed, generation, peer, failures));
    }

    /** Counts rank {@code peer}'s slots that do not hold their value after {@code generations} launches. */
    public synchronized void atomicCheck(AtomicOp op, SymTensor slots, long ops, long seed, long generations, int peer,
                                         long result, Stream stream) {
        checkPeer(peer, "peer");
        checkSlots(op, slots, ops);
        checkLocal(result, "result");
        launch("rma_atomic_check", atomicShape(ops, 0, DEFAULT_THREADS), stream,
                args.atomics(slots.deviceAddress(), ops, op.code(), seed, generations, peer, result));
    }

    // ---- message passing and ping-pong -------------------------------------------------------

    /**
     * Producer side: {@code iterations} messages (numbered seq0 + 1 ...) of {@code bytes} from
     * src (local) into rank {@code peer}'s landing buffer, one channel per block of {@code shape};
     * flags and acks hold one uint64 per channel (flags are the consumer's, acks this rank's).
     * {@code done} (local uint64) counts delivered and acknowledged messages.
     */
    public synchronized void messageProducer(SymTensor landing, long src, long bytes, SymTensor flags, SymTensor acks,
                                             long seq0, long iterations, int peer, long done, LaunchShape shape,
                                             Stream stream) {
        checkMessage(landing, bytes, flags, acks, seq0, iterations, peer, shape);
        checkLocal(src, "src");
        checkLocal(done, "done");
        launch("rma_mp_producer", shape, stream, args.message(landing.deviceAddress(), src, bytes, flags.deviceAddress(),
                acks.deviceAddress(), seq0, iterations, peer, done));
    }

    /**
     * Consumer side, on the rank {@code peer} sends to: waits for each message, decodes it into out
     * (local) and acknowledges it; words that differ between messages are added to the producer's
     * copy of {@code errors} (symmetric uint64). Same shape, seq0 and iterations as the producer.
     */
    /**
     * Producer side of message passing with the flags inline (LL): {@code landing} on the peer holds
     * 2 x {@code bytes} (a multiple of 4), zero before the first message; no separate flag.
     */
    public synchronized void messageProducerLl(SymTensor landing, long src, long bytes, SymTensor acks, long seq0,
                                               long iterations, int peer, long done, LaunchShape shape, Stream stream) {
        checkLl(landing, bytes, acks, seq0, iterations, peer, shape);
        checkLocal(src, "src");
        checkLocal(done, "done");
        launch("rma_mp_ll_producer", shape, stream, args.message(landing.deviceAddress(), src, bytes, 0, acks.deviceAddress(),
                seq0, iterations, peer, done));
    }

    /** Consumer side of {@link #messageProducerLl}; out (local) ends holding the payload. */
    public synchronized void messageConsumerLl(SymTensor landing, long out, long bytes, SymTensor acks, long seq0,
                                               long iterations, int peer, SymTensor errors, LaunchShape shape, Stream stream) {
        checkLl(landing, bytes, acks, seq0, iterations, peer, shape);
        checkLocal(out, "out");
        checkSym(errors, 8, "errors");
        launch("rma_mp_ll_consumer", shape, stream, args.message(landing.deviceAddress(), out, bytes, 0, acks.deviceAddress(),
                seq0, iterations, peer, errors.deviceAddress()));
    }

    private void checkLl(SymTensor landing, long bytes, SymTensor acks, long seq0, long iterations, int peer,
                         LaunchShape shape) {
        checkPeer(peer, "peer");
        checkBytes(bytes);
        if (bytes % 4 != 0) {
            throw new IllegalArgumentException(label() + ": inline-flag messages carry whole 4-byte words, got " + bytes + " bytes");
        }
        checkSym(landing, 2 * bytes, "landing (8 bytes per 4 payload bytes)");
        checkSym(acks, 8 * shape.gridX(), "acks (one uint64 per channel)");
        checkSequence(seq0, iterations, "iterations");
        if (seq0 + iterations >= (1L << 32)) {
            throw new IllegalArgumentException(label() + ": inline-flag sequence numbers must stay below 2^32, got up to "
                    + (seq0 + iterations));
        }
    }

    public synchronized void messageConsumer(SymTensor landing, long out, long bytes, SymTensor flags, SymTensor acks,
                                             long seq0, long iterations, int peer, SymTensor errors, LaunchShape shape,
                                             Stream stream) {
        checkMessage(landing, bytes, flags, acks, seq0, iterations, peer, shape);
        checkLocal(out, "out");
        checkSym(errors, 8, "errors");
        launch("rma_mp_consumer", shape, stream, args.message(landing.deviceAddress(), out, bytes, flags.deviceAddress(),
                acks.deviceAddress(), seq0, iterations, peer, errors.deviceAddress()));
    }

    /** {@code rounds} flag round trips with rank {@code peer} (one thread); done (local uint64) += completed rounds. */
    public synchronized void pingPong(SymTensor flag, long seq0, long rounds, int peer, boolean initiator, long done,
                                      Stream stream) {
        pingPong(flag, seq0, rounds, peer, initiator, done, false, stream);
    }

    /** As above; {@code relaxed} bounces relaxed flags (no release fence, no acquire), a pure handshake. */
    public synchronized void pingPong(SymTensor flag, long seq0, long rounds, int peer, boolean initiator, long done,
                                      boolean relaxed, Stream stream) {
        checkPeer(peer, "peer");
        checkSym(flag, 8, "flag");
        checkSequence(seq0, rounds, "rounds");
        checkLocal(done, "done");
        launch(relaxed ? "rma_ping_pong_relaxed" : "rma_ping_pong", LaunchShape.of(1, 32), stream,
                args.pingPong(flag.deviceAddress(), seq0, rounds, peer, initiator, done));
    }

    // ---- helpers around timed runs -----------------------------------------------------------

    /**
     * This rank and {@code peer} meet on the device: work queued after this on either rank starts only
     * once both reached it. {@code flags} holds {@link DeviceContext#MAX_RANKS} uint64 (zero at first);
     * both ranks pass the same increasing {@code value}s.
     */
    public synchronized void pairSync(SymTensor flags, long value, int peer, Stream stream) {
        checkPeer(peer, "peer");
        checkSym(flags, 8L * DeviceContext.MAX_RANKS, "flags");
        if (value < 1) {
            throw new IllegalArgumentException(label() + ": pairSync value must be >= 1, got " + value);
        }
        launch("rma_pair_sync", LaunchShape.of(1, 32), stream, args.meet(flags.deviceAddress(), value, peer));
    }

    /** Holds {@code stream} until the uint64 at {@code hostWord} (mapped host memory) reaches {@code value}. */
    public synchronized void gate(long hostWord, long value, Stream stream) {
        checkLocal(hostWord, "hostWord");
        launch("rma_gate", LaunchShape.of(1, 32), stream, args.meet(hostWord, value, -1));
    }

    /**
     * Compares {@code bytes} at a and b (device addresses as this process sees them; a peer's copy of a
     * symmetric buffer is {@code tensor.deviceAddress(peer)}). result (local, two uint64) must hold
     * {0, ~0} before: it receives {mismatched 16-byte words, byte offset of the first}.
     */
    public synchronized void compare(long a, long b, long bytes, long result, Stream stream) {
        checkBytes(bytes);
        checkLocal(a, "a");
        checkLocal(b, "b");
        checkLocal(result, "result");
        launch("rma_compare", copyShape("rma_compare", bytes, 0, DEFAULT_THREADS), stream, args.compare(a, b, bytes, result));
    }

    /** Checks out (local bf16) = sum over ranks of {@code in} (symmetric bf16), {@code count} elements; result as {@link #compare}. */
    public synchronized void checkAllReduceBf16(SymTensor in, long out, long count, long result, Stream stream) {
        if (in.dtype() != DType.BF16) {
            throw new IllegalArgumentException(label() + ": in must be BF16, got " + in.dtype());
        }
        checkSym(in, count * 2, "in");
        checkLocal(out, "out");
        checkLocal(result, "result");
        launch("rma_check_allreduce_bf16", copyShape("rma_check_allreduce_bf16", count * 2, 0, DEFAULT_THREADS), stream,
                args.allReduceCheck(in.deviceAddress(), out, count, result));
    }

    // ---- checks ----------------------------------------------------------------------------------

    private void launch(String name, LaunchShape shape, Stream stream, iris_rma_bench_args packed) {
        if (shape == null || stream == null) {
            throw new IllegalArgumentException(label() + ": " + name + ": shape and stream must not be null");
        }
        if (shape.gridY() != 1 || shape.gridZ() != 1 || shape.blockY() != 1 || shape.blockZ() != 1) {
            throw new IllegalArgumentException(label() + ": " + name + " takes a 1-D grid of 1-D blocks, got " + shape);
        }
        checkThreads(shape.blockX());
        Kernel k = module.kernel(name);
        k.launch(shape, stream, packed, false);
    }

    private void checkThreads(int threads) {
        if (threads < 32 || threads > 1024 || threads % 32 != 0) {
            throw new IllegalArgumentException(label() + ": threads per block must be a multiple of 32 in [32, 1024], got "
                    + threads);
        }
    }

    private void checkPeer(int peer, String name) {
        if (peer < 0 || peer >= world) {
            throw new IllegalArgumentException(label() + ": " + name + " " + peer + " is out of range [0, " + world + ")");
        }
        if (peer == rank) {
            throw new IllegalArgumentException(label() + ": " + name + " must be another rank, got this rank " + peer);
        }
    }

    private void checkAllPeers(LaunchShape shape) {
        if (world < 2) {
            throw new IllegalArgumentException(label() + ": all-peer copies need at least 2 ranks, world is " + world);
        }
        if (shape.gridX() < world - 1) {
            throw new IllegalArgumentException(label() + ": all-peer copies need at least one block per peer ("
                    + (world - 1) + "), got " + shape.gridX());
        }
    }

    private void checkBytes(long bytes) {
        if (bytes <= 0) {
            throw new IllegalArgumentException(label() + ": bytes must be positive, got " + bytes);
        }
    }

    private void checkLocal(long address, String name) {
        if (address == 0) {
            throw new IllegalArgumentException(label() + ": " + name + " is a null device address");
        }
        if (address % ALIGNMENT != 0) {
            throw new IllegalArgumentException(label() + ": " + name + " 0x" + Long.toHexString(address)
                    + " is not " + ALIGNMENT + "-byte aligned");
        }
    }

    private void checkSym(SymTensor t, long bytes, String name) {
        if (t == null) {
            throw new IllegalArgumentException(label() + ": " + name + " must not be null");
        }
        if (!t.isLive()) {
            throw new IllegalArgumentException(label() + ": " + name + " " + t + " was freed");
        }
        if (t.byteSize() < bytes) {
            throw new IllegalArgumentException(label() + ": " + name + " " + t + " has " + t.byteSize()
                    + " bytes, the operation needs " + bytes);
        }
        checkLocal(t.deviceAddress(), name);
    }

    private void checkSlots(AtomicOp op, SymTensor slots, long ops) {
        if (op == null) {
            throw new IllegalArgumentException(label() + ": atomic op must not be null");
        }
        if (ops <= 0) {
            throw new IllegalArgumentException(label() + ": ops must be positive, got " + ops);
        }
        checkSym(slots, Math.multiplyExact(ops, (long) op.slotBytes()), "slots");
    }

    private void checkSequence(long seq0, long count, String name) {
        if (seq0 < 0) {
            throw new IllegalArgumentException(label() + ": seq0 must be >= 0, got " + seq0);
        }
        if (count < 1) {
            throw new IllegalArgumentException(label() + ": " + name + " must be >= 1, got " + count);
        }
    }

    private void checkMessage(SymTensor landing, long bytes, SymTensor flags, SymTensor acks, long seq0, long iterations,
                              int peer, LaunchShape shape) {
        checkPeer(peer, "peer");
        checkBytes(bytes);
        checkSym(landing, bytes, "landing");
        long channels = shape.gridX();
        checkSym(flags, 8 * channels, "flags (one uint64 per channel)");
        checkSym(acks, 8 * channels, "acks (one uint64 per channel)");
        checkSequence(seq0, iterations, "iterations");
    }

    private String label() {
        return "rank " + rank;
    }

    /** The Iris instance these kernels serve. */
    public Iris iris() {
        return iris;
    }

    @Override
    public void close() {
        args.close();
        module.close();
    }
}
