package dev.irisjvm.core.env;

import org.junit.jupiter.api.Test;

import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Each launcher family with the variables it really sets, and every way an environment can be wrong. */
class RankEnvironmentTest {

    private static final Map<String, String> IRIS = Map.of(
            "IRIS_RANK", "1", "IRIS_WORLD_SIZE", "2", "IRIS_LOCAL_RANK", "1", "IRIS_LOCAL_WORLD_SIZE", "2",
            "IRIS_MASTER_ADDR", "10.1.1.1", "IRIS_MASTER_PORT", "40000", "IRIS_JOB_TOKEN", "abc123");

    /** torchrun --nnodes 2 --nproc-per-node 4: the second worker of the second node's agent. */
    private static final Map<String, String> TORCHRUN = env(
            "RANK=5", "WORLD_SIZE=8", "LOCAL_RANK=1", "LOCAL_WORLD_SIZE=4", "GROUP_RANK=1", "GROUP_WORLD_SIZE=2",
            "ROLE_RANK=5", "ROLE_WORLD_SIZE=8", "ROLE_NAME=default", "MASTER_ADDR=node0", "MASTER_PORT=29400",
            "TORCHELASTIC_RUN_ID=none", "TORCHELASTIC_RESTART_COUNT=0", "TORCHELASTIC_USE_AGENT_STORE=True");

    /** srun -N 2 --ntasks-per-node 4 from a batch script on gpu03: task 5, on gpu04. */
    private static final Map<String, String> SRUN = env(
            "SLURM_JOB_ID=4242", "SLURM_STEP_ID=0", "SLURM_PROCID=5", "SLURM_NTASKS=8", "SLURM_LOCALID=1",
            "SLURM_NODEID=1", "SLURM_NNODES=2", "SLURM_JOB_NUM_NODES=2", "SLURM_STEP_NUM_NODES=2",
            "SLURM_STEP_NUM_TASKS=8", "SLURM_TASKS_PER_NODE=4(x2)", "SLURM_STEP_TASKS_PER_NODE=4(x2)",
            "SLURM_NTASKS_PER_NODE=4", "SLURM_STEP_NODELIST=gpu[03-04]", "SLURM_JOB_NODELIST=gpu[03-04]",
            "SLURM_NODELIST=gpu[03-04]", "SLURM_LAUNCH_NODE_IPADDR=10.0.0.1", "SLURMD_NODENAME=gpu04",
            "SLURM_CPUS_ON_NODE=64");

    /** mpirun -np 4 --map-by slot over two nodes with two slots each, MASTER_ADDR passed with -x. */
    private static final Map<String, String> OPEN_MPI = env(
            "OMPI_COMM_WORLD_RANK=3", "OMPI_COMM_WORLD_SIZE=4", "OMPI_COMM_WORLD_LOCAL_RANK=1",
            "OMPI_COMM_WORLD_LOCAL_SIZE=2", "OMPI_COMM_WORLD_NODE_RANK=1", "OMPI_UNIVERSE_SIZE=4",
            "PMIX_RANK=3", "PMIX_NAMESPACE=prterun-head-1234@1", "MASTER_ADDR=head");

    /** mpiexec (Hydra) -n 8 -ppn 4 on two hosts: rank 5. */
    private static final Map<String, String> HYDRA = env(
            "PMI_RANK=5", "PMI_SIZE=8", "PMI_FD=7", "MPI_LOCALRANKID=1", "MPI_LOCALNRANKS=4",
            "MPIR_CVAR_CH3_INTERFACE_HOSTNAME=n2", "MASTER_ADDR=n1");

    @Test
    void iris() {
        assertEquals(new RankEnvironment(1, 2, 1, 2, 0, 1, "10.1.1.1", 40000, "abc123", "IRIS"),
                RankEnvironment.fromEnvironment(IRIS));
    }

    @Test
    void irisDefaultsWhenOnlyRankAndWorldAreSet() {
        RankEnvironment env = RankEnvironment.fromEnvironment(Map.of("IRIS_RANK", "2", "IRIS_WORLD_SIZE", "3"));
        assertEquals(new RankEnvironment(2, 3, 2, 3, 0, 1, "127.0.0.1", 29500, "", "IRIS"), env);
        assertEquals(2, env.deviceIndex());
        assertFalse(env.isMultiNode());
    }

