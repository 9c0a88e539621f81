package dev.irisjvm.launch;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

class RankWrapperTest {

    @TempDir
    Path tmp;

    @Test
    void withoutToolsTheCommandIsStartedAsItIs() {
        RankWrapper none = RankWrapper.none();
        assertEquals(List.of("java", "Main"), none.wrap(List.of("java", "Main")));
        assertEquals(List.of("sh"), none.inNewSession(List.of("sh")));
        assertEquals("none", none.describe());
    }

    @Test
    void onLinuxEachRankLeadsItsOwnSessionAndGetsSigtermWhenTheLauncherDies() {
        RankWrapper wrapper = RankWrapper.detect(System.getenv());
        assumeTrue(ProcStat.AVAILABLE && wrapper.startsSessions() && wrapper.setsParentDeathSignal(),
                "needs Linux with util-linux setsid and setpriv --pdeathsig");
        List<String> argv = wrapper.wrap(List.of("java", "Main"));
        assertEquals(List.of("--pdeathsig", "TERM", "--"), argv.subList(1, 4), argv::toString);
        assertEquals(List.of("-w", "--", "java", "Main"), argv.subList(5, 9), argv::toString);

        // What a rank sees: its session is its own pid, and setpriv, exec'd in its place, shows
        // the parent-death signal the rank's process carries.
        List<String> lines = Collections.synchronizedList(new ArrayList<>());
        LaunchResult result = Launcher.run(LaunchOptions.of(1, "sh", "-c",
                "set -- $(cut -d' ' -f6 /proc/$$/stat); echo \"session=$1 pid=$$\"; exec setpriv --dump"), lines::add);
        assertEquals(0, result.exitCode(), lines::toString);
        String session = lines.stream().filter(l -> l.startsWith("[0] session=")).findFirst().orElseThrow();
        String[] parts = session.substring("[0] ".length()).split(" ");
        assertEquals(parts[0].substring("session=".length()), parts[1].substring("pid=".length()), session);
        assertTrue(lines.contains("[0] Parent death signal: TERM"), lines::toString);
    }

    @Test
    void requireExecutableResolvesLikeExecvp() throws IOException {
        Path script = Files.writeString(tmp.resolve("tool"), "#!/bin/sh\n");
        Path plain = Files.writeString(tmp.resolve("plain"), "data");
        assumeTrue(script.toFile().setExecutable(true), "cannot mark a file executable here");
        Map<String, String> path = Map.of("PATH", "/nonexistent:" + tmp);

        assertDoesNotThrow(() -> RankWrapper.requireExecutable("tool", path));
        assertDoesNotThrow(() -> RankWrapper.requireExecutable(script.toString(), Map.of()));
        IOException missing = assertThrows(IOException.class, () -> RankWrapper.requireExecutable("no-such-tool", path));
        assertEquals("Cannot run program \"no-such-tool\": not found on PATH", missing.getMessage());
        assertThrows(IOException.class, () -> RankWrapper.requireExecutable("plain", path), "not executable");
        assertThrows(IOException.class, () -> RankWrapper.requireExecutable(plain.toString(), path));
        assertThrows(IOException.class, () -> RankWrapper.requireExecutable(tmp.toString(), path), "a directory");
    }
}
