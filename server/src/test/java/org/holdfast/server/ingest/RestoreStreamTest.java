package org.holdfast.server.ingest;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.channel.embedded.EmbeddedChannel;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.Executor;
import org.holdfast.common.id.VolumeId;
import org.holdfast.common.protocol.PayloadCodec;
import org.holdfast.common.protocol.RestoreData;
import org.holdfast.common.protocol.RestoreEnd;
import org.holdfast.server.catalog.Catalog;
import org.holdfast.server.catalog.CommitHook;
import org.holdfast.server.catalog.SessionMap;
import org.holdfast.server.catalog.SnapshotCommit;
import org.holdfast.server.catalog.SnapshotRecord;
import org.holdfast.server.catalog.VolumeRecord;
import org.holdfast.server.store.CorruptDataException;
import org.holdfast.server.store.DataStore;
import org.holdfast.server.store.FormatVersions;
import org.holdfast.server.store.FsyncPolicy;
import org.holdfast.server.store.MetadataDb;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** RestoreStream against a real store and catalog, on an EmbeddedChannel whose writability the test controls. */
class RestoreStreamTest {
    private static final VolumeId VOL = new VolumeId("r");
    private static final int BS = 4096;
    private static final Executor DIRECT = Runnable::run;

    @TempDir
    Path dir;

    private MetadataDb db;
    private DataStore store;
    private Catalog catalog;
    private SnapshotCommit commit;
    private final List<Throwable> errors = new ArrayList<>();

    @BeforeEach
    void open() {
        db = MetadataDb.open(dir.resolve("catalog"));
        store = DataStore.open(new DataStore.Settings(dir.resolve("data"), 1L << 20, FsyncPolicy.COMMIT, 16, 0), db);
        catalog = new Catalog(db);
        commit = new SnapshotCommit(catalog, CommitHook.NONE, Clock.systemUTC());
    }

    @AfterEach
    void close() {
        store.close();
        db.close();
    }

    private long put(byte[] stored, int codec, byte fpByte) {
        byte[] fp = new byte[32];
        Arrays.fill(fp, fpByte);
        return store.append(fp, 0, stored, 0, stored.length, codec, BS);
    }

    private SnapshotRecord snapshot(long parent, long blocks, long... pairs) {
        store.sync();
        SessionMap m = new SessionMap(4);
        for (int i = 0; i < pairs.length; i += 2) {
            m.add(pairs[i], pairs[i + 1]);
        }
        return commit.commit(new SnapshotCommit.Request(VOL, BS, blocks * BS, parent, m, blocks * BS, 0, 0, 0)).snapshot();
    }

    private List<Object> drain(EmbeddedChannel ch) {
        List<Object> out = new ArrayList<>();
        Object o;
        while ((o = ch.readOutbound()) != null) {
            out.add(o);
        }
        return out;
    }

    private RestoreStream stream(EmbeddedChannel ch, long seq, long from) {
        VolumeRecord v = catalog.requireVolume(VOL);
        return new RestoreStream(catalog, store, v, catalog.snapshot(v, seq).orElseThrow(), from, ch, DIRECT, errors::add, () -> { });
    }

