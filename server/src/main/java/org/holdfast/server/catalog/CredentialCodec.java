package org.holdfast.server.catalog;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.BufferUnderflowException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import org.holdfast.server.security.Role;
import org.holdfast.server.security.TokenRecord;
import org.holdfast.server.security.UserRecord;
import org.holdfast.server.security.VolumeScope;
import org.holdfast.server.store.FormatVersions;

/**
 * Byte layouts of user and API-token records (big-endian; docs/architecture.md, "Users and API
 * tokens"). Each value starts with a magic byte and a version byte, so a foreign or future record
 * is refused with a clear error instead of being misread. Strings are u16 length + UTF-8.
 */
final class CredentialCodec {
    private static final int MAX_STRING_BYTES = 4096;
    private static final int FLAG_DISABLED = 1;
    private static final int FLAG_REVOKED = 1;

    private CredentialCodec() {
    }

    /** Stable role codes (never the enum ordinal). */
    static int roleCode(Role r) {
        return switch (r) {
            case ADMIN -> 1;
            case OPERATOR -> 2;
            case VIEWER -> 3;
            case AGENT -> 4;
            case WORKER -> 5;
        };
    }

    static Role role(int code) {
        return switch (code) {
            case 1 -> Role.ADMIN;
            case 2 -> Role.OPERATOR;
            case 3 -> Role.VIEWER;
            case 4 -> Role.AGENT;
            case 5 -> Role.WORKER;
            default -> throw new IllegalArgumentException("unknown role code " + code);
        };
    }

    static byte[] encodeUser(UserRecord u) {
        ByteArrayOutputStream out = begin(96, FormatVersions.USER_RECORD_MAGIC, u.role(), u.disabled() ? FLAG_DISABLED : 0, u.createdMillis());
        putString(out, u.passwordHash());
        return out.toByteArray();
    }

    /** @throws IllegalArgumentException if the bytes are not a user record this version can read */
    static UserRecord decodeUser(String name, byte[] value) {
        return decode(value, FormatVersions.USER_RECORD_MAGIC, "user", b -> {
            Role role = role(b.get() & 0xff);
            int flags = b.get() & 0xff;
            long created = b.getLong();
            String hash = getString(b);
            trailer(b);
            return new UserRecord(name, role, hash, created, (flags & FLAG_DISABLED) != 0);
        });
    }

    static byte[] encodeToken(TokenRecord t) {
        ByteArrayOutputStream out = begin(160, FormatVersions.TOKEN_RECORD_MAGIC, t.role(), t.revoked() ? FLAG_REVOKED : 0, t.createdMillis());
        putLong(out, t.expiresMillis());
        putLong(out, t.revokedMillis());
        putLong(out, t.lastUsedMillis());
        out.writeBytes(t.secretHash());
        putString(out, t.name());
        putString(out, t.domain());
        putString(out, t.creator());
        List<String> patterns = t.scope().patterns();
        putShort(out, patterns.size());
        for (String p : patterns) {
            putString(out, p);
        }
        return out.toByteArray();
    }

    /** @throws IllegalArgumentException if the bytes are not a token record this version can read */
    static TokenRecord decodeToken(String id, byte[] value) {
        return decode(value, FormatVersions.TOKEN_RECORD_MAGIC, "token", b -> {
            Role role = role(b.get() & 0xff);
            b.get(); // flags: revocation is carried by revokedMillis, the flag is for readers of the raw bytes
            long created = b.getLong();
            long expires = b.getLong();
            long revoked = b.getLong();
            long lastUsed = b.getLong();
            byte[] hash = new byte[TokenRecord.HASH_BYTES];
            b.get(hash);
            String name = getString(b);
            String domain = getString(b);
            String creator = getString(b);
            int n = b.getShort() & 0xffff;
            List<String> patterns = new ArrayList<>(Math.min(n, 256));
            for (int i = 0; i < n; i++) {
                patterns.add(getString(b));
            }
            trailer(b);
            return new TokenRecord(id, name, role, new VolumeScope(patterns), domain, created, expires, revoked, lastUsed, creator, hash);
        });
    }

    /**
     * A buffer of {@code capacity} holding the fields both records start with: magic, version, role
     * code, flags, created millis.
     */
    private static ByteArrayOutputStream begin(int capacity, int magic, Role role, int flags, long createdMillis) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(capacity);
        out.write(magic);
        out.write(FormatVersions.CREDENTIAL_RECORD_VERSION);
        out.write(roleCode(role));
        out.write(flags);
        putLong(out, createdMillis);
        return out;
    }

    /**
     * The record {@code body} makes of {@code value} after its header (magic {@code magic}, this
     * version); {@code body} checks the {@link #trailer} before it makes the record, so that a
     * longer value is refused as such. {@code what} names the record in the errors.
     *
     * @throws IllegalArgumentException if the header is foreign or the record truncated (or what {@code body} throws)
     */
    private static <T> T decode(byte[] value, int magic, String what, Function<ByteBuffer, T> body) {
        try {
            ByteBuffer b = ByteBuffer.wrap(value);
            header(b, magic, what);
            return body.apply(b);
        } catch (BufferUnderflowException e) {
            throw new IllegalArgumentException(what + " record is truncated (" + value.length + " bytes)");
        }
    }

    private static void header(ByteBuffer b, int magic, String what) {
        int m = b.get() & 0xff;
        int v = b.get() & 0xff;
        if (m != magic) {
            throw new IllegalArgumentException(what + " record has magic 0x" + Integer.toHexString(m) + ", expected 0x"
                    + Integer.toHexString(magic));
        }
        if (v != FormatVersions.CREDENTIAL_RECORD_VERSION) {
            throw new IllegalArgumentException(what + " record has version " + v + ", this server reads version "
                    + FormatVersions.CREDENTIAL_RECORD_VERSION + " (a newer server wrote it?)");
        }
    }

    private static void trailer(ByteBuffer b) {
        if (b.hasRemaining()) {
            throw new IllegalArgumentException("record has " + b.remaining() + " unexpected trailing bytes");
        }
    }

    private static void putLong(ByteArrayOutputStream out, long v) {
        out.writeBytes(ByteBuffer.allocate(8).putLong(v).array());
    }

    private static void putShort(ByteArrayOutputStream out, int v) {
        out.write((v >>> 8) & 0xff);
        out.write(v & 0xff);
    }

    private static void putString(ByteArrayOutputStream out, String s) {
        byte[] bytes = s.getBytes(StandardCharsets.UTF_8);
        if (bytes.length > MAX_STRING_BYTES) {
            throw new IllegalArgumentException("string of " + bytes.length + " bytes is longer than " + MAX_STRING_BYTES);
        }
        putShort(out, bytes.length);
        out.writeBytes(bytes);
    }

    private static String getString(ByteBuffer b) {
        int n = b.getShort() & 0xffff;
        if (n > MAX_STRING_BYTES || n > b.remaining()) {
            throw new IllegalArgumentException("string length " + n + " exceeds the record or the limit " + MAX_STRING_BYTES);
        }
        byte[] bytes = new byte[n];
        b.get(bytes);
        return new String(bytes, StandardCharsets.UTF_8);
    }
}
