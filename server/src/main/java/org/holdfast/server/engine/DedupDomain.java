package org.holdfast.server.engine;

import java.nio.charset.StandardCharsets;
import java.security.DigestException;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import org.holdfast.common.id.Fingerprint;

/**
 * A dedup domain (tenant) as the fingerprint index sees it: the keys its blocks are indexed under.
 *
 * <p>In the {@code default} domain the key is the fingerprint itself, so every index written before
 * domains existed stays valid. In any other domain the key is
 * {@code SHA-256("holdfast-dedup-domain\0" || domain || "\0" || fingerprint)}: the same content in
 * two domains has two unrelated keys, so the engine can never match across domains and a NEED
 * answer says nothing about another domain's blocks. The engine only ever sees keys; payload
 * verification, the location index and restore keep the real fingerprint, and the possession index
 * records the key of every non-default block so that GC can make the index forget it.
 *
 * <p>Not thread-safe (one {@link MessageDigest}): one instance per backup session.
 */
public final class DedupDomain {
    /** The domain of volumes nobody put elsewhere. */
    public static final String DEFAULT = "default";
    private static final byte[] LABEL = "holdfast-dedup-domain\0".getBytes(StandardCharsets.US_ASCII);

    private final String name;
    private final byte[] prefix;
    private final MessageDigest sha256;

    public DedupDomain(String name) {
        this.name = name == null || name.isEmpty() ? DEFAULT : name;
        if (DEFAULT.equals(this.name)) {
            prefix = null;
            sha256 = null;
        } else {
            byte[] n = this.name.getBytes(StandardCharsets.UTF_8);
            prefix = new byte[LABEL.length + n.length + 1];
            System.arraycopy(LABEL, 0, prefix, 0, LABEL.length);
            System.arraycopy(n, 0, prefix, LABEL.length, n.length);
            try {
                sha256 = MessageDigest.getInstance("SHA-256");
            } catch (NoSuchAlgorithmException e) {
                throw new IllegalStateException("the JDK has no SHA-256", e);
            }
        }
    }

    public String name() {
        return name;
    }

    /** True for the default domain, where keys are the fingerprints. */
    public boolean isDefault() {
        return prefix == null;
    }

    /** Writes the index keys of {@code count} fingerprints packed in {@code fps} from {@code off} into {@code keys} from {@code keyOff}. */
    public void keys(byte[] fps, int off, byte[] keys, int keyOff, int count) {
        if (isDefault()) {
            System.arraycopy(fps, off, keys, keyOff, count * Fingerprint.BYTES);
            return;
        }
        try {
            for (int i = 0; i < count; i++) {
                sha256.update(prefix);
                sha256.update(fps, off + i * Fingerprint.BYTES, Fingerprint.BYTES);
                sha256.digest(keys, keyOff + i * Fingerprint.BYTES, Fingerprint.BYTES);
            }
        } catch (DigestException e) {
            throw new IllegalStateException("SHA-256 refused a 32-byte output", e);
        }
    }
}