    @Test
    void irisOverSeveralNodesAsIrisRunSetsIt() {
        Map<String, String> node1 = env("IRIS_RANK=5", "IRIS_WORLD_SIZE=8", "IRIS_LOCAL_RANK=1",
                "IRIS_LOCAL_WORLD_SIZE=4", "IRIS_NODE_RANK=1", "IRIS_NODE_COUNT=2", "IRIS_MASTER_ADDR=gpu03",
                "IRIS_MASTER_PORT=29600", "IRIS_JOB_TOKEN=shared");
        RankEnvironment r = RankEnvironment.fromEnvironment(node1);
        assertEquals(new RankEnvironment(5, 8, 1, 4, 1, 2, "gpu03", 29600, "shared", "IRIS"), r);
        assertTrue(r.isMultiNode());

        assertMessage(without(node1, "IRIS_NODE_RANK"), "IRIS_NODE_RANK is not set, but IRIS_RANK=5, IRIS_WORLD_SIZE=8,"
                + " IRIS_LOCAL_RANK=1, IRIS_LOCAL_WORLD_SIZE=4, IRIS_NODE_COUNT=2 are");
        assertMessage(without(node1, "IRIS_NODE_COUNT"), "IRIS_NODE_COUNT is not set, but");
        assertMessage(with(node1, "IRIS_NODE_RANK", "2"), "IRIS_NODE_RANK=2 is outside [0, IRIS_NODE_COUNT=2)");
        assertMessage(with(node1, "IRIS_NODE_COUNT", "9"), "IRIS_NODE_COUNT must be in [1, IRIS_WORLD_SIZE=8], got 9");
        assertMessage(with(with(node1, "IRIS_NODE_COUNT", "1"), "IRIS_NODE_RANK", "0"),
                "IRIS_LOCAL_WORLD_SIZE=4 is less than IRIS_WORLD_SIZE=8, but IRIS_NODE_RANK=0 of IRIS_NODE_COUNT=1"
                        + " puts every rank on one node");
        assertMessage(with(node1, "IRIS_NODE_COUNT", "6"), "IRIS_LOCAL_WORLD_SIZE=4 of IRIS_WORLD_SIZE=8 leaves fewer"
                + " than one rank for each of the other 5 nodes");
        assertMessage(without(node1, "IRIS_MASTER_ADDR"), "IRIS_NODE_RANK=1 of IRIS_NODE_COUNT=2 puts the ranks on 2"
                + " nodes, but no IRIS_MASTER_ADDR or MASTER_ADDR names the rendezvous host");
    }

    @Test
    void irisWithoutNodeVariablesTakesNodesAsBlocks() {
        // Written by hand, or by an older iris-run: local size below world means several nodes.
        RankEnvironment r = RankEnvironment.fromEnvironment(env("IRIS_RANK=6", "IRIS_WORLD_SIZE=8",
                "IRIS_LOCAL_RANK=2", "IRIS_LOCAL_WORLD_SIZE=4", "IRIS_MASTER_ADDR=h"));
        assertEquals(1, r.nodeRank());
        assertEquals(2, r.nodeCount());
    }

    @Test
    void torchrunTwoNodesOfFour() {
        // The rendezvous takes the port above torchrun's store, which holds MASTER_PORT.
        assertEquals(new RankEnvironment(5, 8, 1, 4, 1, 2, "node0", 29401, "", "torchrun"),
                RankEnvironment.fromEnvironment(TORCHRUN));
    }

    @Test
    void torchrunNodeCountFromSizesAndPorts() {
        Map<String, String> noGroupWorld = without(TORCHRUN, "GROUP_WORLD_SIZE");
        assertEquals(2, RankEnvironment.fromEnvironment(noGroupWorld).nodeCount(), "WORLD_SIZE / LOCAL_WORLD_SIZE");
        Map<String, String> noGroup = without(noGroupWorld, "GROUP_RANK");
        assertEquals(1, RankEnvironment.fromEnvironment(noGroup).nodeRank(), "consecutive blocks of LOCAL_WORLD_SIZE");

        assertEquals(31000, RankEnvironment.fromEnvironment(with(TORCHRUN, "IRIS_MASTER_PORT", "31000")).masterPort());
        assertEquals(29501, RankEnvironment.fromEnvironment(without(TORCHRUN, "MASTER_PORT")).masterPort());
        assertMessage(with(TORCHRUN, "MASTER_PORT", "65535"), "MASTER_PORT=65535 leaves no port above it for the Iris"
                + " rendezvous (torchrun's store holds MASTER_PORT itself); set IRIS_MASTER_PORT to a free port");
        assertMessage(with(TORCHRUN, "GROUP_RANK", "2"), "GROUP_RANK=2 is outside [0, GROUP_WORLD_SIZE=2)");
        assertMessage(with(noGroupWorld, "GROUP_RANK", "2"),
                "GROUP_RANK=2 is outside [0, node count 2 (WORLD_SIZE / LOCAL_WORLD_SIZE))");
        assertMessage(without(TORCHRUN, "GROUP_RANK"), "GROUP_RANK is not set, but");
    }

