package dev.irisjvm.core;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.irisjvm.core.env.RankEnvironment;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.function.IntFunction;
import org.junit.jupiter.api.Test;

/**
 * The README's multi-node command lines (torchrun, srun, mpirun: 2 nodes of 4 GPUs, hosts gpu03
 * and gpu04), each with the variables its launcher really sets for every rank: every rank reads
 * its place in the job, and the nodes and teams that init derives from them are the same whichever
 * launcher started the job.
 */
class MultiNodeLaunchersTest {
    static final String TORCHRUN = "torchrun --nnodes 2 --nproc-per-node 4 --node-rank $NODE --master-addr gpu03"
            + " --master-port 29500 --no-python java -cp app.jar com.example.Train";
    static final String SRUN = "srun --nodes 2 --ntasks-per-node 4 --gpus-per-node 4 java -cp app.jar com.example.Train";
    static final String MPIRUN = "mpirun -np 8 -H gpu03:4,gpu04:4 --map-by ppr:4:node -x NCCL_NVLS_ENABLE"
            + " -x IRIS_JOB_TOKEN -x IRIS_MASTER_ADDR=gpu03 java -cp app.jar com.example.Train";
    private static final String TOKEN = "0123456789abcdef0123456789abcdef";

    private static Map<String, String> torchrun(int rank) {
        Map<String, String> env = new HashMap<>(Map.of("RANK", "" + rank, "WORLD_SIZE", "8", "LOCAL_RANK", "" + rank % 4,
                "LOCAL_WORLD_SIZE", "4", "GROUP_RANK", "" + rank / 4, "GROUP_WORLD_SIZE", "2", "ROLE_RANK", "" + rank,
                "MASTER_ADDR", "gpu03", "MASTER_PORT", "29500", "TORCHELASTIC_RUN_ID", "none"));
        env.put("IRIS_JOB_TOKEN", TOKEN);
        return env;
    }

    private static Map<String, String> srun(int rank) {
        Map<String, String> env = new HashMap<>(Map.of("SLURM_PROCID", "" + rank, "SLURM_NTASKS", "8", "SLURM_LOCALID",
                "" + rank % 4, "SLURM_NODEID", "" + rank / 4, "SLURM_NNODES", "2", "SLURM_STEP_NUM_NODES", "2",
                "SLURM_STEP_TASKS_PER_NODE", "4(x2)", "SLURM_STEP_NODELIST", "gpu[03-04]", "SLURM_JOB_ID", "4242",
                "SLURM_STEP_ID", "0"));
        env.put("IRIS_JOB_TOKEN", TOKEN);
        return env;
    }

    private static Map<String, String> mpirun(int rank) {
        return Map.of("OMPI_COMM_WORLD_RANK", "" + rank, "OMPI_COMM_WORLD_SIZE", "8", "OMPI_COMM_WORLD_LOCAL_RANK",
                "" + rank % 4, "OMPI_COMM_WORLD_LOCAL_SIZE", "4", "OMPI_COMM_WORLD_NODE_RANK", "" + rank % 4,
                "IRIS_JOB_TOKEN", TOKEN, "IRIS_MASTER_ADDR", "gpu03", "NCCL_NVLS_ENABLE", "0");
    }

    private static void twoNodesOfFour(IntFunction<Map<String, String>> launcher, String source, String master, int port) {
        String[] keys = new String[8];
        String[] hosts = new String[8];
        RankEnvironment[] envs = new RankEnvironment[8];
        for (int r = 0; r < 8; r++) {
            envs[r] = RankEnvironment.fromEnvironment(launcher.apply(r));
            hosts[r] = r < 4 ? "gpu03" : "gpu04";
            keys[r] = NodeKey.of(launcher.apply(r), envs[r], hosts[r]);
            assertEquals(new RankEnvironment(r, 8, r % 4, 4, r / 4, 2, master, port, TOKEN, source), envs[r]);
        }
        for (int r = 0; r < 8; r++) {
            NodeLayout layout = NodeLayout.of(keys, hosts, r);
            assertEquals(2, layout.nodeCount(), source);
            assertEquals(r / 4, layout.nodeIndex(), source);
            int first = r / 4 * 4;
            assertArrayEquals(new int[] {first, first + 1, first + 2, first + 3}, layout.node().worldRanks(), source);
            assertEquals(r % 4, layout.node().index(), source);
            assertArrayEquals(new int[] {r % 4, r % 4 + 4}, layout.rail().worldRanks(), source);
            assertEquals(r / 4, layout.rail().index(), source);
        }
    }

    @Test
    void torchrunStartsTwoNodesOfFour() {
        // The rendezvous takes MASTER_PORT + 1: torchrun's own store holds MASTER_PORT.
        twoNodesOfFour(MultiNodeLaunchersTest::torchrun, RankEnvironment.SOURCE_TORCHRUN, "gpu03", 29501);
    }

    @Test
    void srunStartsTwoNodesOfFour() {
        twoNodesOfFour(MultiNodeLaunchersTest::srun, RankEnvironment.SOURCE_SLURM, "gpu03",
                RankEnvironment.SLURM_PORT_BASE + 4242 % RankEnvironment.SLURM_PORT_SPAN);
    }

    @Test
    void mpirunStartsTwoNodesOfFour() {
        twoNodesOfFour(MultiNodeLaunchersTest::mpirun, RankEnvironment.SOURCE_OPEN_MPI, "gpu03",
                RankEnvironment.DEFAULT_MASTER_PORT);
    }

    @Test
    void theReadmeShowsTheseCommandLines() throws IOException {
        Path dir = Path.of("").toAbsolutePath();
        while (dir != null && !Files.isRegularFile(dir.resolve("README.md"))) {
            dir = dir.getParent();
        }
        assertTrue(dir != null, "no README.md above " + Path.of("").toAbsolutePath());
        String readme = Files.readString(dir.resolve("README.md"), StandardCharsets.UTF_8);
        for (String line : new String[] {TORCHRUN, SRUN, MPIRUN}) {
            assertTrue(readme.contains(line), "README.md's multi-node section lacks: " + line);
        }
    }
}
