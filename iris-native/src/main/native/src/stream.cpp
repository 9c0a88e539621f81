// stream.cpp: streams, events and graph capture.
#include "check.h"

using iris::handle_cast;

extern "C" {

int iris_stream_create(iris_stream* stream, int non_blocking) {
    iris::clear_error();
    IRIS_REQUIRE(stream, "iris_stream_create", "NULL output");
    gpuStream_t s = nullptr;
    IRIS_GPU_CHECK(gpuStreamCreateWithFlags(&s, non_blocking ? gpuStreamNonBlocking : gpuStreamDefault));
    *stream = handle_cast<iris_stream>(s);
    return IRIS_SUCCESS;
}

int iris_stream_destroy(iris_stream stream) {
    iris::clear_error();
    IRIS_GPU_CHECK(gpuStreamDestroy(handle_cast<gpuStream_t>(stream)));
    return IRIS_SUCCESS;
}

int iris_stream_synchronize(iris_stream stream) {
    iris::clear_error();
    IRIS_GPU_CHECK(gpuStreamSynchronize(handle_cast<gpuStream_t>(stream)));
    return IRIS_SUCCESS;
}

int iris_stream_query(iris_stream stream) {
    iris::clear_error();
    gpuError_t e = gpuStreamQuery(handle_cast<gpuStream_t>(stream));
    if (e == gpuErrorNotReady) {
        (void)gpuGetLastError();
        return IRIS_ERROR_NOT_READY;
    }
    if (e != gpuSuccess) return iris::fail_gpu("gpuStreamQuery(stream)", e);
    return IRIS_SUCCESS;
}

int iris_stream_wait_event(iris_stream stream, iris_event event) {
    iris::clear_error();
    IRIS_GPU_CHECK(gpuStreamWaitEvent(handle_cast<gpuStream_t>(stream), handle_cast<gpuEvent_t>(event), 0));
    return IRIS_SUCCESS;
}

int iris_event_create(iris_event* event, int enable_timing) {
    iris::clear_error();
    IRIS_REQUIRE(event, "iris_event_create", "NULL output");
    gpuEvent_t e = nullptr;
    IRIS_GPU_CHECK(gpuEventCreateWithFlags(&e, enable_timing ? gpuEventDefault : gpuEventDisableTiming));
    *event = handle_cast<iris_event>(e);
    return IRIS_SUCCESS;
}

int iris_event_destroy(iris_event event) {
    iris::clear_error();
    IRIS_GPU_CHECK(gpuEventDestroy(handle_cast<gpuEvent_t>(event)));
    return IRIS_SUCCESS;
}

int iris_event_record(iris_event event, iris_stream stream) {
    iris::clear_error();
    IRIS_GPU_CHECK(gpuEventRecord(handle_cast<gpuEvent_t>(event), handle_cast<gpuStream_t>(stream)));
    return IRIS_SUCCESS;
}

int iris_event_synchronize(iris_event event) {
    iris::clear_error();
    IRIS_GPU_CHECK(gpuEventSynchronize(handle_cast<gpuEvent_t>(event)));
    return IRIS_SUCCESS;
}

int iris_event_elapsed_ms(float* milliseconds, iris_event start, iris_event end) {
    iris::clear_error();
    IRIS_REQUIRE(milliseconds, "iris_event_elapsed_ms", "NULL output");
    IRIS_GPU_CHECK(gpuEventElapsedTime(milliseconds, handle_cast<gpuEvent_t>(start),
                                       handle_cast<gpuEvent_t>(end)));
    return IRIS_SUCCESS;
}

int iris_stream_begin_capture(iris_stream stream) {
    iris::clear_error();
    IRIS_GPU_CHECK(gpuStreamBeginCapture(handle_cast<gpuStream_t>(stream), gpuStreamCaptureModeThreadLocal));
    return IRIS_SUCCESS;
}

int iris_stream_is_capturing(iris_stream stream, int* capturing) {
    iris::clear_error();
    IRIS_REQUIRE(capturing, "iris_stream_is_capturing", "NULL output");
    gpuStreamCaptureStatus status = gpuStreamCaptureStatusNone;
    IRIS_GPU_CHECK(gpuStreamIsCapturing(handle_cast<gpuStream_t>(stream), &status));
    *capturing = status == gpuStreamCaptureStatusActive ? 1 : 0;
    return IRIS_SUCCESS;
}

int iris_stream_end_capture(iris_stream stream, iris_graph* graph) {
    iris::clear_error();
    IRIS_REQUIRE(graph, "iris_stream_end_capture", "NULL output");
    gpuGraph_t g = nullptr;
    IRIS_GPU_CHECK(gpuStreamEndCapture(handle_cast<gpuStream_t>(stream), &g));
    gpuGraphExec_t exec = nullptr;
    gpuError_t e = gpuGraphInstantiate(&exec, g);
    // The executable graph keeps what it needs; the template graph is not used again.
    (void)gpuGraphDestroy(g);
    if (e != gpuSuccess) return iris::fail_gpu("gpuGraphInstantiate(&exec, graph)", e);
    *graph = handle_cast<iris_graph>(exec);
    return IRIS_SUCCESS;
}

int iris_graph_launch(iris_graph graph, iris_stream stream) {
    iris::clear_error();
    IRIS_GPU_CHECK(gpuGraphLaunch(handle_cast<gpuGraphExec_t>(graph), handle_cast<gpuStream_t>(stream)));
    return IRIS_SUCCESS;
}

int iris_graph_destroy(iris_graph graph) {
    iris::clear_error();
    IRIS_GPU_CHECK(gpuGraphExecDestroy(handle_cast<gpuGraphExec_t>(graph)));
    return IRIS_SUCCESS;
}

}  // extern "C"
