package dev.irisjvm.core.env;

import org.junit.jupiter.api.Test;

import java.util.HashMap;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class RankEnvironmentTest {

    private static final Map<String, String> IRIS = Map.of(
            "IRIS_RANK", "1", "IRIS_WORLD_SIZE", "2", "IRIS_LOCAL_RANK", "1", "IRIS_LOCAL_WORLD_SIZE", "2",
            "IRIS_MASTER_ADDR", "10.1.1.1", "IRIS_MASTER_PORT", "40000", "IRIS_JOB_TOKEN", "abc123");
    private static final Map<String, String> TORCHRUN = Map.of(
            "RANK", "5", "WORLD_SIZE", "8", "LOCAL_RANK", "1", "LOCAL_WORLD_SIZE", "4",
            "MASTER_ADDR", "node0", "MASTER_PORT", "29400");
    private static final Map<String, String> OPEN_MPI = Map.of(
            "OMPI_COMM_WORLD_RANK", "3", "OMPI_COMM_WORLD_SIZE", "4",
            "OMPI_COMM_WORLD_LOCAL_RANK", "1", "OMPI_COMM_WORLD_LOCAL_SIZE", "2");
    private static final Map<String, String> SLURM = Map.of(
            "SLURM_PROCID", "5", "SLURM_NTASKS", "6", "SLURM_LOCALID", "1",
            "SLURM_NTASKS_PER_NODE", "2(x3)", "SLURM_LAUNCH_NODE_IPADDR", "192.168.0.7");

    @Test
    void iris() {
        assertEquals(new RankEnvironment(1, 2, 1, 2, "10.1.1.1", 40000, "abc123", "IRIS"),
                RankEnvironment.fromEnvironment(IRIS));
    }

    @Test
    void irisDefaultsWhenOnlyRankAndWorldAreSet() {
        RankEnvironment env = RankEnvironment.fromEnvironment(Map.of("IRIS_RANK", "2", "IRIS_WORLD_SIZE", "3"));
        assertEquals(new RankEnvironment(2, 3, 2, 3, "127.0.0.1", 29500, "", "IRIS"), env);
        assertEquals(2, env.deviceIndex());
    }

    @Test
    void torchrun() {
        assertEquals(new RankEnvironment(5, 8, 1, 4, "node0", 29400, "", "torchrun"),
                RankEnvironment.fromEnvironment(TORCHRUN));
    }

    @Test
    void openMpiTakesMasterFromIrisOrTorchVariablesOrDefaults() {
        assertEquals(new RankEnvironment(3, 4, 1, 2, "127.0.0.1", 29500, "", "Open MPI"),
                RankEnvironment.fromEnvironment(OPEN_MPI));

        Map<String, String> env = new HashMap<>(OPEN_MPI);
        env.put("MASTER_ADDR", "m1");
        env.put("MASTER_PORT", "1111");
        assertEquals("m1", RankEnvironment.fromEnvironment(env).masterAddr());
        assertEquals(1111, RankEnvironment.fromEnvironment(env).masterPort());
        env.put("IRIS_MASTER_ADDR", "m2");
        env.put("IRIS_MASTER_PORT", "2222");
        env.put("IRIS_JOB_TOKEN", "t");
        assertEquals(new RankEnvironment(3, 4, 1, 2, "m2", 2222, "t", "Open MPI"), RankEnvironment.fromEnvironment(env));
    }

    @Test
    void slurmWithCompressedTasksPerNode() {
        assertEquals(new RankEnvironment(5, 6, 1, 2, "192.168.0.7", 29500, "", "Slurm"),
                RankEnvironment.fromEnvironment(SLURM));
    }

    @Test
    void slurmFallsBackToTasksPerNodeAndPrefersMasterAddr() {
        Map<String, String> env = new HashMap<>(SLURM);
        env.remove("SLURM_NTASKS_PER_NODE");
        env.put("SLURM_TASKS_PER_NODE", "4(x1),2");
        env.put("MASTER_ADDR", "head");
        RankEnvironment r = RankEnvironment.fromEnvironment(env);
        assertEquals(4, r.localWorldSize());
        assertEquals("head", r.masterAddr());
        assertEquals("Slurm", r.source());

        env.remove("SLURM_LAUNCH_NODE_IPADDR");
        env.remove("MASTER_ADDR");
        assertEquals("127.0.0.1", RankEnvironment.fromEnvironment(env).masterAddr());
    }

    @Test
    void slurmAllocationShellWithoutSrunIsASingleProcess() {
        RankEnvironment r = RankEnvironment.fromEnvironment(Map.of("SLURM_NTASKS", "4", "SLURM_TASKS_PER_NODE", "4"));
        assertEquals("single process", r.source());
    }

    @Test
    void singleProcessWhenNothingIsSet() {
        RankEnvironment r = RankEnvironment.fromEnvironment(Map.of("PATH", "/bin", "IRIS_JOB_TOKEN", "tok"));
        assertEquals(new RankEnvironment(0, 1, 0, 1, "127.0.0.1", 0, "tok", "single process"), r);
        assertTrue(r.isSingleProcess());
        assertEquals(new RankEnvironment(0, 1, 0, 1, "127.0.0.1", 0, "", "single process"),
                RankEnvironment.fromEnvironment(Map.of()));
    }

    @Test
    void blankValuesCountAsUnset() {
        assertEquals("single process", RankEnvironment.fromEnvironment(Map.of("IRIS_RANK", " ", "RANK", "")).source());
    }

    @Test
    void precedenceIrisThenTorchrunThenOpenMpiThenSlurm() {
        Map<String, String> all = new HashMap<>();
        all.putAll(SLURM);
        assertEquals("Slurm", RankEnvironment.fromEnvironment(all).source());
        all.putAll(OPEN_MPI);
        assertEquals("Open MPI", RankEnvironment.fromEnvironment(all).source());
        all.putAll(TORCHRUN);
        assertEquals("torchrun", RankEnvironment.fromEnvironment(all).source());
        all.putAll(IRIS);
        RankEnvironment r = RankEnvironment.fromEnvironment(all);
        assertEquals("IRIS", r.source());
        assertEquals(1, r.rank());
        assertEquals("10.1.1.1", r.masterAddr());
    }

    @Test
    void irisMasterVariablesOverrideTorchrunOnes() {
        Map<String, String> env = new HashMap<>(TORCHRUN);
        env.put("IRIS_MASTER_ADDR", "iris-host");
        assertEquals("iris-host", RankEnvironment.fromEnvironment(env).masterAddr());
        assertEquals(29400, RankEnvironment.fromEnvironment(env).masterPort());
    }

    @Test
    void partialFamilyNamesTheMissingVariable() {
        assertMessage(Map.of("IRIS_RANK", "0"), "IRIS_WORLD_SIZE is not set, but IRIS_RANK is");
        assertMessage(Map.of("IRIS_WORLD_SIZE", "2"), "IRIS_RANK is not set, but IRIS_WORLD_SIZE is");
        // A half-set IRIS family is an error even when a complete torchrun family is present.
        Map<String, String> mixed = new HashMap<>(TORCHRUN);
        mixed.put("IRIS_RANK", "0");
        assertMessage(mixed, "IRIS_WORLD_SIZE is not set, but IRIS_RANK is");
        assertMessage(Map.of("RANK", "0", "WORLD_SIZE", "2", "LOCAL_RANK", "0"),
                "LOCAL_WORLD_SIZE is not set, but RANK, WORLD_SIZE, LOCAL_RANK are");
        assertMessage(Map.of("OMPI_COMM_WORLD_RANK", "0", "OMPI_COMM_WORLD_SIZE", "2",
                "OMPI_COMM_WORLD_LOCAL_SIZE", "2"), "OMPI_COMM_WORLD_LOCAL_RANK is not set");
        assertMessage(Map.of("SLURM_PROCID", "0", "SLURM_LOCALID", "0", "SLURM_TASKS_PER_NODE", "2"),
                "SLURM_NTASKS is not set");
        assertMessage(Map.of("SLURM_PROCID", "0", "SLURM_NTASKS", "2", "SLURM_LOCALID", "0"),
                "SLURM_NTASKS_PER_NODE or SLURM_TASKS_PER_NODE is not set");
    }

    @Test
    void nonIntegersNameVariableAndValue() {
        assertMessage(Map.of("IRIS_RANK", "one", "IRIS_WORLD_SIZE", "2"), "IRIS_RANK must be an integer, got 'one'");
        assertMessage(Map.of("RANK", "0", "WORLD_SIZE", "2x"), "WORLD_SIZE must be an integer, got '2x'");
        assertMessage(with(IRIS, "IRIS_MASTER_PORT", "http"), "IRIS_MASTER_PORT must be an integer, got 'http'");
        assertMessage(with(TORCHRUN, "LOCAL_RANK", "1.0"), "LOCAL_RANK must be an integer, got '1.0'");
        assertMessage(with(SLURM, "SLURM_NTASKS_PER_NODE", "(x3)"),
                "SLURM_NTASKS_PER_NODE must start with a task count such as 2 or 2(x3), got '(x3)'");
    }

    @Test
    void rangesNameVariableAndValue() {
        assertMessage(Map.of("IRIS_RANK", "0", "IRIS_WORLD_SIZE", "0"), "IRIS_WORLD_SIZE must be >= 1, got 0");
        assertMessage(Map.of("IRIS_RANK", "2", "IRIS_WORLD_SIZE", "2"), "IRIS_RANK=2 is outside [0, IRIS_WORLD_SIZE=2)");
        assertMessage(Map.of("IRIS_RANK", "-1", "IRIS_WORLD_SIZE", "2"),
                "IRIS_RANK=-1 is outside [0, IRIS_WORLD_SIZE=2)");
        assertMessage(with(TORCHRUN, "LOCAL_RANK", "4"), "LOCAL_RANK=4 is outside [0, LOCAL_WORLD_SIZE=4)");
        assertMessage(with(TORCHRUN, "LOCAL_WORLD_SIZE", "0"), "LOCAL_WORLD_SIZE must be >= 1, got 0");
        assertMessage(with(TORCHRUN, "LOCAL_WORLD_SIZE", "9"), "LOCAL_WORLD_SIZE=9 exceeds WORLD_SIZE=8");
        assertMessage(with(IRIS, "IRIS_MASTER_PORT", "65536"), "IRIS_MASTER_PORT must be in 0..65535, got 65536");
        assertMessage(with(TORCHRUN, "MASTER_PORT", "-1"), "MASTER_PORT must be in 0..65535, got -1");
        assertEquals(0, RankEnvironment.fromEnvironment(with(IRIS, "IRIS_MASTER_PORT", "0")).masterPort());
    }

    @Test
    void constructorValidatesAndToStringHidesTheToken() {
        assertThrows(IllegalArgumentException.class, () -> new RankEnvironment(2, 2, 0, 1, "h", 1, "", "x"));
        assertThrows(IllegalArgumentException.class, () -> new RankEnvironment(0, 2, 1, 1, "h", 1, "", "x"));
        assertThrows(IllegalArgumentException.class, () -> new RankEnvironment(0, 1, 0, 1, "", 1, "", "x"));
        assertThrows(IllegalArgumentException.class, () -> new RankEnvironment(0, 1, 0, 1, "h", 70000, "", "x"));
        assertEquals("", new RankEnvironment(0, 1, 0, 1, "h", 1, null, "x").jobToken());

        String text = RankEnvironment.fromEnvironment(IRIS).toString();
        assertFalse(text.contains("abc123"), text);
        assertTrue(text.contains("rank=1") && text.contains("source=IRIS"), text);
    }

    @Test
    void currentReadsTheProcessEnvironment() {
        // Whatever this machine's environment holds, current() must read it the same way.
        Object expected;
        try {
            expected = RankEnvironment.fromEnvironment(System.getenv());
        } catch (IllegalArgumentException e) {
            expected = e.getMessage();
        }
        Object actual;
        try {
            actual = RankEnvironment.current();
        } catch (IllegalArgumentException e) {
            actual = e.getMessage();
        }
        assertEquals(expected, actual);
    }

    private static Map<String, String> with(Map<String, String> base, String name, String value) {
        Map<String, String> env = new HashMap<>(base);
        env.put(name, value);
        return env;
    }

    private static void assertMessage(Map<String, String> env, String expectedStart) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> RankEnvironment.fromEnvironment(env));
        assertTrue(e.getMessage().startsWith(expectedStart), () -> "message was: " + e.getMessage());
    }
}
