package org.holdfast.server.ingest.cluster;

/** A worker answered a DATA_READ that the record of its first PBN failed its check there ({@link DamagedBlockAnswer}). */
public final class RangeBlockDamagedException extends RuntimeException {
    private static final long serialVersionUID = 1L;
    private final transient DamagedBlockAnswer answer;

    public RangeBlockDamagedException(String worker, DamagedBlockAnswer answer) {
        super("data worker " + worker + " found PBN " + answer.pbn() + " damaged: " + answer.problem());
        this.answer = answer;
    }

    public DamagedBlockAnswer answer() {
        return answer;
    }
}