    @Test
    void torchrunStandaloneOnOneNode() {
        RankEnvironment r = RankEnvironment.fromEnvironment(env("RANK=2", "WORLD_SIZE=4", "LOCAL_RANK=2",
                "LOCAL_WORLD_SIZE=4", "GROUP_RANK=0", "GROUP_WORLD_SIZE=1", "MASTER_ADDR=127.0.0.1",
                "MASTER_PORT=29500"));
        assertEquals(new RankEnvironment(2, 4, 2, 4, 0, 1, "127.0.0.1", 29501, "", "torchrun"), r);
    }

    @Test
    void srunTwoNodesOfFour() {
        // First host of the step, not the login node srun ran on; port from the job id.
        assertEquals(new RankEnvironment(5, 8, 1, 4, 1, 2, "gpu03", 20000 + 4242, "", "Slurm"),
                RankEnvironment.fromEnvironment(SRUN));
    }

    @Test
    void srunPortsDifferByJobAndStepAndStayBelowEphemeralPorts() {
        assertEquals(20000 + 4242 + 3, RankEnvironment.fromEnvironment(with(SRUN, "SLURM_STEP_ID", "3")).masterPort());
        assertEquals(20000 + 3456, RankEnvironment.fromEnvironment(with(SRUN, "SLURM_JOB_ID", "123456")).masterPort());
        assertEquals(20000 + 4242, RankEnvironment.fromEnvironment(with(SRUN, "SLURM_STEP_ID", "batch")).masterPort());
        for (String job : new String[] {"0", "11999", "12000", "999999999999"}) {
            int port = RankEnvironment.fromEnvironment(with(SRUN, "SLURM_JOB_ID", job)).masterPort();
            assertTrue(port >= RankEnvironment.SLURM_PORT_BASE && port < 32768, job + " -> " + port);
        }
        assertEquals(1234, RankEnvironment.fromEnvironment(with(SRUN, "MASTER_PORT", "1234")).masterPort());
        assertEquals(29500, RankEnvironment.fromEnvironment(without(SRUN, "SLURM_JOB_ID")).masterPort());
        assertMessage(with(SRUN, "SLURM_JOB_ID", "42_7"), "SLURM_JOB_ID must be a job number such as 123456, got '42_7'");
    }

    @Test
    void srunMasterAddressOrder() {
        assertEquals("head", RankEnvironment.fromEnvironment(with(SRUN, "MASTER_ADDR", "head")).masterAddr());
        assertEquals("gpu01", RankEnvironment.fromEnvironment(with(SRUN, "SLURM_STEP_NODELIST", "gpu[01-04,07],login1"))
                .masterAddr());
        assertEquals("10.0.0.1", RankEnvironment.fromEnvironment(without(SRUN, "SLURM_STEP_NODELIST")).masterAddr());
        assertMessage(without(without(SRUN, "SLURM_STEP_NODELIST"), "SLURM_LAUNCH_NODE_IPADDR"),
                "SLURM_NODEID=1 of SLURM_STEP_NUM_NODES=2 puts the ranks on 2 nodes, but no IRIS_MASTER_ADDR");
        assertMessage(with(SRUN, "SLURM_STEP_NODELIST", "gpu[03-04"), "SLURM_STEP_NODELIST=gpu[03-04: 'gpu[03-04' is not"
                + " a Slurm host list such as gpu[01-04,07],login1: '[' at position 3 is never closed");
    }

