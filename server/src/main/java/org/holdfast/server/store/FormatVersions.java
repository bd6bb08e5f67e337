package org.holdfast.server.store;

/**
 * Every magic number and on-disk format version of the server, in one place (see
 * docs/architecture.md, "On-disk formats"). A change to any layout bumps its version here and adds
 * a line to the format history in the docs.
 */
public final class FormatVersions {
    private FormatVersions() {
    }

    /** First 4 bytes of a data log file: "HFDL". */
    public static final int DATA_LOG_MAGIC = 0x4846444C;
    /** Version of the data log file header and record layout new logs get (2: may hold frame records). */
    public static final int DATA_LOG_VERSION = 2;
    /** The first data log version: block records only. Such logs keep opening, reading and taking block records. */
    public static final int DATA_LOG_VERSION_V1 = 1;
    /** Bytes of the data log file header (magic, version, header length, log id, created, reserved). */
    public static final int DATA_LOG_HEADER_BYTES = 32;
    /** First 4 bytes of every block record: "HFBR". */
    public static final int RECORD_MAGIC = 0x48464252;
    /** Bytes of a block record header, before the stored bytes. */
    public static final int RECORD_HEADER_BYTES = 32;
    /** First 4 bytes of every frame record (format v2): "HFFR". Its header is {@link #RECORD_HEADER_BYTES} long too. */
    public static final int FRAME_MAGIC = 0x48464652;
    /** Most members one frame may hold (1 MiB of 512-byte blocks). */
    public static final int FRAME_MAX_MEMBERS = 2048;
    /** Largest raw size of one frame: members times block size. */
    public static final int FRAME_MAX_RAW = 1 << 20;
    /**
     * Largest stored size of one frame record (member map included): below 1 MiB, so that a
     * member's location carries it in 20 bits. A frame of 1 MiB raw that zstd shrank by 1/32, as
     * the agent sends them, fits.
     */
    public static final int FRAME_MAX_STORED = (1 << 20) - 1;
    /** File name pattern of data logs: log-%08x.hfl. */
    public static final String DATA_LOG_PREFIX = "log-";
    /** File name suffix of data logs. */
    public static final String DATA_LOG_SUFFIX = ".hfl";

    /** Largest block size a volume may have. */
    public static final int MAX_BLOCK_SIZE = 1 << 20;
    /** Smallest block size a volume may have. */
    public static final int MIN_BLOCK_SIZE = 512;
    /** Slack a compressed payload may exceed its block size by (protocol v1: blockSize + 4 KiB). */
    public static final int COMPRESSED_SLACK = 4096;
    /** Largest stored payload of one record; checked before allocating on every read. */
    public static final int MAX_STORED_BYTES = MAX_BLOCK_SIZE + COMPRESSED_SLACK;

    /** Record codec: the all-zero block (never stored; appears only on the wire). */
    public static final int CODEC_ZERO = 0;
    /** Record codec: payload stored as is. */
    public static final int CODEC_RAW = 1;
    /** Record codec: payload is one zstd frame. */
    public static final int CODEC_ZSTD = 2;
    /** Codec of a frame member in a {@link BlockBatch}: the payload is the whole frame (never a block record's codec). */
    public static final int CODEC_FRAME = 3;

    /** Version of the value layouts in the metadata database (volumes, snapshots, map, locations). */
    public static final int CATALOG_VERSION = 1;
    /** Meta key holding {@link #CATALOG_VERSION} as a u32, written when the database is created. */
    public static final String META_CATALOG_VERSION = "catalog.version";
    /** Meta key: u64, every PBN below it may have been handed out (PBN reservation high-water mark). */
    public static final String META_PBN_RESERVED = "store.pbn-reserved";
    /** Meta key: u32 log id + u64 length, the durable point of the data logs. */
    public static final String META_DURABLE_POINT = "store.durable-point";
    /**
     * Meta key: u64 first + u64 limit, the PBN range of a range store ({@link StoreRange}); absent
     * for a standalone store, whose range is {@link org.holdfast.common.id.PbnRange#STANDALONE}.
     */
    public static final String META_PBN_RANGE = "store.pbn-range";
    /** Meta key: u64, next internal volume id. */
    public static final String META_NEXT_VOLUME_ID = "catalog.next-volume-id";
    /** Meta key of where a master keeps its blocks (1 its own store, 2 its workers: {@code holdfast.cluster.data}). */
    public static final String META_CLUSTER_DATA_MODE = "cluster.data-mode";
    /** {@link #META_CLUSTER_DATA_MODE}'s value for a master whose blocks live on its workers. */
    public static final long CLUSTER_DATA_ON_WORKERS = 2;

    /**
     * Refuses an offline GC tool on a master whose blocks live on its workers: its GMA counts only its
     * own range, and the workers' GC metadata is on the workers.
     */
    public static void refuseDataOnWorkers(MetadataDb db, String tool) {
        if (db.metaLong(META_CLUSTER_DATA_MODE, 0) == CLUSTER_DATA_ON_WORKERS) {
            throw new IllegalStateException(tool + " is not supported on a master whose blocks live on its workers"
                    + " (holdfast.cluster.data=workers, experimental): its GC metadata counts only its own PBN range and each worker"
                    + " keeps its own; nothing was changed. Check the workers' counts online with POST /api/v1/gc/fsck on the running master,"
                    + " a stopped worker with holdfast-server worker-fsck, and the blocks with a full verify (POST /api/v1/verify)");
        }
    }

    /** First byte of a user record in the {@code users} column family: 'U'. */
    public static final int USER_RECORD_MAGIC = 0x55;
    /** First byte of an API token record in the {@code tokens} column family: 'T'. */
    public static final int TOKEN_RECORD_MAGIC = 0x54;
    /** Second byte of user and token records: their layout version. */
    public static final int CREDENTIAL_RECORD_VERSION = 1;

    /** True for a codec a stored record may carry. */
    public static boolean isStoredCodec(int codec) {
        return codec == CODEC_RAW || codec == CODEC_ZSTD;
    }

    /** True for a block size a volume may use: a power of two within the limits. */
    public static boolean isValidBlockSize(long blockSize) {
        return blockSize >= MIN_BLOCK_SIZE && blockSize <= MAX_BLOCK_SIZE && Long.bitCount(blockSize) == 1;
    }
}
