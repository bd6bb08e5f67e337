package org.holdfast.common.protocol;

/**
 * Every magic number and hard limit of the protocol (v2), in one place. Receivers check each length
 * read from the wire against one of these before allocating; senders never build a message over
 * them (the message records refuse it).
 */
public final class ProtocolLimits {
    /**
     * The protocol version in every frame header and in HELLO / HELLO_OK. Version 2 added the
     * possession secret to BACKUP_READY and a possession tag to every ENTRIES entry.
     */
    public static final int VERSION = 2;
    /**
     * The newest protocol version HELLO offers and HELLO_OK grants: the lower of the two peers' (the
     * frame header keeps {@link #VERSION}). Version 3 added COMMIT's consistency byte and
     * RUN_REPORT / RUN_RECORDED; the frames of version 2 are unchanged. Version 4 added compressed
     * frames: the codecs {@link PayloadCodec#ZSTD_FRAME} and {@link PayloadCodec#FRAME_MEMBER} in
     * BLOCKS and RESTORE_DATA, which a connection that agreed on less never carries. Version 5 added
     * the snapshot identity: a u64 {@code snapshotId} at the end of COMMITTED and
     * {@code baseSnapshotId} at the end of BACKUP_BEGIN (both left out when 0, so a connection that
     * agreed on less sees the version 2 frames).
     */
    public static final int PROTOCOL_VERSION = 5;
    /** The oldest protocol version still accepted in HELLO. */
    public static final int MIN_PROTOCOL_VERSION = 2;
    /** HELLO's magic, "HFST". */
    public static final int MAGIC = 0x48465354;

    /** Bytes of the frame's length field. */
    public static final int LENGTH_FIELD_BYTES = 4;
    /** Bytes of version + type, counted by the length field. */
    public static final int HEADER_BYTES = 2;
    /** Largest value of the length field: 16 MiB of payload plus 64 KiB for framing and headers. */
    public static final int MAX_FRAME = 16 * 1024 * 1024 + 64 * 1024;
    /** Largest body (MAX_FRAME minus version and type). */
    public static final int MAX_BODY = MAX_FRAME - HEADER_BYTES;

    /** Longest HELLO agentName, in UTF-8 bytes. */
    public static final int MAX_AGENT_NAME = 256;
    /** Longest HELLO token, in UTF-8 bytes (empty = none). */
    public static final int MAX_TOKEN = 512;
    /** Longest HELLO_OK serverVersion, in UTF-8 bytes. */
    public static final int MAX_SERVER_VERSION = 64;
    /** Longest ERROR message, in UTF-8 bytes. */
    public static final int MAX_ERROR_MESSAGE = 1024;
    /** Longest volume name, in UTF-8 bytes (same as VolumeId.MAX_LENGTH). */
    public static final int MAX_VOLUME_NAME = 128;

    /** Longest REGISTER nodeName, in UTF-8 bytes (the worker's node name, also used in object keys). */
    public static final int MAX_NODE_NAME = 64;

    /** Most entries in one dedup frame on the worker link (a Sungem input segment is at most 65536). */
    public static final int MAX_DEDUP_ENTRIES = 65_536;

    /** Most PBNs one DATA_READ asks for (and blocks one DATA_READ_ANSWER carries) on the worker link. */
    public static final int MAX_DATA_READ = 1024;

    /**
     * Most GC metadata updates one GC_DELTA carries (17 bytes each: a body of at most 1,114,128
     * bytes); a larger share of one operation travels as several parts under the same operation id.
     */
    public static final int MAX_GC_DELTA_UPDATES = 65_536;

    /**
     * Most PBNs one GC_PROTECT carries (and entries one GC_PROTECTED names refused): an input
     * segment's duplicates (at most 65,536 entries) fit one call; a body of at most 524,309 bytes.
     */
    public static final int MAX_GC_PROTECT_PBNS = 65_536;

    /** Longest RUN_REPORT trigger, in UTF-8 bytes. */
    public static final int MAX_RUN_TRIGGER = 32;
    /** Longest RUN_REPORT message, in UTF-8 bytes. */
    public static final int MAX_RUN_MESSAGE = 1024;

    /** Most fingerprints in one ENTRIES run (and bits in one NEED). */
    public static final int MAX_RUN_ENTRIES = 4096;
    /** Most payloads in one BLOCKS frame and blocks in one RESTORE_DATA frame. */
    public static final int MAX_BLOCKS_PER_FRAME = 1024;
    /** Most snapshots in one SNAPSHOT_LIST (52 bytes each, so it fits in a frame). */
    public static final int MAX_SNAPSHOT_LIST = 65_536;

    /** Smallest block size of a volume. */
    public static final int MIN_BLOCK_SIZE = 512;
    /** Largest block size of a volume. */
    public static final int MAX_BLOCK_SIZE = 1024 * 1024;
    /** A zstd payload may exceed the block size by this much (incompressible data plus framing). */
    public static final int ZSTD_SLACK = 4096;
    /** Largest payload of any codec, used while a decoder does not know the session's block size. */
    public static final int MAX_PAYLOAD = MAX_BLOCK_SIZE + ZSTD_SLACK;
    /**
     * Payload bytes a sender packs into one BLOCKS / RESTORE_DATA frame before starting the next,
     * leaving the rest of MAX_FRAME for per-block headers. With 1 MiB blocks that is 15 or 16 blocks.
     */
    public static final int TARGET_FRAME_PAYLOAD = 16 * 1024 * 1024 - 64 * 1024;
    /** Most raw bytes one compressed frame ({@link PayloadCodec#ZSTD_FRAME}) holds: its members times the block size. */
    public static final int FRAME_MAX_RAW = MAX_BLOCK_SIZE;
    /** Most members of one compressed frame (1 MiB of 512-byte blocks); u16 on the wire. */
    public static final int MAX_FRAME_MEMBERS = FRAME_MAX_RAW / MIN_BLOCK_SIZE;
    /** Most compressed frames one RESTORE_DATA message refers to (u16 ordinals). */
    public static final int MAX_FRAMES_PER_MESSAGE = MAX_BLOCKS_PER_FRAME;

    private ProtocolLimits() {
    }

    /** True if {@code blockSize} is a power of two in [MIN_BLOCK_SIZE, MAX_BLOCK_SIZE]. */
    public static boolean isValidBlockSize(long blockSize) {
        return blockSize >= MIN_BLOCK_SIZE && blockSize <= MAX_BLOCK_SIZE && Long.bitCount(blockSize) == 1;
    }

    /** Largest zstd payload of a frame of {@code members} blocks: {@code members * blockSize + 4 KiB}. */
    public static int maxFramePayload(int members, int blockSize) {
        return members * blockSize + ZSTD_SLACK;
    }

    /** Largest zstd payload for a block of {@code blockSize} bytes: {@code blockSize + 4 KiB}. */
    public static int maxZstdPayload(int blockSize) {
        return blockSize + ZSTD_SLACK;
    }

    /** The number of LBNs of a volume: {@code ceil(volumeBytes / blockSize)}. */
    public static long blockCount(long volumeBytes, int blockSize) {
        return volumeBytes / blockSize + (volumeBytes % blockSize == 0 ? 0 : 1);
    }
}