    @Test
    void srunWithUnevenTasksReadsItsOwnNodesCount() {
        // srun -n 10 over three nodes: 4, 4, 2 tasks. Task 9 is the second on the third node.
        Map<String, String> env = with(with(with(with(with(with(SRUN, "SLURM_PROCID", "9"), "SLURM_NTASKS", "10"),
                "SLURM_NODEID", "2"), "SLURM_STEP_NUM_NODES", "3"), "SLURM_STEP_TASKS_PER_NODE", "4(x2),2"),
                "SLURM_STEP_NODELIST", "gpu[03-05]");
        RankEnvironment r = RankEnvironment.fromEnvironment(env);
        assertEquals(new RankEnvironment(9, 10, 1, 2, 2, 3, "gpu03", 24242, "", "Slurm"), r);
        assertMessage(with(env, "SLURM_NODEID", "3"), "SLURM_NODEID=3 is outside [0, SLURM_STEP_NUM_NODES=3)");
        assertMessage(with(env, "SLURM_STEP_TASKS_PER_NODE", "4(x2)"),
                "SLURM_STEP_TASKS_PER_NODE=4(x2) lists 2 nodes, so it has no count for node 2");
    }

    @Test
    void slurmWithoutNodeVariablesTakesNodesAsBlocks() {
        Map<String, String> env = env("SLURM_PROCID=5", "SLURM_NTASKS=6", "SLURM_LOCALID=1",
                "SLURM_NTASKS_PER_NODE=2(x3)", "SLURM_LAUNCH_NODE_IPADDR=192.168.0.7");
        assertEquals(new RankEnvironment(5, 6, 1, 2, 2, 3, "192.168.0.7", 29500, "", "Slurm"),
                RankEnvironment.fromEnvironment(env));
        assertEquals(2, RankEnvironment.fromEnvironment(with(env, "SLURM_NTASKS_PER_NODE", "2")).localWorldSize());
    }

    @Test
    void slurmAllocationShellWithoutSrunIsASingleProcess() {
        RankEnvironment r = RankEnvironment.fromEnvironment(env("SLURM_JOB_ID=4242", "SLURM_NTASKS=8",
                "SLURM_NNODES=2", "SLURM_TASKS_PER_NODE=4(x2)", "SLURM_JOB_NODELIST=gpu[03-04]"));
        assertEquals("single process", r.source());
    }

    @Test
    void openMpiTwoNodesByBlocks() {
        // OMPI_COMM_WORLD_NODE_RANK ranks processes of every job on a node; it is no node index.
        assertEquals(new RankEnvironment(3, 4, 1, 2, 1, 2, "head", 29500, "", "Open MPI"),
                RankEnvironment.fromEnvironment(OPEN_MPI));
        assertEquals(1, RankEnvironment.fromEnvironment(with(OPEN_MPI, "OMPI_COMM_WORLD_NODE_RANK", "7")).nodeRank());
    }

    @Test
    void openMpiRoundRobinOverNodesIsRejected() {
        // mpirun --map-by node: rank 1 is the first rank of the second node.
        Map<String, String> env = with(with(OPEN_MPI, "OMPI_COMM_WORLD_RANK", "1"), "OMPI_COMM_WORLD_LOCAL_RANK", "0");
        assertMessage(env, "Open MPI names no node index, and OMPI_COMM_WORLD_RANK=1, OMPI_COMM_WORLD_SIZE=4,"
                + " OMPI_COMM_WORLD_LOCAL_RANK=0, OMPI_COMM_WORLD_LOCAL_SIZE=2 do not describe nodes as consecutive"
                + " blocks of equal size, the only numbering Iris can read nodes from; keep Open MPI's default mapping");
    }

    @Test
    void openMpiTakesMasterFromIrisOrTorchVariablesOrDefaults() {
        Map<String, String> oneNode = env("OMPI_COMM_WORLD_RANK=3", "OMPI_COMM_WORLD_SIZE=4",
                "OMPI_COMM_WORLD_LOCAL_RANK=3", "OMPI_COMM_WORLD_LOCAL_SIZE=4");
        assertEquals(new RankEnvironment(3, 4, 3, 4, 0, 1, "127.0.0.1", 29500, "", "Open MPI"),
                RankEnvironment.fromEnvironment(oneNode));

        Map<String, String> env = new HashMap<>(oneNode);
        env.put("MASTER_ADDR", "m1");
        env.put("MASTER_PORT", "1111");
        assertEquals("m1", RankEnvironment.fromEnvironment(env).masterAddr());
        assertEquals(1111, RankEnvironment.fromEnvironment(env).masterPort());
        env.put("IRIS_MASTER_ADDR", "m2");
        env.put("IRIS_MASTER_PORT", "2222");
        env.put("IRIS_JOB_TOKEN", "t");
        assertEquals(new RankEnvironment(3, 4, 3, 4, 0, 1, "m2", 2222, "t", "Open MPI"),
                RankEnvironment.fromEnvironment(env));
        assertMessage(without(OPEN_MPI, "MASTER_ADDR"), "node 1 of 2 (consecutive blocks of"
                + " OMPI_COMM_WORLD_LOCAL_SIZE=2) puts the ranks on 2 nodes, but no IRIS_MASTER_ADDR or MASTER_ADDR");
    }

