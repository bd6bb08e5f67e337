package org.holdfast.server.catalog;

import java.nio.charset.StandardCharsets;
import org.holdfast.common.id.VolumeId;
import org.holdfast.common.model.Consistency;
import org.holdfast.server.store.Bytes;
import org.holdfast.server.store.CorruptDataException;
import org.holdfast.server.store.FormatVersions;

/**
 * Key and value layouts of the catalog's column families (all big-endian; see docs/architecture.md).
 *
 * <pre>
 * volumes   key: UTF-8 name            value: u8 version, u64 internalId, u32 blockSize, u64 createdAt,
 *                                             u64 latestSequence, u64 volumeBytes            (37 bytes)
 *                                             [u8 domainLength, domain ASCII] only outside the default
 *                                             dedup domain; a 37-byte value is in domain 'default'
 * snapshots key: u64 internalId, u64 seq value: u8 version, u64 createdAt, u64 volumeBytes, u32 blockSize,
 *                                             u64 logicalBytes, u64 changedBlocks, u64 sentBlocks,
 *                                             u64 newBlocks, u64 storedBytes                  (61 bytes, version 1)
 *                                             then u8 consistency              (62 bytes, version 2)
 *                                             then u64 snapshotId              (70 bytes, version 3, written today)
 * map       key: u64 internalId, u64 lbn, u64 ~seq (inverted, so newer sorts first)   value: u64 PBN
 * </pre>
 */
final class CatalogKeys {
    static final int VOLUME_VALUE_BYTES = 37;
    /** A snapshot value of record version 1: no consistency byte (read as UNKNOWN). */
    static final int SNAPSHOT_VALUE_V1_BYTES = 61;
    /** A snapshot value of record version 2: version 1 plus the u8 consistency (read as snapshot id 0, unknown). */
    static final int SNAPSHOT_VALUE_V2_BYTES = 62;
    /** A snapshot value of record version 3: version 2 plus the u64 snapshot id. */
    static final int SNAPSHOT_VALUE_BYTES = 70;
    /** The snapshot record version written today (the first byte; version 1 is CATALOG_VERSION's 1). */
    static final int SNAPSHOT_RECORD_VERSION = 3;
    static final int MAP_KEY_BYTES = 24;

    private CatalogKeys() {
    }

    static byte[] volumeKey(VolumeId name) {
        return name.name().getBytes(StandardCharsets.UTF_8);
    }

    static byte[] volumeValue(VolumeRecord v) {
        boolean defaultDomain = VolumeRecord.DEFAULT_DOMAIN.equals(v.domain());
        byte[] domain = v.domain().getBytes(StandardCharsets.US_ASCII);
        byte[] b = new byte[VOLUME_VALUE_BYTES + (defaultDomain ? 0 : 1 + domain.length)];
        if (!defaultDomain) {
            b[VOLUME_VALUE_BYTES] = (byte) domain.length;
            System.arraycopy(domain, 0, b, VOLUME_VALUE_BYTES + 1, domain.length);
        }
        b[0] = (byte) FormatVersions.CATALOG_VERSION;
        Bytes.putLong(b, 1, v.internalId());
        Bytes.putInt(b, 9, v.blockSize());
        Bytes.putLong(b, 13, v.createdAtMillis());
        Bytes.putLong(b, 21, v.latestSequence());
        Bytes.putLong(b, 29, v.volumeBytes());
        return b;
    }

