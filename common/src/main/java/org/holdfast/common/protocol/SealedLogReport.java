package org.holdfast.common.protocol;

import java.util.List;

/**
 * The sealed-log report a worker appends to DATA_SYNCED from cluster version 7
 * ({@link Register#LOG_DIGEST_VERSION}): the logs of its range whose upload to the bucket is confirmed,
 * each with its takeover epoch, log epoch (which name its object), sealed size and the SHA-256 of the
 * object's bytes. {@code full}: {@code sealed} is every such log (the first report on a link; the
 * master drops its records of any other log of the worker), else only those new or changed since
 * the last report on the link, and {@code dropped} the log ids deleted since. {@code unhashed}: live
 * logs the worker has no digest of (uploaded before it kept digests), which the master cannot check.
 */
public record SealedLogReport(boolean full, List<Sealed> sealed, List<Integer> dropped, long unhashed) {
    /** Most logs, and most dropped ids, one report carries. */
    public static final int MAX_LOGS = 65_536;
    /** The wire bytes of one sealed log. */
    static final int SEALED_BYTES = 4 + 8 + 8 + 8 + 32;

    /** One sealed log: its id, takeover epoch and log epoch (its object key), size in bytes and SHA-256. */
    public record Sealed(int logId, long epoch, long logEpoch, long size, byte[] sha256) {
        public Sealed {
            if (logId < 1 || epoch < 1 || logEpoch < 0 || size < 0 || sha256.length != 32) {
                throw new IllegalArgumentException("a sealed log has an id and epoch of 1 or more, a log epoch and size of 0 or more"
                        + " and a 32-byte SHA-256; got id " + logId + ", epoch " + epoch + ", log epoch " + logEpoch + ", size " + size
                        + ", " + sha256.length + " digest bytes");
            }
            sha256 = sha256.clone();
        }

        @Override
        public byte[] sha256() {
            return sha256.clone();
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Sealed s && s.logId == logId && s.epoch == epoch && s.logEpoch == logEpoch && s.size == size
                    && java.util.Arrays.equals(s.sha256, sha256);
        }

        @Override
        public int hashCode() {
            return java.util.Objects.hash(logId, epoch, logEpoch, size, java.util.Arrays.hashCode(sha256));
        }

        @Override
        public String toString() {
            return "Sealed[logId=" + logId + ", epoch=" + epoch + ", logEpoch=" + logEpoch + ", size=" + size + ", sha256="
                    + java.util.HexFormat.of().formatHex(sha256) + "]";
        }
    }

    public SealedLogReport {
        sealed = List.copyOf(sealed);
        dropped = List.copyOf(dropped);
        if (sealed.size() > MAX_LOGS || dropped.size() > MAX_LOGS) {
            throw new IllegalArgumentException("a sealed-log report carries at most " + MAX_LOGS + " logs and " + MAX_LOGS
                    + " dropped ids, got " + sealed.size() + " and " + dropped.size());
        }
        if (full && !dropped.isEmpty()) {
            throw new IllegalArgumentException("a full sealed-log report drops nothing by id: every log it does not name is dropped");
        }
        if (unhashed < 0 || unhashed > 0xffffffffL) {
            throw new IllegalArgumentException("unhashed out of u32 range: " + unhashed);
        }
    }

    /** Its wire bytes. */
    int bodyBytes() {
        return 1 + 4 + 4 + sealed.size() * SEALED_BYTES + 4 + dropped.size() * 4;
    }
}
