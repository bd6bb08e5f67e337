package org.holdfast.server.verify;

/** What a verify job covers: everything (both null), one volume, or one snapshot of a volume. */
public record VerifyScope(String volume, Long sequence) {
    public VerifyScope {
        if (sequence != null && volume == null) {
            throw new IllegalArgumentException("a snapshot needs its volume");
        }
    }

    /** Every snapshot of every volume. */
    public static VerifyScope all() {
        return new VerifyScope(null, null);
    }

    /** How a job log names the scope. */
    public String describe() {
        return volume == null ? "all volumes" : sequence == null ? "volume " + volume : "snapshot " + volume + "@" + sequence;
    }
}