    @Test
    void pump_channelNotWritable_buildsNothingUntilWritable() {
        byte[] raw = new byte[BS];
        new Random(1).nextBytes(raw);
        long p = put(raw, FormatVersions.CODEC_RAW, (byte) 1);
        snapshot(0, 3000, 5, p, 2999, p);
        EmbeddedChannel ch = new EmbeddedChannel();
        ch.unsafe().outboundBuffer().setUserDefinedWritability(1, false);
        RestoreStream s = stream(ch, 1, 0);
        s.pump();
        assertThat(drain(ch)).as("nothing written while the channel is not writable").isEmpty();
        ch.unsafe().outboundBuffer().setUserDefinedWritability(1, true);
        s.pump();
        List<Object> out = drain(ch);
        assertThat(out).hasSize(3 + 1); // 3000 blocks in frames of 1024, then RESTORE_END
        assertThat(out.get(3)).isEqualTo(new RestoreEnd(3000));
        RestoreData first = (RestoreData) out.get(0);
        try {
            assertThat(first.startLbn()).isZero();
            assertThat(first.count()).isEqualTo(1024);
            assertThat(first.codec(0)).isEqualTo(PayloadCodec.ZERO);
            assertThat(first.codec(5)).isEqualTo(PayloadCodec.RAW);
            byte[] got = new byte[BS];
            first.copyPayload(5, got, 0);
            assertThat(got).isEqualTo(raw);
            assertThat(Arrays.copyOfRange(first.fingerprints(), 5 * 32, 6 * 32)).containsOnly((byte) 1);
        } finally {
            out.forEach(io.netty.util.ReferenceCountUtil::release);
        }
        assertThat(s.isDone()).isTrue();
        assertThat(errors).isEmpty();
    }

    @Test
    void pump_zstdStored_passesTheSameBytesThrough_andOlderSnapshotSeesOlderBlocks() {
        byte[] zstd = com.github.luben.zstd.Zstd.compress(new byte[BS]); // any valid stored zstd frame
        long pz = put(zstd, FormatVersions.CODEC_ZSTD, (byte) 2);
        byte[] raw = new byte[BS];
        new Random(2).nextBytes(raw);
        long pr = put(raw, FormatVersions.CODEC_RAW, (byte) 3);
        snapshot(0, 4, 1, pz);
        snapshot(1, 4, 1, pr, 2, pz);
        EmbeddedChannel ch = new EmbeddedChannel();
        stream(ch, 1, 0).pump();
        List<Object> out = drain(ch);
        try {
            RestoreData d = (RestoreData) out.get(0);
            assertThat(d.count()).isEqualTo(4);
            assertThat(d.codec(1)).isEqualTo(PayloadCodec.ZSTD);
            byte[] got = new byte[d.lengths()[1]];
            d.copyPayload(1, got, 0);
            assertThat(got).isEqualTo(zstd);
            assertThat(d.codec(2)).as("snapshot 1 does not see snapshot 2's change").isEqualTo(PayloadCodec.ZERO);
        } finally {
            out.forEach(io.netty.util.ReferenceCountUtil::release);
        }
        EmbeddedChannel ch2 = new EmbeddedChannel();
        stream(ch2, 2, 2).pump();
        List<Object> out2 = drain(ch2);
        try {
            RestoreData d = (RestoreData) out2.get(0);
            assertThat(d.startLbn()).isEqualTo(2);
            assertThat(d.count()).isEqualTo(2);
            assertThat(d.codec(0)).isEqualTo(PayloadCodec.ZSTD);
        } finally {
            out2.forEach(io.netty.util.ReferenceCountUtil::release);
        }
    }

    @Test
    void pump_corruptBlock_reportsTheErrorAndSendsNoEnd() throws Exception {
        byte[] raw = new byte[BS];
        new Random(3).nextBytes(raw);
        long p = put(raw, FormatVersions.CODEC_RAW, (byte) 4);
        snapshot(0, 2, 0, p);
        Path log = dir.resolve("data").resolve("log-00000001.hfl");
        try (var f = new java.io.RandomAccessFile(log.toFile(), "rw")) {
            long at = f.length() - 1;
            f.seek(at);
            int b = f.read();
            f.seek(at);
            f.write(b ^ 1);
        }
        EmbeddedChannel ch = new EmbeddedChannel();
        RestoreStream s = stream(ch, 1, 0);
        try {
            s.pump();
        } catch (CorruptDataException e) {
            errors.add(e);
        }
        assertThat(errors).hasSize(1).first().isInstanceOf(CorruptDataException.class);
        List<Object> out = drain(ch);
        assertThat(out).noneMatch(o -> o instanceof RestoreEnd);
        out.forEach(io.netty.util.ReferenceCountUtil::release);
    }
}
