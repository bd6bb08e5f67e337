package org.holdfast.server.ingest;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.List;
import java.util.function.BiFunction;
import java.util.function.Supplier;
import org.holdfast.server.catalog.Catalog;
import org.holdfast.server.catalog.CommitHook;
import org.holdfast.server.catalog.ReferenceGuard;
import org.holdfast.server.catalog.SnapshotCommit;
import org.holdfast.server.engine.ExactFingerprintIndex;
import org.holdfast.server.engine.FingerprintIndex;
import org.holdfast.server.store.DataLog;
import org.holdfast.server.store.DataStore;
import org.holdfast.server.store.FsyncPolicy;
import org.holdfast.server.store.LogArchive;
import org.holdfast.server.store.MetadataDb;
import org.holdfast.server.store.VerifyLedger;
import org.holdfast.server.verify.DamageAttribution;

/**
 * A real server core (RocksDB, data logs, exact index unless told) with its ingest on a loopback ephemeral port, restartable.
 * Tokens come from an in-memory {@link TestTokens}; audit entries go to a {@link RecordingAuditLog}.
 */
public final class IngestHarness implements AutoCloseable {
    private final Path dir;
    private final long minFreeBytes;
    private final ReferenceGuard guard;
    private final IngestSettings settings;
    private final long rollBytes;
    private final int reserveBatch;
    private final BiFunction<MetadataDb, Path, FingerprintIndex> indexes;
    /** Backend s3: a new archive per start (closed at stop, after the store); null for a local store. */
    private final Supplier<LogArchive> archives;
    private LogArchive archive;
    /** Where sessions store and restores read blocks, made at every start; null: the harness's data store. */
    private Supplier<org.holdfast.server.store.BlockHome> blocks;
    private MetadataDb db;
    private DataStore store;
    private FingerprintIndex index;
    private Catalog catalog;
    private IngestServer server;
    private final TestTokens tokens = new TestTokens();
    private final RecordingAuditLog audit = new RecordingAuditLog();
    private volatile IngestObserver observer = IngestObserver.NONE;
    /** Forwards to {@link #observer}, so a test can set one after the server started. */
    private final IngestObserver forwarding = new IngestObserver() {
        @Override
        public void connected(org.holdfast.server.security.AccessPrincipal p, String remoteAddress, String agentName) {
            observer.connected(p, remoteAddress, agentName);
        }

        @Override
        public void backupEnded(org.holdfast.server.security.AccessPrincipal p, String volume, boolean ok, String detail, long bytes) {
            observer.backupEnded(p, volume, ok, detail, bytes);
        }

        @Override
        public void runReported(org.holdfast.server.security.AccessPrincipal p, String agentName,
                                org.holdfast.common.protocol.RunReport report) {
            observer.runReported(p, agentName, report);
        }

        @Override
        public void received(String volume, long bytes) {
            observer.received(volume, bytes);
        }

        @Override
        public void restored(String volume, long bytes) {
            observer.restored(volume, bytes);
        }
    };

    public IngestHarness(Path dir) {
        this(dir, 0, ReferenceGuard.NONE);
    }

    public IngestHarness(Path dir, long minFreeBytes, ReferenceGuard guard) {
        this(dir, minFreeBytes, guard, IngestSettings.loopback());
    }

    public IngestHarness(Path dir, long minFreeBytes, ReferenceGuard guard, IngestSettings settings) {
        this(dir, minFreeBytes, guard, settings, 1L << 20, 64);
    }

    /** Production-sized logs and PBN reservations (small ones above make tests roll and reserve often). */
    public static IngestHarness productionSized(Path dir) {
        return new IngestHarness(dir, 0, ReferenceGuard.NONE, IngestSettings.loopback(), 256L << 20, 1 << 16);
    }

    /** A harness whose index {@code indexes} opens, at every start, on the metadata database and the harness directory. */
    public static IngestHarness withIndex(Path dir, BiFunction<MetadataDb, Path, FingerprintIndex> indexes) {
        return new IngestHarness(dir, 0, ReferenceGuard.NONE, IngestSettings.loopback(), 1L << 20, 64, indexes);
    }

    /**
     * A harness whose index {@code indexes} opens and whose blocks live where {@code blocks} says (data on workers), each
     * asked anew at every start.
     */
    public static IngestHarness withBlocks(Path dir, BiFunction<MetadataDb, Path, FingerprintIndex> indexes,
                                           Supplier<org.holdfast.server.store.BlockHome> blocks) {
        IngestHarness h = new IngestHarness(dir, 0, ReferenceGuard.NONE, IngestSettings.loopback(), 1L << 20, 64, indexes, null, blocks);
        return h;
    }

    /** A harness with {@code settings} and the index {@code indexes} makes, whose blocks live where {@code blocks} says. */
    public static IngestHarness withBlocks(Path dir, IngestSettings settings, BiFunction<MetadataDb, Path, FingerprintIndex> indexes,
                                           Supplier<org.holdfast.server.store.BlockHome> blocks) {
        return new IngestHarness(dir, 0, ReferenceGuard.NONE, settings, 1L << 20, 64, indexes, null, blocks);
    }

