package org.holdfast.server.gc;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Clock;
import java.time.Duration;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.Map;
import java.util.Random;
import java.util.stream.Stream;
import org.holdfast.common.compress.BlockCodec;
import org.holdfast.common.id.VolumeId;
import org.holdfast.server.catalog.SessionMap;
import org.holdfast.server.catalog.SnapshotCommit;
import org.holdfast.server.store.DataDirectory;
import org.holdfast.server.store.FormatVersions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

/**
 * Writes the store-v1 fixture (server/src/test/resources/fixtures/store-v1) with the release's own
 * store, catalog and GC classes. Run once, by hand, on the commit named in the fixture's README:
 * {@code mvn -pl server -am test -Dtest=StoreV1FixtureWriter -Dholdfast.fixture.out=/abs/dir}.
 * Nothing runs without the property.
 */
@EnabledIfSystemProperty(named = "holdfast.fixture.out", matches = ".+")
class StoreV1FixtureWriter {
    static final int BS = 4096;

    private final Map<String, Long> stored = new HashMap<>();
    private final StringBuilder expected = new StringBuilder();

    @Test
    void write() throws Exception {
        Path out = Path.of(System.getProperty("holdfast.fixture.out"));
        Files.createDirectories(out);
        try (Stream<Path> s = Files.list(out)) {
            assertThat(s.toList()).as("an empty target directory").isEmpty();
        }
        try (DataDirectory dd = DataDirectory.open(out);
             GcStoreFixture f = GcStoreFixture.open(dd.root(), Clock.systemUTC(), 1L << 16, Duration.ofHours(2), 8, h -> h);
             BlockCodec codec = new BlockCodec()) {
            byte[] alpha1 = image(1, 240);
            commit(f, codec, "alpha", alpha1, null, 0);
            byte[] alpha2 = alpha1.clone();
            Random r = new Random(2);
            for (int i = 0; i < 20; i++) {
                int lbn = 3 + i * 11;
                block(r, alpha2, lbn, i % 3 == 0);
            }
            for (int lbn = 200; lbn < 210; lbn++) {
                java.util.Arrays.fill(alpha2, lbn * BS, (lbn + 1) * BS, (byte) 0); // zeroed since the parent
            }
            System.arraycopy(alpha1, 1 * BS, alpha2, 230 * BS, BS); // new content of an LBN that is stored already
            commit(f, codec, "alpha", alpha2, alpha1, 1);
            byte[] beta = image(3, 64);
            System.arraycopy(alpha1, 2 * BS, beta, 5 * BS, BS); // shared with the other volume
            commit(f, codec, "beta", beta, null, 0);
        }
        Files.writeString(out.resolve("expected-sha256.txt"), expected.toString(), StandardCharsets.US_ASCII);
    }

    /** {@code blocks} blocks: every 10th zero, every 10th random (stored raw), the rest compressible (zstd), one repeat. */
    private static byte[] image(long seed, int blocks) {
        byte[] b = new byte[blocks * BS];
        Random r = new Random(seed);
        for (int lbn = 0; lbn < blocks; lbn++) {
            if (lbn % 10 == 9) {
                continue;
            }
            block(r, b, lbn, lbn % 10 == 0);
        }
        if (blocks > 77) {
            System.arraycopy(b, 13 * BS, b, 77 * BS, BS);
        }
        return b;
    }

    private static void block(Random r, byte[] img, int lbn, boolean random) {
        int at = lbn * BS;
        if (random) {
            byte[] x = new byte[BS];
            r.nextBytes(x);
            System.arraycopy(x, 0, img, at, BS);
        } else {
            byte[] x = new byte[160];
            r.nextBytes(x);
            System.arraycopy(x, 0, img, at, x.length);
            java.util.Arrays.fill(img, at + x.length, at + BS, (byte) (lbn % 7 + 1));
        }
    }

    /** Stores the blocks of {@code img} that differ from {@code parent} (all when null) and commits them. */
    private void commit(GcStoreFixture f, BlockCodec codec, String volume, byte[] img, byte[] parent, long parentSeq) throws Exception {
        int blocks = img.length / BS;
        SessionMap m = new SessionMap(blocks);
        byte[] z = new byte[BS + FormatVersions.COMPRESSED_SLACK];
        long sent = 0;
        long fresh = 0;
        long bytes = 0;
        for (int lbn = 0; lbn < blocks; lbn++) {
            int at = lbn * BS;
            if (parent != null && java.util.Arrays.equals(img, at, at + BS, parent, at, at + BS)) {
                continue;
            }
            boolean zero = true;
            for (int i = at; i < at + BS && zero; i++) {
                zero = img[i] == 0;
            }
            if (zero) {
                if (parent != null) {
                    m.add(lbn, 0);
                }
                continue;
            }
            byte[] fp = MessageDigest.getInstance("SHA-256").digest(java.util.Arrays.copyOfRange(img, at, at + BS));
            String key = HexFormat.of().formatHex(fp);
            Long pbn = stored.get(key);
            sent++;
            if (pbn == null) {
                int zl = codec.compress(img, at, BS, z, 0);
                long p = zl > 0 && zl < BS ? f.store.append(fp, 0, z, 0, zl, FormatVersions.CODEC_ZSTD, BS)
                        : f.store.append(fp, 0, img, at, BS, FormatVersions.CODEC_RAW, BS);
                bytes += zl > 0 && zl < BS ? zl : BS;
                fresh++;
                pbn = p;
                stored.put(key, p);
            }
            assertThat(f.gc.guard().protect(pbn)).isTrue();
            m.add(lbn, pbn);
        }
        f.store.sync();
        SnapshotCommit.Request req = new SnapshotCommit.Request(new VolumeId(volume), BS, img.length, parentSeq, m, img.length, sent, fresh,
                bytes);
        long seq = f.commit.commit(req).snapshot().sequence();
        expected.append(volume).append(' ').append(seq).append(' ').append(img.length).append(' ')
                .append(HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(img))).append('\n');
    }

    static Map<String, String> readExpected(Path file) throws IOException {
        Map<String, String> out = new java.util.TreeMap<>();
        for (String line : Files.readAllLines(file, StandardCharsets.US_ASCII)) {
            String[] f = line.split(" ");
            out.put(f[0] + "@" + f[1], f[2] + " " + f[3]);
        }
        return out;
    }
}
