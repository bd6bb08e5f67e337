package org.holdfast.server.engine;

import java.util.Locale;

/** How the master of {@link ClusterFingerprintIndex} spreads work over its workers (thesis 7.2 and 7.2.5). */
public enum ClusterMode {
    /** Broadcast each input segment; misses go to the worker holding the nearest resolved fingerprint (7.2.1-7.2.3). */
    NEAREST,
    /** Split each input segment by fingerprint hash; each worker runs the unmodified engine on its share (7.2.5). */
    HASH;

    /** Parses {@code nearest} or {@code hash}; anything else is an error naming the setting. */
    public static ClusterMode parse(String name, String setting) {
        return switch (name == null ? "" : name.toLowerCase(Locale.ROOT)) {
            case "nearest" -> NEAREST;
            case "hash" -> HASH;
            default -> throw new IllegalArgumentException(setting + " must be 'nearest' or 'hash', not '" + name + "'");
        };
    }
}
