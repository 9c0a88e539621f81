package dev.irisjvm.core.gpu;

import dev.irisjvm.core.internal.NativeCalls;
import dev.irisjvm.runtime.global.IrisRuntime;
import dev.irisjvm.runtime.iris_graph_s;

/**
 * Stream work captured once and replayed with one launch.
 *
 * <pre>{@code
 * s.beginCapture();
 * iris.barrier(s);
 * try (CudaGraph g = s.endCapture()) {
 *     for (int i = 0; i < 100; i++) g.launch(s);
 * }
 * }</pre>
 */
public final class CudaGraph extends NativeResource {
    private final iris_graph_s handle;

    private CudaGraph(iris_graph_s handle) {
        this.handle = handle;
    }

    static CudaGraph endCapture(Stream stream) {
        iris_graph_s h = new iris_graph_s();
        NativeCalls.check(IrisRuntime.iris_stream_end_capture(stream.handle(), h), "iris_stream_end_capture");
        return new CudaGraph(h);
    }

    public void launch(Stream stream) {
        ensureOpen();
        NativeCalls.check(IrisRuntime.iris_graph_launch(handle, stream.handle()), "iris_graph_launch");
    }

    @Override
    protected String describe() {
        return "graph 0x" + Long.toHexString(handle.address());
    }

    @Override
    protected void release() {
        NativeCalls.check(IrisRuntime.iris_graph_destroy(handle), "iris_graph_destroy");
    }
}
