package dev.irisjvm.core.internal;

import dev.irisjvm.runtime.global.IrisRuntime;
import dev.irisjvm.runtime.iris_rtc_program_s;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.bytedeco.javacpp.BytePointer;
import org.bytedeco.javacpp.IntPointer;
import org.bytedeco.javacpp.LongPointer;
import org.bytedeco.javacpp.PointerPointer;

/**
 * NVRTC through libiris ({@code iris_rtc_*} in iris_runtime.h), which finds and opens the library
 * itself. The explicit path, when one is set, is {@code IRIS_NVRTC_LIBRARY} or the system property
 * {@code iris.nvrtc.library} (the property wins); it is read at the first use, which loads NVRTC for
 * the rest of the process.
 *
 * <pre>{@code
 * Nvrtc.Result r = Nvrtc.compile("k.cu", source, List.of("-arch=sm_90a", "-std=c++17"));
 * if (r.compiled()) { byte[] cubin = r.code(); } else { System.err.println(r.log()); }
 * }</pre>
 */
public final class Nvrtc {
    public static final String LIBRARY_VARIABLE = "IRIS_NVRTC_LIBRARY";
    public static final String LIBRARY_PROPERTY = "iris.nvrtc.library";

    private Nvrtc() {}

    /** What the compiler said and, when it compiled, the machine code. */
    public record Result(boolean compiled, String log, byte[] code) {}

    /** NVRTC's version as 1000 * major + 10 * minor (13010 for 13.1), loading it first if needed. */
    public static int version() {
        NativeLibrary.ensureAvailable();
        String path = explicitPath();
        try (IntPointer version = new IntPointer(1)) {
            NativeCalls.check(IrisRuntime.iris_rtc_version(path == null ? "" : path, version),
                    "iris_rtc_version(" + (path == null ? "searching, no " + LIBRARY_VARIABLE + " set" : path) + ")");
            return version.get();
        }
    }

    /** The file NVRTC was loaded from. */
    public static String library() {
        version();
        try (BytePointer path = new BytePointer(4096)) {
            NativeCalls.check(IrisRuntime.iris_rtc_library(path, path.capacity()), "iris_rtc_library");
            String text = path.getString(StandardCharsets.UTF_8);
            int end = text.indexOf('\0');
            return end < 0 ? text : text.substring(0, end);
        }
    }

    /** Compiles one source; a compile error is a result with its log, a failing compiler an exception. */
    public static Result compile(String name, String source, List<String> options) {
        version();
        iris_rtc_program_s program = new iris_rtc_program_s();
        try (BytePointer sourceText = new BytePointer(source, StandardCharsets.UTF_8);
                BytePointer nameText = new BytePointer(name, StandardCharsets.UTF_8);
                PointerPointer<BytePointer> optionPointers = new PointerPointer<>(options.toArray(new String[0]));
                IntPointer compiled = new IntPointer(1)) {
            NativeCalls.check(IrisRuntime.iris_rtc_compile(program, sourceText, nameText, optionPointers, options.size(),
                            compiled),
                    "iris_rtc_compile(" + name + ")");
            try {
                String log = new String(read(program, true), StandardCharsets.UTF_8).replace("\0", "").strip();
                byte[] code = compiled.get() != 0 ? read(program, false) : null;
                return new Result(compiled.get() != 0, log, code);
            } finally {
                NativeCalls.check(IrisRuntime.iris_rtc_program_destroy(program), "iris_rtc_program_destroy(" + name + ")");
            }
        }
    }

    /** The program's log (NUL included) or code: its size first, then the bytes. */
    private static byte[] read(iris_rtc_program_s program, boolean log) {
        String function = log ? "iris_rtc_program_log" : "iris_rtc_program_code";
        try (LongPointer size = new LongPointer(1)) {
            NativeCalls.check(log ? IrisRuntime.iris_rtc_program_log(program, (BytePointer) null, 0, size)
                    : IrisRuntime.iris_rtc_program_code(program, null, 0, size), function);
            try (BytePointer bytes = new BytePointer(Math.max(1, size.get()))) {
                NativeCalls.check(log ? IrisRuntime.iris_rtc_program_log(program, bytes, size.get(), size)
                        : IrisRuntime.iris_rtc_program_code(program, bytes, size.get(), size), function);
                byte[] out = new byte[(int) size.get()];
                bytes.get(out);
                return out;
            }
        }
    }

    private static String explicitPath() {
        String property = System.getProperty(LIBRARY_PROPERTY);
        if (property != null && !property.isBlank()) {
            return property;
        }
        String variable = System.getenv(LIBRARY_VARIABLE);
        return variable == null || variable.isBlank() ? null : variable;
    }
}
