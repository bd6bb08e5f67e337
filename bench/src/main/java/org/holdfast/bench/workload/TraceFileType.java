package org.holdfast.bench.workload;

/**
 * The file types of the workgroup trace (thesis table 6.1), their block-level update behaviour
 * and their share of the bytes. VM-related files (35.1 %) are left out, as the thesis did; the
 * remaining shares are scaled to the used part of each volume.
 */
enum TraceFileType {
    MULTIMEDIA(21.6, false, BlockContent.Kind.RANDOM, 64 << 10, 8 << 20),
    SYSTEM(21.9, false, BlockContent.Kind.BINARY, 4 << 10, 1 << 20),
    DOCUMENT(11.5, false, BlockContent.Kind.TEXT, 8 << 10, 512 << 10),
    INSTALL_MEDIA(5.1, false, BlockContent.Kind.RANDOM, 1 << 20, 24 << 20),
    LOG(1.6, true, BlockContent.Kind.TEXT, 256 << 10, 4 << 20),
    MAIL(1.6, false, BlockContent.Kind.TEXT, 1 << 20, 64 << 20),
    DATABASE(1.6, false, BlockContent.Kind.BINARY, 1 << 20, 64 << 20);

    /** Sum of the shares above: table 6.1 without VM-related files. */
    static final double TOTAL_SHARE = 64.9;

    final double share;
    final boolean append;
    final BlockContent.Kind kind;
    final long minBytes;
    final long maxBytes;

    TraceFileType(double share, boolean append, BlockContent.Kind kind, long minBytes, long maxBytes) {
        this.share = share;
        this.append = append;
        this.kind = kind;
        this.minBytes = minBytes;
        this.maxBytes = maxBytes;
    }
}
