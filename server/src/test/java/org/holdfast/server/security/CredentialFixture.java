package org.holdfast.server.security;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.holdfast.server.catalog.RocksCredentialStore;
import org.holdfast.server.store.MetadataDb;

/** A real catalog in a temp directory with the credential store on it, and an audit log kept in a list. */
final class CredentialFixture implements AutoCloseable {
    final Path dir;
    final MetadataDb db;
    final RocksCredentialStore store;
    final org.holdfast.server.engine.SteppingClock clock = new org.holdfast.server.engine.SteppingClock(java.time.Instant.ofEpochMilli(1_700_000_000_000L));
    final List<AuditEvent> audit = new ArrayList<>();
    final AuditLog auditLog = e -> {
        synchronized (audit) {
            audit.add(e);
        }
    };
    /** Cheap, deterministic hasher for core tests (the real one is Spring's bcrypt, tested in app). */
    static final PasswordHasher PLAIN_HASHER = new PasswordHasher() {
        @Override
        public String hash(CharSequence password) {
            return "{test}" + new StringBuilder(password).reverse();
        }

        @Override
        public boolean matches(CharSequence password, String hash) {
            return hash(password).equals(hash);
        }
    };

    CredentialFixture(Path dir) {
        this.dir = dir;
        this.db = MetadataDb.open(dir.resolve("catalog"));
        this.store = new RocksCredentialStore(db);
    }

    ApiTokens tokens() {
        return new ApiTokens(store, clock, auditLog);
    }

    UserDirectory users() {
        return new UserDirectory(store, PLAIN_HASHER, clock, auditLog);
    }

    @Override
    public void close() {
        db.close();
    }
}
