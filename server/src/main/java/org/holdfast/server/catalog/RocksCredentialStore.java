package org.holdfast.server.catalog;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.holdfast.server.security.CredentialStore;
import org.holdfast.server.security.TokenRecord;
import org.holdfast.server.security.UserRecord;
import org.holdfast.server.store.CheckedIterator;
import org.holdfast.server.store.CorruptDataException;
import org.holdfast.server.store.MetadataBatch;
import org.holdfast.server.store.MetadataDb;
import org.holdfast.server.store.MetadataDb.Column;
import org.rocksdb.ColumnFamilyHandle;

/**
 * Users and API tokens in the catalog's {@code users} and {@code tokens} column families
 * (layouts in {@link CredentialCodec}). Every write is one synced batch: a token revoked or a
 * password changed is durable before the call returns.
 */
public final class RocksCredentialStore implements CredentialStore {
    private static final String STORE = "credentials";

    private final MetadataDb db;
    private final ColumnFamilyHandle users;
    private final ColumnFamilyHandle tokens;

    public RocksCredentialStore(MetadataDb db) {
        this.db = db;
        this.users = db.handle(Column.USERS);
        this.tokens = db.handle(Column.TOKENS);
    }

    @Override
    public Optional<UserRecord> user(String name) {
        byte[] v = db.get(users, key(name));
        return v == null ? Optional.empty() : Optional.of(decodeUser(name, v));
    }

    @Override
    public List<UserRecord> users() {
        List<UserRecord> all = new ArrayList<>();
        try (CheckedIterator it = db.iterator(users)) {
            for (it.seekToFirst(); it.isValid(); it.next()) {
                String name = new String(it.key(), StandardCharsets.UTF_8);
                all.add(decodeUser(name, it.value()));
            }
        }
        return all;
    }

    @Override
    public void putUser(UserRecord user) {
        write(users, user.name(), CredentialCodec.encodeUser(user), false);
    }

    @Override
    public boolean deleteUser(String name) {
        if (db.get(users, key(name)) == null) {
            return false;
        }
        write(users, name, null, true);
        return true;
    }

    @Override
    public Optional<TokenRecord> token(String id) {
        byte[] v = db.get(tokens, key(id));
        return v == null ? Optional.empty() : Optional.of(decodeToken(id, v));
    }

    @Override
    public List<TokenRecord> tokens() {
        List<TokenRecord> all = new ArrayList<>();
        try (CheckedIterator it = db.iterator(tokens)) {
            for (it.seekToFirst(); it.isValid(); it.next()) {
                String id = new String(it.key(), StandardCharsets.UTF_8);
                all.add(decodeToken(id, it.value()));
            }
        }
        return all;
    }

    @Override
    public void putToken(TokenRecord token) {
        write(tokens, token.id(), CredentialCodec.encodeToken(token), false);
    }

    private void write(ColumnFamilyHandle cf, String key, byte[] value, boolean delete) {
        try (MetadataBatch b = new MetadataBatch()) {
            if (delete) {
                db.delete(b, cf, key(key));
            } else {
                db.put(b, cf, key(key), value);
            }
            db.write(b, true);
        }
    }

    private UserRecord decodeUser(String name, byte[] v) {
        try {
            return CredentialCodec.decodeUser(name, v);
        } catch (IllegalArgumentException e) {
            throw new CorruptDataException(STORE, db.path(), "user:" + name, e.getMessage());
        }
    }

    private TokenRecord decodeToken(String id, byte[] v) {
        try {
            return CredentialCodec.decodeToken(id, v);
        } catch (IllegalArgumentException e) {
            throw new CorruptDataException(STORE, db.path(), "token:" + id, e.getMessage());
        }
    }

    private static byte[] key(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
