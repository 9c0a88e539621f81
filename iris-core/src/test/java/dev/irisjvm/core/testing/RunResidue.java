package dev.irisjvm.core.testing;

import com.fasterxml.jackson.annotation.JsonInclude;
import java.io.IOException;
import java.io.Reader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Properties;

/**
 * What a GPU test run left on its machine, as {@code run-gpu-tests} counts it around the run:
 * processes that carried the run's marker in their environment and were still alive once it
 * ended (every rank, launcher and child a test started; the script stops and names them), the
 * processes holding a GPU, and the GPUs' used memory, before and after. A run that leaves nothing
 * behind has no leftover process, as many GPU processes after as before, and the same memory used.
 * The GPU figures are null where {@code nvidia-smi} was not there to ask.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record RunResidue(int leftoverProcesses, Integer gpuProcessesBefore, Integer gpuProcessesAfter,
                         Long gpuMemoryUsedMiBBefore, Long gpuMemoryUsedMiBAfter) {

    /**
     * Reads the file the script writes ({@code leftover.processes}, {@code gpu.processes.before},
     * {@code gpu.processes.after}, {@code gpu.memory.used.mib.before}, {@code gpu.memory.used.mib.after};
     * an empty value is a figure nobody could read).
     */
    static RunResidue read(Path file) throws IOException {
        Properties p = new Properties();
        try (Reader r = Files.newBufferedReader(file)) {
            p.load(r);
        }
        String leftover = p.getProperty("leftover.processes", "").strip();
        if (leftover.isEmpty()) {
            throw new IOException(file + ": no leftover.processes count");
        }
        return new RunResidue(Integer.parseInt(leftover), integer(p, "gpu.processes.before"), integer(p, "gpu.processes.after"),
                mib(p, "gpu.memory.used.mib.before"), mib(p, "gpu.memory.used.mib.after"));
    }

    /** One run made in parts: leftovers add up; "before" is the first part's, "after" the last's. */
    static RunResidue merge(RunResidue first, RunResidue last, int leftoverProcesses) {
        return new RunResidue(leftoverProcesses, first.gpuProcessesBefore(), last.gpuProcessesAfter(),
                first.gpuMemoryUsedMiBBefore(), last.gpuMemoryUsedMiBAfter());
    }

    private static Integer integer(Properties p, String key) {
        String v = p.getProperty(key, "").strip();
        return v.isEmpty() ? null : Integer.valueOf(v);
    }

    private static Long mib(Properties p, String key) {
        String v = p.getProperty(key, "").strip();
        return v.isEmpty() ? null : Long.valueOf(v);
    }
}
