/**
 * Iris's Java API: join a multi-GPU job, allocate symmetric tensors, and reach other ranks' tiles.
 *
 * <pre>{@code
 * try (Iris iris = Iris.init()) {
 *     SymTensor buffer = iris.heap().zeros(DType.F32, 4096);
 *     buffer.whole().on((iris.rank() + 1) % iris.worldSize()).storeRemote(buffer.whole());
 *     iris.barrier();
 * }
 * }</pre>
 *
 * Exported: {@code dev.irisjvm.core} (Iris, IrisConfig, SymmetricHeap, SymTensor, Tile, RemoteTile,
 * DType, the exceptions), {@code dev.irisjvm.core.gpu} (streams, events, graphs, devices) and
 * {@code dev.irisjvm.core.env} (where a process sits in its job, as its launcher says).
 * {@code dev.irisjvm.core.internal} (native calls, kernel launching, memory copies) is for
 * iris-kernels, and iris-bench, which launches kernels of its own; the allocator and the
 * rendezvous are not exported.
 */
module dev.irisjvm.core {
    requires dev.irisjvm.runtime;
    // RankVariables' names only: constants, compiled in, so iris-launch is not needed at run time.
    requires static dev.irisjvm.launch;
    requires org.bytedeco.javacpp;
    requires org.slf4j;

    exports dev.irisjvm.core;
    exports dev.irisjvm.core.env;
    exports dev.irisjvm.core.gpu;
    exports dev.irisjvm.core.internal to dev.irisjvm.kernels, dev.irisjvm.bench;
}
