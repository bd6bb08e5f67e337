package org.holdfast.server.store;

/**
 * A block read through a {@link BlockHome} failed its check where it lives (a worker's record check,
 * data on workers): it is damaged, not unreachable. Carries the fingerprint that home's index holds
 * for it (all zero if none), so the master can record it bad.
 */
public final class DamagedBlockException extends CorruptDataException {
    private static final long serialVersionUID = 1L;
    private final long pbn;
    private final transient byte[] fingerprint;
    private final String holder;
    private final String problem;

    public DamagedBlockException(String holder, long pbn, byte[] fingerprint, String problem) {
        super("range-data", holder, "pbn " + pbn, problem);
        this.pbn = pbn;
        this.fingerprint = fingerprint.clone();
        this.holder = holder;
        this.problem = problem;
    }

    /** What the check found where the block lives, as that node said it. */
    public String problem() {
        return problem;
    }

    public long pbn() {
        return pbn;
    }

    public byte[] fingerprint() {
        return fingerprint.clone();
    }

    /** Where the block lives, as {@link BlockHome#holder} names it. */
    public String holder() {
        return holder;
    }
}
