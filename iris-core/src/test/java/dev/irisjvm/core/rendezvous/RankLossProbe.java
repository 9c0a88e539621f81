package dev.irisjvm.core.rendezvous;

import dev.irisjvm.core.env.RankEnvironment;
import java.time.Duration;

/**
 * One rank of {@link RankLossLauncherTest}'s jobs, started by the launcher: joins the rendezvous,
 * starts the watchdog (10 s timeout, so that only a process's end can explain a fast verdict), and
 * then either kills itself with SIGKILL (the victim, {@code args[0]}) or waits for the watchdog to
 * report a lost rank, printing {@code LOST <rank> <ms> <reason>} and exiting 0 (3 if none came).
 */
public final class RankLossProbe {
    private RankLossProbe() {}

    public static void main(String[] args) throws Exception {
        int victim = Integer.parseInt(args[0]);
        RankEnvironment env = RankEnvironment.fromEnvironment(System.getenv());
        RendezvousConfig config = new RendezvousConfig(env.rank(), env.worldSize(), env.masterAddr(), env.masterPort(),
                env.jobToken(), Duration.ofSeconds(30), 1 << 20);
        try (Rendezvous rdv = Rendezvous.connect(config);
             RankWatchdog watchdog = RankWatchdog.start(rdv, config, Duration.ofSeconds(10), loss -> { })) {
            rdv.barrier();
            if (env.rank() == victim) {
                System.out.println("VICTIM " + env.rank() + " pid " + ProcessHandle.current().pid());
                System.out.flush();
                Thread.sleep(300);  // the others are waiting by now
                new ProcessBuilder("kill", "-KILL", Long.toString(ProcessHandle.current().pid())).start().waitFor();
                Thread.sleep(60_000);
                System.exit(4);  // not reached: SIGKILL
            }
            long start = System.nanoTime();
            RankWatchdog.Loss loss = watchdog.awaitLoss(Duration.ofSeconds(20));
            if (loss == null) {
                System.out.println("NO LOSS");
                System.exit(3);
            }
            System.out.println("LOST " + loss.rank() + " " + (System.nanoTime() - start) / 1_000_000 + " " + loss.describe());
            System.out.flush();
        }
    }
}
