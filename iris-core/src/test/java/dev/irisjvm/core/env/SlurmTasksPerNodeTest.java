package dev.irisjvm.core.env;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

class SlurmTasksPerNodeTest {

    @Test
    void eachNodeReadsItsOwnEntry() {
        String value = "4(x2),2,3(x1)";
        int[] expected = {4, 4, 2, 3};
        for (int node = 0; node < expected.length; node++) {
            assertEquals(expected[node], SlurmTasksPerNode.onNode("SLURM_TASKS_PER_NODE", value, node), "node " + node);
        }
        assertEquals(8, SlurmTasksPerNode.onNode("SLURM_TASKS_PER_NODE", "8", 0));
    }

    @Test
    void errorsNameTheVariableAndTheFormExpected() {
        for (String bad : new String[] {"(x3)", "4(x)", "4,,2", "", "4(x2", "four"}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> SlurmTasksPerNode.onNode("SLURM_TASKS_PER_NODE", bad, 0));
            assertEquals("SLURM_TASKS_PER_NODE must be a list of counts such as 4, 4(x2) or 4(x2),2, got '" + bad + "'",
                    e.getMessage());
        }
        assertEquals("SLURM_TASKS_PER_NODE=4(x2) lists 2 nodes, so it has no count for node 2",
                assertThrows(IllegalArgumentException.class,
                        () -> SlurmTasksPerNode.onNode("SLURM_TASKS_PER_NODE", "4(x2)", 2)).getMessage());
        assertEquals("SLURM_TASKS_PER_NODE=4 lists 1 node, so it has no count for node 1",
                assertThrows(IllegalArgumentException.class,
                        () -> SlurmTasksPerNode.onNode("SLURM_TASKS_PER_NODE", "4", 1)).getMessage());
    }
}
