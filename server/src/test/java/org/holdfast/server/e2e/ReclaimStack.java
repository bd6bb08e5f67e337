package org.holdfast.server.e2e;

import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import java.util.Random;
import java.util.SortedMap;
import org.holdfast.common.compress.BlockCodec;
import org.holdfast.common.id.VolumeId;
import org.holdfast.gc.bosc.BoscSettings;
import org.holdfast.server.catalog.Catalog;
import org.holdfast.server.catalog.MapCursor;
import org.holdfast.server.catalog.SessionMap;
import org.holdfast.server.catalog.SnapshotCommit;
import org.holdfast.server.engine.ExactFingerprintIndex;
import org.holdfast.server.gc.GcCommitHook;
import org.holdfast.server.gc.GcService;
import org.holdfast.server.store.DataStore;
import org.holdfast.server.store.FormatVersions;
import org.holdfast.server.store.FsyncPolicy;
import org.holdfast.server.store.MetadataDb;
import org.holdfast.server.store.StoredBlock;

/**
 * The server's storage stack (RocksDB catalog, data logs of 1 MiB, exact index, GC service with a
 * 1 h grace and a 12 h default policy, snapshot commits counted by the GC) under one directory, as
 * {@link ReclaimNowCrashTest} and its child {@link ReclaimNowChild} open it. Block contents are
 * derived from a content id, so the test can tell what every LBN of every snapshot must read.
 */
final class ReclaimStack implements AutoCloseable {
    static final int BS = 4096;

    final MetadataDb db;
    final DataStore store;
    final ExactFingerprintIndex index;
    final Catalog catalog;
    final GcService gc;
    final SnapshotCommit commit;
    private final BlockCodec codec = new BlockCodec();
    private final MessageDigest sha;
    private final byte[] raw = new byte[BS];
    private final byte[] packed = new byte[BlockCodec.maxCompressedLength(BS)];

