package org.holdfast.server.app;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Clock;
import org.holdfast.server.catalog.RocksCredentialStore;
import org.holdfast.server.security.AccessPrincipal;
import org.holdfast.server.security.ApiTokens;
import org.holdfast.server.security.AuditLog;
import org.holdfast.server.security.InitialAdmin;
import org.holdfast.server.security.Role;
import org.holdfast.server.security.UserDirectory;
import org.holdfast.server.store.DataDirectory;
import org.holdfast.server.store.MetadataDb;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The offline reset-admin and create-token, against a real data directory. */
class CredentialToolTest {
    @TempDir
    Path data;

    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private final ByteArrayOutputStream err = new ByteArrayOutputStream();

    private int run(String... args) {
        out.reset();
        err.reset();
        return CredentialTool.run(args, new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8),
                Clock.systemUTC());
    }

    @Test
    void createToken_json_printsTokenOnceThatAuthenticates() throws Exception {
        assertThat(run("create-token", "--data-dir", data.toString(), "--name", "ci", "--role", "agent", "--volumes", "db1,web-*",
                "--domain", "tenant-a", "--expires", "30d", "--json")).as(err.toString()).isZero();
        JsonNode j = new ObjectMapper().readTree(out.toString(StandardCharsets.UTF_8));
        String token = j.get("token").asText();
        assertThat(j.get("role").asText()).isEqualTo("agent");
        assertThat(j.get("volumes").toString()).isEqualTo("[\"db1\",\"web-*\"]");
        assertThat(j.get("expiresAt").asText()).isNotEmpty();
        assertThat(err.toString()).doesNotContain(token);
        try (DataDirectory dd = DataDirectory.open(data); MetadataDb db = MetadataDb.open(dd.catalogDir())) {
            AccessPrincipal p = new ApiTokens(new RocksCredentialStore(db), Clock.systemUTC(), AuditLog.NONE).authenticate(token);
            assertThat(p.role()).isEqualTo(Role.AGENT);
            assertThat(p.domain()).isEqualTo("tenant-a");
            assertThat(p.mayReach("web-1")).isTrue();
            assertThat(p.mayReach("db2")).isFalse();
        }
    }

    @Test
    void createToken_text_tokenAloneOnStdout() {
        assertThat(run("create-token", "--data-dir", data.toString(), "--name", "ops", "--role", "operator")).isZero();
        assertThat(out.toString().strip()).matches("hft_[0-9a-f]{16}_[A-Za-z0-9_-]{43}");
        assertThat(err.toString()).contains("shown once");
    }

    @Test
    void createToken_workerText_namesNoVolumes() {
        assertThat(run("create-token", "--data-dir", data.toString(), "--name", "worker-1", "--role", "worker")).isZero();
        assertThat(err.toString()).contains("(worker, domain ").doesNotContain("volumes");
        assertThat(run("create-token", "--data-dir", data.toString(), "--name", "backup-1", "--role", "agent", "--volumes", "db1")).isZero();
        assertThat(err.toString()).contains("(agent, volumes db1, domain ");
    }

    @Test
    void createToken_missingDataDir_saysHowToPrepareAFirstStart_andCreatesNothing() {
        Path missing = data.resolve("not-yet");
        assertThat(run("create-token", "--data-dir", missing.toString(), "--name", "worker-1", "--role", "worker")).isEqualTo(3);
        assertThat(err.toString()).contains("does not exist", "install -d -m 700 " + missing, "nothing was written");
        assertThat(out.toString()).isEmpty();
        assertThat(Files.exists(missing)).isFalse();
    }

    @Test
    void createToken_badArguments_exit2AndNothingStored() {
        assertThat(run("create-token", "--data-dir", data.toString(), "--name", "x", "--role", "boss")).isEqualTo(2);
        assertThat(err.toString()).contains("unknown role");
        assertThat(run("create-token", "--data-dir", data.toString(), "--name", "x", "--role", "viewer", "--volumes", "db1")).isEqualTo(2);
        assertThat(run("create-token", "--data-dir", data.toString(), "--role", "viewer")).isEqualTo(2);
        assertThat(run("create-token", "--data-dir", data.resolve("missing").toString(), "--name", "x", "--role", "viewer")).isEqualTo(3);
        try (DataDirectory dd = DataDirectory.open(data); MetadataDb db = MetadataDb.open(dd.catalogDir())) {
            assertThat(new RocksCredentialStore(db).tokens()).isEmpty();
        }
    }

    @Test
    void resetAdmin_writesNewPasswordFile0600_printsOnlyItsPath() throws Exception {
        assertThat(run("reset-admin", "--data-dir", data.toString())).as(err.toString()).isZero();
        Path file = data.resolve(InitialAdmin.FILE);
        String first = Files.readString(file).strip();
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(file))).isEqualTo("rw-------");
        assertThat(out.toString()).contains(file.toString()).doesNotContain(first);
        assertThat(run("reset-admin", "--data-dir", data.toString())).isZero();
        String second = Files.readString(file).strip();
        assertThat(second).isNotEqualTo(first);
        try (DataDirectory dd = DataDirectory.open(data); MetadataDb db = MetadataDb.open(dd.catalogDir())) {
            UserDirectory users = new UserDirectory(new RocksCredentialStore(db), new SpringPasswordHasher(), Clock.systemUTC(), AuditLog.NONE);
            assertThat(users.checkPassword("admin", second).role()).isEqualTo(Role.ADMIN);
            assertThat(users.require("admin").passwordHash()).startsWith("{bcrypt}");
        }
    }

    @Test
    void resetAdmin_whileDataDirectoryInUse_refusedWithExit3() {
        try (DataDirectory running = DataDirectory.open(data)) {
            assertThat(run("reset-admin", "--data-dir", data.toString())).isEqualTo(3);
            assertThat(err.toString()).contains("in use by a running Holdfast server")
                    .contains("then run reset-admin again").doesNotContain("choose another");
        }
        assertThat(Files.exists(data.resolve(InitialAdmin.FILE))).isFalse();
    }

    @Test
    void createToken_whileDataDirectoryInUse_namesTheApiInstead() {
        try (DataDirectory running = DataDirectory.open(data)) {
            assertThat(run("create-token", "--data-dir", data.toString(), "--name", "x", "--role", "agent")).isEqualTo(3);
            assertThat(err.toString()).contains("then run create-token again")
                    .contains("POST /api/v1/tokens").doesNotContain("choose another");
            assertThat(out.size()).as("no token printed").isZero();
        }
    }
}