    static VolumeRecord volume(byte[] key, byte[] b, String path) {
        String name = new String(key, StandardCharsets.UTF_8);
        String domain = VolumeRecord.DEFAULT_DOMAIN;
        boolean sizeOk = b.length == VOLUME_VALUE_BYTES || (b.length > VOLUME_VALUE_BYTES + 1
                && b.length == VOLUME_VALUE_BYTES + 1 + (b[VOLUME_VALUE_BYTES] & 0xff));
        if (!sizeOk || b[0] != FormatVersions.CATALOG_VERSION) {
            throw new CorruptDataException("catalog.volumes", path, name, "volume value of " + b.length + " bytes, version " + (b.length > 0 ? b[0] : -1));
        }
        if (b.length > VOLUME_VALUE_BYTES) {
            domain = new String(b, VOLUME_VALUE_BYTES + 1, b.length - VOLUME_VALUE_BYTES - 1, StandardCharsets.US_ASCII);
            if (!VolumeRecord.isValidDomain(domain)) {
                throw new CorruptDataException("catalog.volumes", path, name, "volume value names an invalid dedup domain");
            }
        }
        return new VolumeRecord(new VolumeId(name), Bytes.getLong(b, 1), Bytes.getInt(b, 9), Bytes.getLong(b, 13), Bytes.getLong(b, 21),
                Bytes.getLong(b, 29), domain);
    }

    static byte[] snapshotKey(long volumeId, long seq) {
        byte[] k = new byte[16];
        Bytes.putLong(k, 0, volumeId);
        Bytes.putLong(k, 8, seq);
        return k;
    }

    static byte[] snapshotValue(SnapshotRecord s) {
        byte[] b = new byte[SNAPSHOT_VALUE_BYTES];
        b[0] = (byte) SNAPSHOT_RECORD_VERSION;
        Bytes.putLong(b, 1, s.createdAtMillis());
        Bytes.putLong(b, 9, s.volumeBytes());
        Bytes.putInt(b, 17, s.blockSize());
        Bytes.putLong(b, 21, s.logicalBytes());
        Bytes.putLong(b, 29, s.changedBlocks());
        Bytes.putLong(b, 37, s.sentBlocks());
        Bytes.putLong(b, 45, s.newBlocks());
        Bytes.putLong(b, 53, s.storedBytes());
        b[61] = (byte) s.consistency().code();
        Bytes.putLong(b, 62, s.snapshotId());
        return b;
    }

    static SnapshotRecord snapshot(VolumeId volume, long seq, byte[] b, String path) {
        boolean v1 = b.length == SNAPSHOT_VALUE_V1_BYTES && b[0] == 1;
        boolean v2 = b.length == SNAPSHOT_VALUE_V2_BYTES && b[0] == 2;
        boolean v3 = b.length == SNAPSHOT_VALUE_BYTES && b[0] == SNAPSHOT_RECORD_VERSION;
        if (!v1 && !v2 && !v3) {
            throw new CorruptDataException("catalog.snapshots", path, volume + "@" + seq, "snapshot value of " + b.length
                    + " bytes, version " + (b.length > 0 ? b[0] : -1)
                    + " (this server reads version 1 of 61 bytes, 2 of 62 and 3 of 70)");
        }
        Consistency consistency = v1 ? Consistency.UNKNOWN : Consistency.fromCode(b[61] & 0xff);
        if (consistency == null) {
            throw new CorruptDataException("catalog.snapshots", path, volume + "@" + seq, "snapshot value has unknown consistency " + (b[61] & 0xff));
        }
        return new SnapshotRecord(volume, seq, Bytes.getLong(b, 1), Bytes.getLong(b, 9), Bytes.getInt(b, 17), Bytes.getLong(b, 21),
                Bytes.getLong(b, 29), Bytes.getLong(b, 37), Bytes.getLong(b, 45), Bytes.getLong(b, 53), consistency,
                v3 ? Bytes.getLong(b, 62) : 0);
    }

    static void mapKey(byte[] k, long volumeId, long lbn, long seq) {
        Bytes.putLong(k, 0, volumeId);
        Bytes.putLong(k, 8, lbn);
        Bytes.putLong(k, 16, ~seq);
    }

    static byte[] mapKey(long volumeId, long lbn, long seq) {
        byte[] k = new byte[MAP_KEY_BYTES];
        mapKey(k, volumeId, lbn, seq);
        return k;
    }

    static byte[] pbnValue(long pbn) {
        byte[] v = new byte[8];
        Bytes.putLong(v, 0, pbn);
        return v;
    }
}