    private ReclaimStack(Path root) {
        db = MetadataDb.open(root.resolve("catalog"));
        store = DataStore.open(new DataStore.Settings(root.resolve("data"), 1L << 20, FsyncPolicy.COMMIT, 64, 0), db);
        index = new ExactFingerprintIndex(db);
        catalog = new Catalog(db);
        Object[] monitor = new Object[1];
        gc = GcService.open(new GcService.Settings(root.resolve("gc"), BoscSettings.defaults().withCommitIdle(Duration.ofMillis(1)),
                Duration.ofHours(1), "12h", 1), catalog, store, index, Clock.systemUTC(), () -> monitor[0]);
        // small parts and chunks, so that the crash loop's commits pass commit.afterMapChunk and commit.afterGcPart
        commit = new SnapshotCommit(catalog, new GcCommitHook(gc, 40), Clock.systemUTC(), 40);
        monitor[0] = commit;
        try {
            sha = MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    static ReclaimStack open(Path root) {
        return new ReclaimStack(root);
    }

    /** Stores the block of content {@code id} (zstd when it pays) and protects it as a backup would. */
    long storeBlock(long id) {
        content(id, raw);
        byte[] fp = sha.digest(raw);
        int n = codec.compress(raw, 0, BS, packed, 0);
        long pbn = n > 0
                ? store.append(fp, 0, packed, 0, n, FormatVersions.CODEC_ZSTD, BS)
                : store.append(fp, 0, raw, 0, BS, FormatVersions.CODEC_RAW, BS);
        if (!gc.guard().protect(pbn)) {
            throw new IllegalStateException("fresh PBN " + pbn + " refused");
        }
        return pbn;
    }

    /**
     * Marks {@code pbn} (holding content {@code id}) bad, then repairs it with a fresh upload of the
     * same content, as a backup would, and syncs: the location moves to the new copy.
     */
    void markBadAndRepair(long id, long pbn) {
        store.markDamaged(pbn, "crash loop: marked bad to drive a repair");
        content(id, raw);
        byte[] fp = sha.digest(raw);
        int n = codec.compress(raw, 0, BS, packed, 0);
        boolean done = n > 0
                ? store.repair(pbn, fp, 0, packed, 0, n, FormatVersions.CODEC_ZSTD, BS)
                : store.repair(pbn, fp, 0, raw, 0, BS, FormatVersions.CODEC_RAW, BS);
        if (!done) {
            throw new IllegalStateException("PBN " + pbn + " was not repaired");
        }
        store.sync();
    }

    /** Commits a snapshot of {@code volume} ({@code blocks} LBNs) whose changed LBNs map to the given PBNs; returns its sequence. */
    long commit(VolumeId volume, long parent, int blocks, SortedMap<Long, Long> delta) {
        store.sync();
        SessionMap m = new SessionMap(delta.size());
        for (Map.Entry<Long, Long> e : delta.entrySet()) {
            m.add(e.getKey(), e.getValue());
        }
        return commit.commit(new SnapshotCommit.Request(volume, BS, blocks * (long) BS, parent, m, m.size() * (long) BS,
                m.size(), m.size(), m.size() * (long) BS)).snapshot().sequence();
    }

    /** The PBN of every LBN of snapshot {@code seq} of {@code volume} (0: unmapped or zero). */
    long[] pbns(VolumeId volume, long seq, int blocks) {
        long[] out = new long[blocks];
        try (MapCursor c = catalog.mapCursor(catalog.requireVolume(volume).internalId())) {
            c.startScan(seq, 0, blocks);
            while (c.nextMapped()) {
                out[(int) c.lbn()] = c.pbn();
            }
        }
        return out;
    }

    /** Reads snapshot {@code seq} through the data store and throws unless every LBN holds {@code contents}' block. */
    void assertRestores(VolumeId volume, long seq, long[] contents) {
        long[] pbns = pbns(volume, seq, contents.length);
        StoredBlock b = new StoredBlock();
        byte[] got = new byte[BS];
        byte[] want = new byte[BS];
        for (int lbn = 0; lbn < contents.length; lbn++) {
            String what = volume.name() + "@" + seq + " LBN " + lbn + " PBN " + pbns[lbn];
            if (contents[lbn] == 0) {
                if (pbns[lbn] != 0) {
                    throw new AssertionError(what + " should be a zero block");
                }
                continue;
            }
            if (pbns[lbn] == 0) {
                throw new AssertionError(what + " is unmapped, expected content " + contents[lbn]);
            }
            store.read(pbns[lbn], b);
            codec.decode(b.codec(), b.data(), b.dataOffset(), b.storedLength(), got, 0, BS);
            content(contents[lbn], want);
            if (!java.util.Arrays.equals(got, want)) {
                throw new AssertionError(what + " differs from content " + contents[lbn]);
            }
        }
    }

    /** Blocks the data store holds (its location index). */
    long storedBlocks() {
        long[] n = {0};
        store.locations().forEach((pbn, logId, offset, storedLength, fps, fpOff) -> {
            n[0]++;
            return true;
        });
        return n[0];
    }

    /** Deterministic block content: a random head, then a repeating pattern (so zstd pays for some). */
    static void content(long id, byte[] out) {
        Random g = new Random(id * 0x9E3779B97F4A7C15L);
        int head = 256 * (1 + (int) Math.floorMod(id, 16L));
        for (int i = 0; i < head; i += 8) {
            long x = g.nextLong();
            for (int k = 0; k < 8; k++) {
                out[i + k] = (byte) (x >>> (8 * k));
            }
        }
        for (int i = head; i < out.length; i++) {
            out[i] = out[i % 64];
        }
    }

    /** Orderly close: GC (flushing its log), index, data store, catalog. */
    @Override
    public void close() {
        codec.close();
        gc.close();
        index.close();
        store.close();
        db.close();
    }
}
