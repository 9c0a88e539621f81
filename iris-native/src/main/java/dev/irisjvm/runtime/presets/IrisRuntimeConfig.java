package dev.irisjvm.runtime.presets;

import org.bytedeco.javacpp.annotation.Platform;
import org.bytedeco.javacpp.annotation.Properties;
import org.bytedeco.javacpp.tools.Info;
import org.bytedeco.javacpp.tools.InfoMap;
import org.bytedeco.javacpp.tools.InfoMapper;

/**
 * JavaCPP configuration for {@code iris_runtime.h}: the build parses the header into
 * {@code dev.irisjvm.runtime.global.IrisRuntime} (functions and constants) and
 * {@code dev.irisjvm.runtime} (the structs and opaque handles), then compiles the JNI glue that
 * links {@code libiris}. This layer is private plumbing: the public API is iris-core.
 */
@Properties(
        value = @Platform(include = "iris_runtime.h", link = "iris"),
        target = "dev.irisjvm.runtime",
        global = "dev.irisjvm.runtime.global.IrisRuntime")
public class IrisRuntimeConfig implements InfoMapper {
    @Override
    public void map(InfoMap infoMap) {
        infoMap.put(new Info("IRIS_RUNTIME_H").cppTypes().annotations());
        // Opaque handles: the typedef'd pointer is the value, a pointer to it is an output slot.
        for (String handle : new String[] {"iris_stream", "iris_event", "iris_module", "iris_function", "iris_graph",
                "iris_rtc_program"}) {
            infoMap.put(new Info(handle).valueTypes(handle + "_s").pointerTypes("@ByPtrPtr " + handle + "_s"));
        }
    }
}
