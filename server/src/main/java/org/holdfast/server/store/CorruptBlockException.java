package org.holdfast.server.store;

/**
 * One stored block failed its check: names the data log file, the PBN and the offset of its
 * record, and (once a caller that knows them added them) the volume, snapshot and LBN that
 * reference it. The block is in the {@link BadBlocks} registry by the time this is thrown.
 */
public final class CorruptBlockException extends CorruptDataException {
    private final String file;
    private final long pbn;
    private final long offset;
    private final String problem;
    private final String volume;
    private final Long sequence;
    private final Long lbn;

    public CorruptBlockException(String file, long pbn, long offset, String problem) {
        this(file, pbn, offset, problem, null, null, null, null);
    }

    private CorruptBlockException(String file, long pbn, long offset, String problem, String volume, Long sequence, Long lbn,
                                  Throwable cause) {
        super("data-log", file, "pbn " + pbn + " at offset " + offset,
                problem + where(volume, sequence, lbn) + "; the block is marked bad: the next backup holding its content repairs it"
                        + " (see docs/operations.md, \"Verify\")", cause);
        this.file = file;
        this.pbn = pbn;
        this.offset = offset;
        this.problem = problem;
        this.volume = volume;
        this.sequence = sequence;
        this.lbn = lbn;
    }

    private static String where(String volume, Long sequence, Long lbn) {
        if (volume == null) {
            return "";
        }
        return " (volume " + volume + (sequence == null ? "" : ", snapshot " + volume + "@" + sequence)
                + (lbn == null ? "" : ", LBN " + lbn) + ")";
    }

    /** The same failure with the volume, snapshot sequence and LBN that referenced the block. */
    public CorruptBlockException in(String volume, Long sequence, Long lbn) {
        return new CorruptBlockException(file, pbn, offset, problem, volume, sequence, lbn, this);
    }

    /** The data log file holding the damaged record. */
    public String file() {
        return file;
    }

    public long pbn() {
        return pbn;
    }

    public long offset() {
        return offset;
    }

    /** What the check found, e.g. "stored bytes checksum (CRC32C) mismatch". */
    public String problem() {
        return problem;
    }

    /** The volume that referenced the block, or null if not known. */
    public String volume() {
        return volume;
    }

    /** The snapshot sequence that referenced the block, or null if not known. */
    public Long sequence() {
        return sequence;
    }

    /** The LBN that referenced the block, or null if not known. */
    public Long lbn() {
        return lbn;
    }
}
