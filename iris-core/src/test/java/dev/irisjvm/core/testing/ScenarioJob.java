package dev.irisjvm.core.testing;

import dev.irisjvm.core.Iris;
import dev.irisjvm.core.IrisConfig;

/**
 * The frame of a GPU scenario class's main on each rank of a job: starts Iris, hands it and the
 * run seed to the class's job, closes Iris and exits with the number of scenarios that failed, the
 * exit code the launcher reports.
 */
public final class ScenarioJob {
    private ScenarioJob() {}

    /** What a scenario class runs on a started Iris: its scenarios; returns how many failed. */
    @FunctionalInterface
    public interface Job {
        int run(Iris iris, long runSeed) throws Exception;
    }

    /** Runs {@code job} on an Iris started with {@code config}, then exits the process with the job's count. */
    public static void run(IrisConfig config, Job job) throws Exception {
        int failed;
        try (Iris iris = Iris.init(config)) {
            failed = job.run(iris, TestSeeds.runSeed(iris));
        }
        System.exit(failed);
    }
}