    @Test
    void mpichAndIntelMpiHydra() {
        assertEquals(new RankEnvironment(5, 8, 1, 4, 1, 2, "n1", 29500, "", "MPICH/Intel MPI"),
                RankEnvironment.fromEnvironment(HYDRA));
        // Hydra inside an allocation starts its proxies with srun: the ranks inherit a proxy's task id.
        Map<String, String> underSlurm = new HashMap<>(HYDRA);
        underSlurm.putAll(env("SLURM_PROCID=1", "SLURM_NTASKS=2", "SLURM_LOCALID=0", "SLURM_NODEID=1",
                "SLURM_NNODES=2", "SLURM_TASKS_PER_NODE=1(x2)", "SLURM_STEP_NODELIST=n[1-2]", "SLURM_JOB_ID=77"));
        assertEquals(new RankEnvironment(5, 8, 1, 4, 1, 2, "n1", 29500, "", "MPICH/Intel MPI"),
                RankEnvironment.fromEnvironment(underSlurm));
        assertMessage(with(HYDRA, "MPI_LOCALRANKID", "4"), "MPI_LOCALRANKID=4 is outside [0, MPI_LOCALNRANKS=4)");
        assertMessage(without(HYDRA, "MPI_LOCALNRANKS"), "MPI_LOCALNRANKS is not set, but PMI_RANK=5, PMI_SIZE=8,"
                + " MPI_LOCALRANKID=1 are (a MPICH/Intel MPI launch sets PMI_RANK and PMI_SIZE, and the local rank and"
                + " local size as a pair)");
    }

    @Test
    void mpichStartedBySrunTakesLocalAndNodeFromSlurm() {
        // srun --mpi=pmi2 sets PMI_RANK and PMI_SIZE but none of MPICH's local variables.
        Map<String, String> env = new HashMap<>(SRUN);
        env.putAll(env("PMI_RANK=5", "PMI_SIZE=8", "PMI_FD=5", "PMI_JOBID=4242.0"));
        assertEquals(new RankEnvironment(5, 8, 1, 4, 1, 2, "gpu03", 24242, "", "MPICH/Intel MPI"),
                RankEnvironment.fromEnvironment(env));
        // The same without Slurm's variables: a world of 8 on one node, as PMI alone describes it.
        RankEnvironment alone = RankEnvironment.fromEnvironment(env("PMI_RANK=5", "PMI_SIZE=8"));
        assertEquals(new RankEnvironment(5, 8, 5, 8, 0, 1, "127.0.0.1", 29500, "", "MPICH/Intel MPI"), alone);
    }

    @Test
    void pmixAloneGivesNoWorldSizeAndSaysSo() {
        assertMessage(env("PMIX_RANK=3", "PMIX_NAMESPACE=prterun-head-99@1", "PMIX_SERVER_URI41=x"),
                "PMIX_RANK=3 is set, but PMIx gives the world size only through its client library (PMIx_Get of"
                        + " PMIX_JOB_SIZE), not in the environment");
        // Under srun --mpi=pmix and Open MPI's mpirun, their own variables give it.
        Map<String, String> srunPmix = new HashMap<>(SRUN);
        srunPmix.putAll(env("PMIX_RANK=5", "PMIX_NAMESPACE=slurm.pmix.4242.0"));
        assertEquals("Slurm", RankEnvironment.fromEnvironment(srunPmix).source());
        assertEquals("Open MPI", RankEnvironment.fromEnvironment(OPEN_MPI).source());
    }

