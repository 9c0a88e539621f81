package dev.irisjvm.bench.rma;

import dev.irisjvm.core.DeviceContext;
import dev.irisjvm.core.SymTensor;
import dev.irisjvm.core.gpu.LaunchShape;

/**
 * Two-sided latency points, where both ranks of the pair run a kernel:
 *
 * <ul>
 *   <li>message_passing: the issuer (producer) puts a message into the peer with {@code iris::put}
 *       semantics and signals a sequence number (release); the peer (consumer) waits for it
 *       ({@code iris::wait_until}, acquire), decodes the message into a local buffer and acks. Many
 *       messages per launch; the time recorded is per message (message + consume + ack).
 *   <li>ping_pong: one thread per rank bounces a flag; the time recorded is one round trip.
 * </ul>
 *
 * Before each timed repetition the two ranks meet on the device ({@code rma_pair_sync}), so the
 * host launch skew between the two processes stays outside the events.
 *
 * <pre>{@code
 * new MessageBench(ctx).run(RmaOp.PING_PONG);
 * }</pre>
 */
public final class MessageBench {
    /** The payload a ping-pong round carries: the flag itself. */
    static final long FLAG_BYTES = 8;

    private final SweepContext ctx;
    private final RmaKernels kernels;
    private final SweepOptions options;

    public MessageBench(SweepContext ctx) {
        this.ctx = ctx;
        this.kernels = ctx.kernels();
        this.options = ctx.options();
    }

    public void run(RmaOp op) {
        switch (op) {
            case MESSAGE_PASSING -> {
                for (long bytes : options.messageSizes()) {
                    messagePassing(bytes, false);
                }
                for (long bytes : options.messageSizes()) {
                    messagePassing(bytes, true);
                }
            }
            case PING_PONG -> pingPong();
            default -> throw new IllegalArgumentException("not a message op: " + op);
        }
    }

    /** A device-side meeting of two ranks before each repetition, with its own flags. */
    private final class PairMeeting implements AutoCloseable {
        private final SymTensor flags = ctx.counters(DeviceContext.MAX_RANKS);
        private long value;

        void meet(int peer) {
            kernels.pairSync(flags, ++value, peer, ctx.stream());
        }

        @Override
        public void close() {
            flags.close();
        }
    }

    /** Put + release flag ("message_passing"), or flags inline in every 8-byte word ("message_passing_ll"). */
    private void messagePassing(long bytes, boolean ll) {
        int reps = options.repsFor(bytes);
        long iterations = options.messageIterations(bytes);
        long launches = options.warmup() + reps;
        LaunchShape shape = kernels.messageShape(bytes, options.mpBlocks, options.mpThreads);
        long channels = shape.gridX();
        try (SymTensor src = ctx.freshData(bytes); SymTensor landing = ctx.buffer(ll ? 2 * bytes : bytes);
             SymTensor out = ctx.buffer(bytes)) {
            ctx.forEachPair((i, j) -> {
                int producer = i;
                int consumer = j;
                long number = ctx.nextPoint();
                try (SymTensor flags = ctx.counters(channels); SymTensor acks = ctx.counters(channels);
                     SymTensor errors = ctx.counters(1); SymTensor done = ctx.counters(1); PairMeeting meeting = new PairMeeting()) {
                    Lockstep.Outcome o = ctx.lockstep().pair(i, j, true,
                            () -> {
                                if (ll) {
                                    ctx.zero(landing);  // sequence numbers start at 1 over a zeroed landing area
                                } else {
                                    ctx.poison(landing);
                                }
                                ctx.poison(out);
                                ctx.iris().synchronize();
                            },
                            () -> ctx.timer().run(options.warmup(), reps, r -> meeting.meet(consumer),
                                    r -> {
                                        if (ll) {
                                            kernels.messageProducerLl(landing, src.deviceAddress(), bytes, acks,
                                                    r * iterations, iterations, consumer, done.deviceAddress(), shape, ctx.stream());
                                        } else {
                                            kernels.messageProducer(landing, src.deviceAddress(), bytes, flags, acks,
                                                    r * iterations, iterations, consumer, done.deviceAddress(), shape, ctx.stream());
                                        }
                                    },
                                    true),
                            () -> ctx.timer().run(options.warmup(), reps, r -> meeting.meet(producer),
                                    r -> {
                                        if (ll) {
                                            kernels.messageConsumerLl(landing, out.deviceAddress(), bytes, acks,
                                                    r * iterations, iterations, producer, errors, shape, ctx.stream());
                                        } else {
                                            kernels.messageConsumer(landing, out.deviceAddress(), bytes, flags, acks,
                                                    r * iterations, iterations, producer, errors, shape, ctx.stream());
                                        }
                                    },
                                    false),
                            () -> {
                                StringBuilder c = new StringBuilder();
                                long delivered = Verifier.counter(done);
                                long expected = launches * iterations * channels;
                                if (delivered != expected) {
                                    c.append(delivered).append(" of ").append(expected).append(" channel messages acknowledged");
                                }
                                long stale = Verifier.counter(errors);
                                if (stale != 0) {
                                    c.append(c.length() == 0 ? "" : "; ").append(stale)
                                            .append(" words differed between consecutive messages (stale or torn data)");
                                }
                                String same = ctx.verifier().sameBytes(src.deviceAddress(), out.deviceAddress(consumer), bytes,
                                        "rank " + consumer + "'s decoded message vs src");
                                if (!Verifier.OK.equals(same)) {
                                    c.append(c.length() == 0 ? "" : "; ").append(same);
                                }
                                return c.length() == 0 ? Verifier.OK : c.toString();
                            });
                    if (o != null) {
                        ctx.record(number, Points.perMessage(ll ? "message_passing_ll" : "message_passing", bytes, i, j, iterations, true, o));
                    }
                }
            });
        }
    }

    private void pingPong() {
        pingPong(false);
        pingPong(true);
    }

    /** Release/acquire flags ("ping_pong") or relaxed ones ("ping_pong_relaxed"). */
    private void pingPong(boolean relaxed) {
        int reps = options.repsFor(FLAG_BYTES);
        long rounds = options.ppRounds;
        long expected = (options.warmup() + reps) * rounds;
        ctx.forEachPair((i, j) -> {
            int initiator = i;
            int responder = j;
            long number = ctx.nextPoint();
            try (SymTensor flag = ctx.counters(1); SymTensor done = ctx.counters(1); PairMeeting meeting = new PairMeeting()) {
                Lockstep.Outcome o = ctx.lockstep().pair(i, j, true, null,
                        () -> ctx.timer().run(options.warmup(), reps, r -> meeting.meet(responder),
                                r -> kernels.pingPong(flag, r * rounds, rounds, responder, true, done.deviceAddress(), relaxed,
                                        ctx.stream()),
                                true),
                        () -> {
                            ctx.timer().run(options.warmup(), reps, r -> meeting.meet(initiator),
                                    r -> kernels.pingPong(flag, r * rounds, rounds, initiator, false, done.deviceAddress(),
                                            relaxed, ctx.stream()), false);
                            long answered = Verifier.counter(done);
                            if (answered != expected) {
                                throw new IllegalStateException("responder completed " + answered + " of " + expected + " rounds");
                            }
                        },
                        () -> {
                            long completed = Verifier.counter(done);
                            return completed == expected ? Verifier.OK
                                    : "initiator completed " + completed + " of " + expected + " rounds";
                        });
                if (o != null) {
                    ctx.record(number, Points.perMessage(relaxed ? "ping_pong_relaxed" : "ping_pong", FLAG_BYTES, i, j, rounds, false, o));
                }
            }
        });
    }
}
