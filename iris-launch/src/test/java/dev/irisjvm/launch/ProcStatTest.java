package dev.irisjvm.launch;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

class ProcStatTest {

    @Test
    void fieldsCountFromTheLastParenthesis() {
        // A command name may hold spaces and ") ", as this one does.
        ProcStat stat = ProcStat.parse("4242 (a) b (c) S 1 4240 4241 0 -1 4194560 100 0 0 0");
        assertEquals(new ProcStat('S', 4241), stat);
        assertTrue(stat.isRunning());
        assertFalse(ProcStat.parse("7 (sh) Z 1 7 7 0").isRunning(), "a zombie does not run");
        assertNull(ProcStat.parse("garbage"));
        assertNull(ProcStat.parse("7 (sh) S 1 7"));
        assertNull(ProcStat.parse("7 (sh) S 1 7 x"));
    }

    @Test
    void readsThisProcess() {
        assumeTrue(ProcStat.AVAILABLE, "needs /proc (Linux)");
        ProcStat self = ProcStat.read(ProcessHandle.current().pid()).orElseThrow();
        assertTrue(self.isRunning());
        // 0 where the session's leader is outside this PID namespace, as in many containers.
        assertTrue(self.session() >= 0);
        assertTrue(ProcStat.read(Long.MAX_VALUE).isEmpty(), "no such process");
    }
}