    @Test
    void multiProcessEnvironmentsThatNoFamilyReadsAreErrors() {
        assertMessage(env("WORLD_SIZE=4"), "RANK is not set, but WORLD_SIZE=4 is (a torchrun launch sets RANK and"
                + " WORLD_SIZE, and the local rank and local size as a pair and the node rank and node count as a pair)");
        assertMessage(env("PMI_SIZE=4"), "PMI_RANK is not set, but PMI_SIZE=4 is");
        assertMessage(env("OMPI_COMM_WORLD_SIZE=2"), "OMPI_COMM_WORLD_RANK is not set, but OMPI_COMM_WORLD_SIZE=2 is");
        Map<String, String> filtered = without(without(without(SRUN, "SLURM_PROCID"), "SLURM_LOCALID"), "SLURM_NODEID");
        assertMessage(filtered, "SLURM_STEP_ID=0, SLURM_STEP_NUM_TASKS=8 say this process is one task of a Slurm step,"
                + " but SLURM_PROCID and SLURM_LOCALID are not set");
        assertMessage(env("SLURM_STEP_ID=2", "SLURM_NTASKS=4"), "SLURM_STEP_ID=2, SLURM_NTASKS=4 say");
        assertMessage(env("MV2_COMM_WORLD_SIZE=4"), "MV2_COMM_WORLD_SIZE=4 says this process is one of several started"
                + " by MVAPICH's mpirun_rsh, whose variables Iris does not read");
        assertMessage(env("JSM_NAMESPACE_SIZE=6"), "JSM_NAMESPACE_SIZE=6 says");

        // One task, or no step at all, is a world of 1.
        assertEquals("single process", RankEnvironment.fromEnvironment(env("SLURM_STEP_ID=0", "SLURM_NTASKS=1")).source());
        assertEquals("single process", RankEnvironment.fromEnvironment(env("MV2_COMM_WORLD_SIZE=1")).source());
    }

    @Test
    void singleProcessWhenNothingIsSet() {
        RankEnvironment r = RankEnvironment.fromEnvironment(Map.of("PATH", "/bin", "IRIS_JOB_TOKEN", "tok"));
        assertEquals(new RankEnvironment(0, 1, 0, 1, 0, 1, "127.0.0.1", 0, "tok", "single process"), r);
        assertTrue(r.isSingleProcess());
        assertEquals(new RankEnvironment(0, 1, 0, 1, "127.0.0.1", 0, "", "single process"),
                RankEnvironment.fromEnvironment(Map.of()));
    }

    @Test
    void blankValuesCountAsUnset() {
        assertEquals("single process", RankEnvironment.fromEnvironment(Map.of("IRIS_RANK", " ", "RANK", "")).source());
    }

    @Test
    void precedenceIrisThenTorchrunThenOpenMpiThenMpichThenSlurm() {
        Map<String, String> all = new HashMap<>(SRUN);
        assertEquals("Slurm", RankEnvironment.fromEnvironment(all).source());
        all.putAll(HYDRA);
        assertEquals("MPICH/Intel MPI", RankEnvironment.fromEnvironment(all).source());
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
        assertEquals(29401, RankEnvironment.fromEnvironment(env).masterPort());
    }

    @Test
    void partialFamilyNamesTheMissingVariable() {
        assertMessage(Map.of("IRIS_RANK", "0"), "IRIS_WORLD_SIZE is not set, but IRIS_RANK=0 is");
        assertMessage(Map.of("IRIS_WORLD_SIZE", "2"), "IRIS_RANK is not set, but IRIS_WORLD_SIZE=2 is");
        // A half-set IRIS family is an error even when a complete torchrun family is present.
        Map<String, String> mixed = new HashMap<>(TORCHRUN);
        mixed.put("IRIS_RANK", "0");
        assertMessage(mixed, "IRIS_WORLD_SIZE is not set, but IRIS_RANK=0 is");
        assertMessage(Map.of("RANK", "0", "WORLD_SIZE", "2", "LOCAL_RANK", "0"),
                "LOCAL_WORLD_SIZE is not set, but RANK=0, WORLD_SIZE=2, LOCAL_RANK=0 are");
        assertMessage(Map.of("OMPI_COMM_WORLD_RANK", "0", "OMPI_COMM_WORLD_SIZE", "2",
                "OMPI_COMM_WORLD_LOCAL_SIZE", "2"), "OMPI_COMM_WORLD_LOCAL_RANK is not set");
        assertMessage(Map.of("SLURM_PROCID", "0", "SLURM_LOCALID", "0", "SLURM_TASKS_PER_NODE", "2"),
                "SLURM_NTASKS is not set");
        assertMessage(Map.of("SLURM_PROCID", "0", "SLURM_NTASKS", "2", "SLURM_LOCALID", "0"),
                "SLURM_STEP_TASKS_PER_NODE or SLURM_TASKS_PER_NODE or SLURM_NTASKS_PER_NODE is not set");
        assertMessage(without(SRUN, "SLURM_NODEID"), "SLURM_NODEID is not set, but");
        assertMessage(without(without(TORCHRUN, "LOCAL_RANK"), "LOCAL_WORLD_SIZE"), "GROUP_RANK=1 of GROUP_WORLD_SIZE=2"
                + " puts the ranks on several nodes, but neither LOCAL_RANK nor LOCAL_WORLD_SIZE is set");
    }