    /** A harness with {@code settings} (exact index) whose blocks live where {@code blocks} says, asked anew at every start. */
    public static IngestHarness withBlocks(Path dir, IngestSettings settings, Supplier<org.holdfast.server.store.BlockHome> blocks) {
        return new IngestHarness(dir, 0, ReferenceGuard.NONE, settings, 1L << 20, 64, (db, d) -> new ExactFingerprintIndex(db), null, blocks);
    }

    /** A harness on backend s3: sealed logs of {@code rollBytes} go to the archive {@code archives} opens at every start. */
    public static IngestHarness withArchive(Path dir, long rollBytes, Supplier<LogArchive> archives) {
        return new IngestHarness(dir, 0, ReferenceGuard.NONE, IngestSettings.loopback(), rollBytes, 64, (db, d) -> new ExactFingerprintIndex(db),
                archives);
    }

    private IngestHarness(Path dir, long minFreeBytes, ReferenceGuard guard, IngestSettings settings, long rollBytes, int reserveBatch) {
        this(dir, minFreeBytes, guard, settings, rollBytes, reserveBatch, (db, d) -> new ExactFingerprintIndex(db));
    }

    private IngestHarness(Path dir, long minFreeBytes, ReferenceGuard guard, IngestSettings settings, long rollBytes, int reserveBatch,
                          BiFunction<MetadataDb, Path, FingerprintIndex> indexes) {
        this(dir, minFreeBytes, guard, settings, rollBytes, reserveBatch, indexes, null);
    }

    private IngestHarness(Path dir, long minFreeBytes, ReferenceGuard guard, IngestSettings settings, long rollBytes, int reserveBatch,
                          BiFunction<MetadataDb, Path, FingerprintIndex> indexes, Supplier<LogArchive> archives) {
        this(dir, minFreeBytes, guard, settings, rollBytes, reserveBatch, indexes, archives, null);
    }

    private IngestHarness(Path dir, long minFreeBytes, ReferenceGuard guard, IngestSettings settings, long rollBytes, int reserveBatch,
                          BiFunction<MetadataDb, Path, FingerprintIndex> indexes, Supplier<LogArchive> archives,
                          Supplier<org.holdfast.server.store.BlockHome> blocks) {
        this.blocks = blocks;
        this.indexes = indexes;
        this.archives = archives;
        this.rollBytes = rollBytes;
        this.reserveBatch = reserveBatch;
        this.settings = settings;
        this.dir = dir;
        this.minFreeBytes = minFreeBytes;
        this.guard = guard;
        start();
    }

    public void start() {
        db = MetadataDb.open(dir.resolve("catalog"));
        DataStore.Settings s = new DataStore.Settings(dir.resolve("data"), rollBytes, FsyncPolicy.COMMIT, reserveBatch, minFreeBytes);
        archive = archives == null ? null : archives.get();
        store = archive == null ? DataStore.open(s, db) : DataStore.open(s, db, archive);
        index = indexes.apply(db, dir);
        catalog = new Catalog(db);
        DamageAttribution.onMissingLogs(catalog, store, new VerifyLedger(db)); // as VerifyConfiguration wires it
        SnapshotCommit commit = new SnapshotCommit(catalog, CommitHook.NONE, Clock.systemUTC());
        server = new IngestServer(settings, new IngestServices(store, catalog, commit, index, guard, Clock.systemUTC(), tokens, audit,
                forwarding, BackupAdmission.NONE, blocks == null ? null : blocks.get()));
        server.start();
    }

    /** Stops in the production order: ingest, index, data store, database. */
    public void stop() {
        server.close();
        index.close();
        store.close();
        if (archive != null) {
            archive.close();
        }
        db.close();
    }

    public void restart() {
        stop();
        start();
    }

    /** Stops, deletes the data logs {@code ids} (a disk that lost them; backend s3 fetches them back), and starts. */
    public void restartWithoutLogs(List<Integer> ids) throws IOException {
        Path data = store.dir();
        stop();
        for (int id : ids) {
            Files.delete(data.resolve(DataLog.fileName(id)));
        }
        start();
    }

    public int port() {
        return server.port();
    }

    public Catalog catalog() {
        return catalog;
    }

    public DataStore store() {
        return store;
    }

    /** The index of the current start. */
    public FingerprintIndex index() {
        return index;
    }

    public IngestServer server() {
        return server;
    }

    public AgentDriver agent() {
        return new AgentDriver(port());
    }

    /** An agent that sends {@code token} in HELLO. */
    public AgentDriver agent(String token) {
        return new AgentDriver(port(), token);
    }

    /** The tokens the server accepts (kept across restarts); {@link TestTokens#DEFAULT_AGENT} reaches every volume. */
    /** What the ingest port reports from now on goes to {@code o}. */
    public void observer(IngestObserver o) {
        this.observer = o;
    }

    public TestTokens tokens() {
        return tokens;
    }

    /** What the server audited since this harness was made. */
    public RecordingAuditLog audit() {
        return audit;
    }

    public MetadataDb db() {
        return db;
    }

    @Override
    public void close() {
        stop();
    }
}
