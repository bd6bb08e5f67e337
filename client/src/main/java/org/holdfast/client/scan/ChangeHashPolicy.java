package org.holdfast.client.scan;

import java.time.Duration;

/**
 * How an agent detects changed blocks: by SHA-256 of every block read ({@code cheap} false, state
 * file format 1), or by a cheap hash ({@link ChangeHash}, state file format 2) with SHA-256 only
 * for blocks whose cheap hash changed, and every block's SHA-256 again (a full re-hash) on every
 * {@code rehashEvery}-th backup or when the last full re-hash is {@code rehashDays} days old,
 * whichever comes first; 0 turns that trigger off.
 */
public record ChangeHashPolicy(boolean cheap, int rehashEvery, int rehashDays) {
    /** The default: the cheap hash, a full re-hash every 32nd backup or after 7 days. */
    public static final ChangeHashPolicy DEFAULT = new ChangeHashPolicy(true, 32, 7);
    /** SHA-256 of every block read, as before state file format 2. */
    public static final ChangeHashPolicy SHA256 = new ChangeHashPolicy(false, 0, 0);

    public ChangeHashPolicy {
        if (rehashEvery < 0 || rehashDays < 0) {
            throw new IllegalArgumentException("re-hash intervals must not be negative");
        }
    }

    /**
     * Why this incremental backup must compute every block's SHA-256 after {@code previous}, at
     * {@code nowMillis}; null if blocks whose cheap hash is unchanged may keep their stored SHA-256.
     */
    public String rehashReason(StateFile.PreviousState previous, long nowMillis) {
        if (!cheap) {
            return "change detection by SHA-256";
        }
        if (!previous.hasChangeHashes()) {
            return "the state file has no cheap hashes yet (format " + previous.formatVersion() + ")";
        }
        if (rehashEvery > 0 && previous.backupsSinceRehash() + 1 >= rehashEvery) {
            return "this is backup " + (previous.backupsSinceRehash() + 1) + " since the last full re-hash (--rehash-every "
                    + rehashEvery + ")";
        }
        if (rehashDays > 0 && nowMillis - previous.rehashedAtMillis() >= Duration.ofDays(rehashDays).toMillis()) {
            return "the last full re-hash is older than " + rehashDays + " days (--rehash-days)";
        }
        if (previous.rehashedAtMillis() > nowMillis + Duration.ofDays(1).toMillis()) {
            return "the last full re-hash is dated in the future (clock changed?)";
        }
        return null;
    }
}