    @Test
    void nonIntegersNameVariableAndValue() {
        assertMessage(Map.of("IRIS_RANK", "one", "IRIS_WORLD_SIZE", "2"), "IRIS_RANK must be an integer, got 'one'");
        assertMessage(Map.of("RANK", "0", "WORLD_SIZE", "2x"), "WORLD_SIZE must be an integer, got '2x'");
        assertMessage(with(IRIS, "IRIS_MASTER_PORT", "http"), "IRIS_MASTER_PORT must be an integer, got 'http'");
        assertMessage(with(TORCHRUN, "LOCAL_RANK", "1.0"), "LOCAL_RANK must be an integer, got '1.0'");
        assertMessage(with(TORCHRUN, "GROUP_RANK", "one"), "GROUP_RANK must be an integer, got 'one'");
        assertMessage(with(SRUN, "SLURM_STEP_TASKS_PER_NODE", "(x3)"),
                "SLURM_STEP_TASKS_PER_NODE must be a list of counts such as 4, 4(x2) or 4(x2),2, got '(x3)'");
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
        assertEquals("nodeRank must be in [0, 2), got 2", assertThrows(IllegalArgumentException.class,
                () -> new RankEnvironment(0, 4, 0, 2, 2, 2, "h", 1, "", "x")).getMessage());
        assertEquals("nodeCount must be in [1, 4], got 5", assertThrows(IllegalArgumentException.class,
                () -> new RankEnvironment(0, 4, 0, 1, 0, 5, "h", 1, "", "x")).getMessage());
        assertTrue(assertThrows(IllegalArgumentException.class,
                () -> new RankEnvironment(0, 4, 0, 4, 0, 2, "h", 1, "", "x")).getMessage()
                .startsWith("localWorldSize 4 of worldSize 4 does not fit nodeCount 2"));
        assertThrows(IllegalArgumentException.class, () -> new RankEnvironment(0, 4, 0, 2, 0, 1, "h", 1, "", "x"));

        // The form without nodes takes consecutive blocks.
        RankEnvironment blocks = new RankEnvironment(5, 8, 1, 4, "h", 1, "", "x");
        assertEquals(1, blocks.nodeRank());
        assertEquals(2, blocks.nodeCount());
        assertEquals(3, new RankEnvironment(4, 5, 0, 2, "h", 1, "", "x").nodeCount());

        String text = RankEnvironment.fromEnvironment(IRIS).toString();
        assertFalse(text.contains("abc123"), text);
        assertTrue(text.contains("rank=1") && text.contains("nodeRank=0, nodeCount=1") && text.contains("source=IRIS"),
                text);
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

    /** A map from {@code NAME=value} entries, in order. */
    private static Map<String, String> env(String... entries) {
        Map<String, String> env = new LinkedHashMap<>();
        for (String entry : entries) {
            int eq = entry.indexOf('=');
            env.put(entry.substring(0, eq), entry.substring(eq + 1));
        }
        return env;
    }

    private static Map<String, String> with(Map<String, String> base, String name, String value) {
        Map<String, String> env = new HashMap<>(base);
        env.put(name, value);
        return env;
    }

    private static Map<String, String> without(Map<String, String> base, String name) {
        Map<String, String> env = new HashMap<>(base);
        env.remove(name);
        return env;
    }

    private static void assertMessage(Map<String, String> env, String expectedStart) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> RankEnvironment.fromEnvironment(env));
        assertTrue(e.getMessage().startsWith(expectedStart), () -> "message was: " + e.getMessage());
    }
}
