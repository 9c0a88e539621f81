package dev.irisjvm.core.rendezvous;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * The join handshake's cryptography: fresh nonces, and HMAC-SHA256 proofs that a side holds
 * the job's secret. The exchange (frames in {@link FrameCodec}) is
 * <pre>
 *   member -&gt; rank 0   join       magic, version, rank, worldSize, memberNonce
 *   rank 0 -&gt; member   challenge  rootNonce
 *   member -&gt; rank 0   proof      HMAC(secret, "member" | memberNonce | rootNonce | rank | worldSize)
 *   rank 0 -&gt; member   accept     HMAC(secret, "rank 0" | memberNonce | rootNonce | rank | worldSize)
 * </pre>
 * Both nonces are fresh, so no proof can be replayed on another connection; the labels differ,
 * so neither side's proof serves as the other's; rank and world size are covered, so a proof
 * cannot be moved to another claim. The member proves first: a stranger learns no value keyed
 * by the secret that it could test guesses against offline. Proofs are compared in constant
 * time. The secret itself never crosses the wire.
 *
 * <p>Not thread-safe; every rank and every hub has its own.
 */
final class Handshake {
    static final int NONCE_BYTES = 32;
    static final int PROOF_BYTES = 32;

    private static final String ALGORITHM = "HmacSHA256";
    private static final byte[] MEMBER_LABEL = "iris-rendezvous-2 member proof".getBytes(StandardCharsets.UTF_8);
    private static final byte[] ROOT_LABEL = "iris-rendezvous-2 rank 0 proof".getBytes(StandardCharsets.UTF_8);

    private final Mac mac;
    private final SecureRandom random;

    /**
     * Sets up the MAC and draws a first nonce now: the random source opens its device on first
     * use, and rank 0 must not find that out only once a flood of connections has used up the
     * process's file descriptors.
     */
    Handshake(JobSecret secret) {
        try {
            mac = Mac.getInstance(ALGORITHM);
            mac.init(new SecretKeySpec(secret.key(), ALGORITHM));
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("every Java platform has " + ALGORITHM, e);
        }
        random = new SecureRandom();
        nonce();
    }

    byte[] nonce() {
        byte[] nonce = new byte[NONCE_BYTES];
        random.nextBytes(nonce);
        return nonce;
    }

    /** What a member sends to show it holds the secret. */
    byte[] memberProof(byte[] memberNonce, byte[] rootNonce, int rank, int worldSize) {
        return proof(MEMBER_LABEL, memberNonce, rootNonce, rank, worldSize);
    }

    /** What rank 0 sends back to show it holds the secret too. */
    byte[] rootProof(byte[] memberNonce, byte[] rootNonce, int rank, int worldSize) {
        return proof(ROOT_LABEL, memberNonce, rootNonce, rank, worldSize);
    }

    /** Constant time, so that timing does not reveal how much of a guessed proof was right. */
    static boolean matches(byte[] expected, byte[] received) {
        return MessageDigest.isEqual(expected, received);
    }

    private byte[] proof(byte[] label, byte[] memberNonce, byte[] rootNonce, int rank, int worldSize) {
        // Fixed-length fields after a fixed label: no two claims share an encoding.
        mac.update(label);
        mac.update(memberNonce);
        mac.update(rootNonce);
        mac.update(ByteBuffer.allocate(8).putInt(rank).putInt(worldSize).array());
        return mac.doFinal();
    }
}
