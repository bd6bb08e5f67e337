package org.holdfast.server.e2e;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import org.holdfast.server.app.CredentialTool;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import org.holdfast.common.ports.TestPorts;
import org.holdfast.common.tls.CertificateFingerprint;

/**
 * The real Holdfast server as a child process on 127.0.0.1, on a data directory that outlives
 * the process: {@link #kill()} sends SIGKILL, {@link #start()} brings a new process up on the
 * same data directory (on fresh ports), and {@link #close()} stops it for good. TLS is on unless
 * {@code holdfast.tls.enabled=false} is passed: the REST client then trusts exactly the certificate
 * the server made in {@code <data-dir>/tls/server.crt}, and agents get {@link #agentTrustArgs()}.
 *
 * <p>Before the first start it issues, with the offline {@code create-token}, an admin token (sent
 * with every REST call) and an agent token for every volume ({@link #agentToken()}, also in
 * {@link #agentTokenFile()}); {@link AgentProcess} passes the latter to agents aimed at this server.
 */
public final class ServerProcess implements AutoCloseable {
    static final String MAIN_CLASS = "org.holdfast.server.app.HoldfastServer";
    private static final Duration STARTUP_TIMEOUT = Duration.ofSeconds(180);

    private final Path dataDir;
    private final Path tmpDir;
    private final String engine;
    private final Map<String, String> extraProperties;
    private final LogDir logs;
    private final boolean tls;
    /** Built once the server's certificate is known, trusting exactly it (see {@link #http()}). */
    private HttpClient http;
    private CertificateFingerprint httpTrusts;

    private Process process;
    private int httpPort;
    private int ingestPort;
    private Path stdout;
    private Path stderr;
    private int starts;
    private String adminToken;
    private String agentToken;
    private final Path agentTokenFile;
    /** The {@code -Dholdfast.kill-point} option for the next start only, or null. */
    private String killPoint;
    /** The running process was started with a kill point armed. */
    private boolean armedThisStart;
    /** The {@code -Xmx} of every start. */
    private String maxHeap = "512m";
    /** JVM options after the harness's own, for every start. */
    private List<String> extraJvmOptions = List.of();

    /** Agent token per ingest address of a running server, for {@link AgentProcess}. */
    private static final Map<String, String> AGENT_TOKENS = new ConcurrentHashMap<>();

    private ServerProcess(Path workDir, String engine, Map<String, String> extraProperties, LogDir logs) {
        this.dataDir = workDir.resolve("data");
        this.tmpDir = workDir.resolve("tmp");
        this.engine = engine;
        this.extraProperties = new LinkedHashMap<>(extraProperties);
        this.tls = !"false".equals(extraProperties.get("holdfast.tls.enabled"));
        this.logs = logs;
        this.agentTokenFile = workDir.resolve("agent-token");
    }

    /** Starts a server with a fresh data directory under {@code workDir} and waits until it is healthy. */
    public static ServerProcess start(Path workDir, String engine, LogDir logs) {
        return start(workDir, engine, Map.of(), logs);
    }

    /** As {@link #start(Path, String, LogDir)} with extra {@code --key=value} properties. */
    public static ServerProcess start(Path workDir, String engine, Map<String, String> extraProperties, LogDir logs) {
        ServerProcess s = new ServerProcess(workDir, engine, extraProperties, logs);
        s.start();
        return s;
    }

    /** As {@link #start(Path, String, Map, LogDir)} with the server's heap limited to {@code maxHeap} (e.g. {@code 256m}). */
    public static ServerProcess startWithHeap(Path workDir, String engine, Map<String, String> extraProperties, LogDir logs, String maxHeap) {
        return startWithHeap(workDir, engine, extraProperties, logs, maxHeap, List.of());
    }

    /** As above, every start with {@code extraJvmOptions} after the harness's own (e.g. {@link ChildJvm#FULL_JIT}). */
    public static ServerProcess startWithHeap(Path workDir, String engine, Map<String, String> extraProperties, LogDir logs, String maxHeap,
                                              List<String> extraJvmOptions) {
        ServerProcess s = new ServerProcess(workDir, engine, extraProperties, logs);
        s.maxHeap = maxHeap;
        s.extraJvmOptions = List.copyOf(extraJvmOptions);
        s.start();
        return s;
    }

    /**
     * As {@link #start(Path, String, Map, LogDir)} with {@code point} armed in this first start: the
     * process halts at the point's {@code count}-th hit (see {@link #awaitKillPoint}).
     */
    public static ServerProcess startArmed(Path workDir, String engine, Map<String, String> extraProperties, LogDir logs,
            org.holdfast.common.kill.KillPoint point, int count) {
        ServerProcess s = new ServerProcess(workDir, engine, extraProperties, logs);
        s.armKillPoint(point, count);
        s.start();
        return s;
    }

    /** Starts a new process on the same data directory, on fresh ports, and waits until it is healthy. */
    public void start() {
        start(true);
    }

    private void start(boolean freshPorts) {
        if (process != null && process.isAlive()) {
            throw new IllegalStateException("server already running, pid " + process.pid());
        }
        try {
            Files.createDirectories(dataDir);
            Files.createDirectories(tmpDir);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        if (adminToken == null) {
            issueTokens();
        }
        if (freshPorts || httpPort == 0) {
            // claimed, not probed: test JVMs side by side never hand out the same port (TestPorts)
            httpPort = TestPorts.claim();
            ingestPort = TestPorts.claim();
        }
        starts++;
        Path[] out = logs.next("server-" + engine + "-start" + starts);
        stdout = out[0];
        stderr = out[1];
        List<String> args = new ArrayList<>(List.of(
                "--holdfast.data-dir=" + dataDir,
                "--server.address=127.0.0.1",
                "--server.port=" + httpPort,
                "--holdfast.ingest.host=127.0.0.1",
                "--holdfast.ingest.port=" + ingestPort,
                "--holdfast.dedup.engine=" + engine,
                "--spring.main.banner-mode=off"));
        extraProperties.forEach((k, v) -> args.add("--" + k + "=" + v));
        // tmpdir inside the work dir: RocksDB unpacks its native library there on every start,
        // and a SIGKILLed JVM never deletes it.
        List<String> jvm = new ArrayList<>(List.of("-Xmx" + maxHeap, "-XX:+UseSerialGC",
                "-Djava.io.tmpdir=" + tmpDir));
        jvm.addAll(extraJvmOptions);
        armedThisStart = killPoint != null;
        if (killPoint != null) {
            jvm.add(killPoint);
            killPoint = null;
        }
        process = ChildJvm.start(MAIN_CLASS, jvm, ChildJvm.serverClasspath(), args, stdout, stderr);
        AGENT_TOKENS.put(ingestAddress(), agentToken);
        awaitHealthy();
    }

    /**
     * As {@link #start()}, on the ports of the previous process: for a client that keeps one address,
     * such as the agent daemon's config (the ports were free until the kill, and the JDK binds with
     * SO_REUSEADDR).
     */
    public void startOnSamePorts() {
        start(false);
    }

    /** The offline create-token, in this JVM, on the stopped server's data directory. */
    private void issueTokens() {
        adminToken = createToken("e2e-admin", "admin");
        agentToken = createToken("e2e-agent", "agent");
        try {
            Files.deleteIfExists(agentTokenFile);
            Files.createFile(agentTokenFile, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
            Files.writeString(agentTokenFile, agentToken + "\n", StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private String createToken(String name, String role) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int exit = CredentialTool.run(new String[] {"create-token", "--data-dir", dataDir.toString(), "--name", name, "--role", role},
                new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8), Clock.systemUTC());
        if (exit != 0) {
            throw new IllegalStateException("create-token " + role + " failed with " + exit + ": " + err.toString(StandardCharsets.UTF_8));
        }
        return out.toString(StandardCharsets.UTF_8).strip();
    }

    /** The admin API token every REST call of this harness carries. */
    public String adminToken() {
        return adminToken;
    }

    /** An agent token reaching every volume ({@code *}). */
    public String agentToken() {
        return agentToken;
    }

    /** {@link #agentToken()} in a file (mode 0600), for the agent's {@code --token-file}. */
    public Path agentTokenFile() {
        return agentTokenFile;
    }

    /** The agent token of the server listening on {@code ingestAddress}, or null if no harness server does. */
    static String agentTokenFor(String ingestAddress) {
        return ingestAddress == null ? null : AGENT_TOKENS.get(ingestAddress);
    }

    private void awaitHealthy() {
        long deadline = System.nanoTime() + STARTUP_TIMEOUT.toNanos();
        String last = "no answer yet";
        while (System.nanoTime() < deadline) {
            if (!process.isAlive()) {
                if (armedThisStart && process.exitValue() == org.holdfast.common.kill.KillPoints.HALT_STATUS) {
                    return; // it reached its armed kill point already: the caller awaits that (awaitKillPoint)
                }
                throw new IllegalStateException("server exited with " + process.exitValue() + " during startup\n"
                        + diagnostics());
            }
            if (tls && !Files.exists(certificateFile())) {
                sleep(50); // the server writes its self-signed certificate early in its start
                continue;
            }
            try {
                HttpResponse<String> r = http().send(HttpRequest.newBuilder(uri("/actuator/health"))
                        .timeout(Duration.ofSeconds(5)).GET().build(), HttpResponse.BodyHandlers.ofString());
                last = r.statusCode() + " " + r.body();
                // DEGRADED: serving, with a bad block recorded (verify); backups and repairs work
                if (r.statusCode() == 200 && (r.body().contains("\"UP\"") || r.body().contains("\"DEGRADED\"")) && (worker() || ingestAccepts())) {
                    return;
                }
            } catch (IOException e) {
                last = e.toString();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
            sleep(50); // a start takes seconds; a fine poll takes the test on the moment it is up
        }
        ChildJvm.sigkill(process);
        throw new IllegalStateException("server not healthy after " + STARTUP_TIMEOUT + ": " + last + "\n" + diagnostics());
    }

    /** A worker (holdfast.cluster.role=worker) opens no agent port. */
    private boolean worker() {
        return "worker".equals(extraProperties.get("holdfast.cluster.role"));
    }

    private boolean ingestAccepts() {
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), ingestPort), 2000);
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    /** Arms {@code point} in the next {@link #start()} only: that process halts at the point's {@code count}-th hit. */
    public void armKillPoint(org.holdfast.common.kill.KillPoint point, int count) {
        killPoint = CrashLoop.armOption(point, count);
    }

    /**
     * Waits up to {@code timeout} for the process to halt at its armed kill point; true if it did (exit
     * status {@link org.holdfast.common.kill.KillPoints#HALT_STATUS}), false if it still runs (then it
     * is left running) or exited otherwise.
     */
    public boolean awaitKillPoint(Duration timeout) throws InterruptedException {
        if (!process.waitFor(timeout.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS)) {
            return false;
        }
        return process.exitValue() == org.holdfast.common.kill.KillPoints.HALT_STATUS;
    }

    /** SIGSTOP: the process runs nothing until {@link #thaw()}; {@link #kill()} ends it as it stands. */
    public void freeze() {
        ChildJvm.signal(process, "STOP");
    }

    /** SIGCONT after {@link #freeze()}. */
    public void thaw() {
        ChildJvm.signal(process, "CONT");
    }

    /** SIGKILL, no shutdown hooks, no flush. Returns true if the signal ended the process. */
    public boolean kill() {
        return ChildJvm.sigkill(process);
    }

    /** The running process, for a test that kills it at a moment of its own choosing. */
    public Process process() {
        return process;
    }

    public boolean isAlive() {
        return process != null && process.isAlive();
    }

    /** {@code 127.0.0.1:port} of the agent protocol, as the agent's {@code --server} wants it. */
    public String ingestAddress() {
        return "127.0.0.1:" + ingestPort;
    }

    public int ingestPort() {
        return ingestPort;
    }

    public int httpPort() {
        return httpPort;
    }

    public String engine() {
        return engine;
    }

    public Path dataDir() {
        return dataDir;
    }

    /** GET on the REST API, e.g. {@code /api/v1/volumes/x/snapshots}. */
    public HttpResponse<String> get(String path) {
        return call("GET", path, null);
    }

    /** Any REST call as the harness's admin; {@code jsonBody} may be null. */
    public HttpResponse<String> call(String method, String path, String jsonBody) {
        return callAs(adminToken, method, path, jsonBody);
    }

    /** Any REST call with {@code token} (an API or console session token); {@code jsonBody} may be null. */
    public HttpResponse<String> callAs(String token, String method, String path, String jsonBody) {
        HttpRequest.Builder b = HttpRequest.newBuilder(uri(path)).timeout(Duration.ofSeconds(30))
                .header("Authorization", "Bearer " + token)
                .method(method, jsonBody == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(jsonBody));
        if (jsonBody != null) {
            b.header("Content-Type", "application/json");
        }
        try {
            return http().send(b.build(), HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            throw new UncheckedIOException(method + " " + path, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /**
     * Starts a job ({@code POST path}, e.g. {@code /api/v1/gc/runs}, which answers 202 with a
     * Location) and polls it until it has ended; answers the ended job (check its {@code state}).
     */
    public com.fasterxml.jackson.databind.JsonNode runJob(String path, Duration timeout) {
        HttpResponse<String> started = call("POST", path, null);
        if (started.statusCode() != 202) {
            throw new IllegalStateException("POST " + path + " answered " + started.statusCode() + ": " + started.body());
        }
        String location = started.headers().firstValue("Location").orElseThrow();
        com.fasterxml.jackson.databind.ObjectMapper json = new com.fasterxml.jackson.databind.ObjectMapper();
        long deadline = System.nanoTime() + timeout.toNanos();
        try {
            while (true) {
                com.fasterxml.jackson.databind.JsonNode job = json.readTree(get(location).body());
                String state = job.path("state").asText();
                if (state.equals("succeeded") || state.equals("failed") || state.equals("cancelled")) {
                    return job;
                }
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("job " + location + " still " + state + " after " + timeout + ": " + job);
                }
                Thread.sleep(50);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    private URI uri(String path) {
        return URI.create((tls ? "https" : "http") + "://127.0.0.1:" + httpPort + path);
    }

    /** True unless started with {@code holdfast.tls.enabled=false}. */
    public boolean tls() {
        return tls;
    }

    /** {@code <data-dir>/tls/server.crt}, the self-signed certificate the server made at its first start. */
    public Path certificateFile() {
        return dataDir.resolve("tls").resolve("server.crt");
    }

    /** The SHA-256 fingerprint of the server's certificate, read from {@link #certificateFile()}. */
    public CertificateFingerprint fingerprint() {
        return CertificateFingerprint.of(certificate());
    }

    /** The options that make an agent trust this server: {@code --fingerprint <its fingerprint>}, or {@code --no-tls}. */
    public List<String> agentTrustArgs() {
        return tls ? List.of("--fingerprint", fingerprint().toString()) : List.of("--no-tls");
    }

    /** A client TLS context that trusts exactly this server's certificate (host name 127.0.0.1 checked), or null without TLS. */
    public SSLContext clientTls() {
        if (!tls) {
            return null;
        }
        try {
            KeyStore ks = KeyStore.getInstance("PKCS12");
            ks.load(null, null);
            ks.setCertificateEntry("holdfast", certificate());
            TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            tmf.init(ks);
            SSLContext ctx = SSLContext.getInstance("TLS");
            ctx.init(null, tmf.getTrustManagers(), null);
            return ctx;
        } catch (GeneralSecurityException | IOException e) {
            throw new IllegalStateException("cannot trust " + certificateFile() + ": " + e, e);
        }
    }

    private X509Certificate certificate() {
        try (var in = Files.newInputStream(certificateFile())) {
            return (X509Certificate) CertificateFactory.getInstance("X.509").generateCertificate(in);
        } catch (IOException | GeneralSecurityException e) {
            throw new IllegalStateException("cannot read the server certificate " + certificateFile() + ": " + e, e);
        }
    }

    /** The HTTP client, rebuilt when the server's certificate changed (a test may replace it). */
    private synchronized HttpClient http() {
        CertificateFingerprint now = tls ? fingerprint() : null;
        if (http == null || !java.util.Objects.equals(now, httpTrusts)) {
            HttpClient.Builder b = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5));
            if (tls) {
                b.sslContext(clientTls());
            }
            http = b.build();
            httpTrusts = now;
        }
        return http;
    }

    /** Bytes of all files under the data directory; files vanishing during the walk are skipped. */
    public long dataDirBytes() {
        return bytesUnder(dataDir);
    }

    /**
     * Bytes of the data logs ({@code data/} of the data directory, the whole directory if that is
     * absent): they grow as uploaded blocks arrive, so a test can time a kill by them. Cheaper to
     * poll than {@link #dataDirBytes()}.
     */
    public long dataLogBytes() {
        Path logs = dataDir.resolve("data");
        return bytesUnder(Files.isDirectory(logs) ? logs : dataDir);
    }

    /**
     * Bytes of a worker's range data logs ({@code range-data/data/} of its data directory; 0 before it
     * exists): with {@code holdfast.cluster.data=workers} they grow as the master stores blocks there, so
     * a test can time a kill of the storing worker by them.
     */
    public long rangeDataLogBytes() {
        Path logs = dataDir.resolve("range-data").resolve("data");
        return Files.isDirectory(logs) ? bytesUnder(logs) : 0;
    }

    private static long bytesUnder(Path dir) {
        try (Stream<Path> files = Files.walk(dir)) {
            return files.mapToLong(p -> {
                try {
                    return Files.isRegularFile(p) ? Files.size(p) : 0;
                } catch (NoSuchFileException e) {
                    return 0;
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            }).sum();
        } catch (UncheckedIOException e) {
            if (e.getCause() instanceof NoSuchFileException) {
                return bytesUnder(dir);
            }
            throw e;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The tail of the current process's stdout and stderr, for failure messages. */
    public String diagnostics() {
        return "--- server stdout " + stdout + "\n" + ChildJvm.tail(stdout, 4000)
                + "\n--- server stderr " + stderr + "\n" + ChildJvm.tail(stderr, 4000);
    }

    /** The whole stdout of the current process (the server logs there). */
    public String log() {
        return ChildJvm.tail(stdout, Integer.MAX_VALUE) + ChildJvm.tail(stderr, Integer.MAX_VALUE);
    }

    /** Stops the process: SIGTERM, and SIGKILL if it has not exited after 30 s. */
    @Override
    public void close() {
        if (process == null || !process.isAlive()) {
            return;
        }
        process.destroy();
        try {
            if (!process.waitFor(30, TimeUnit.SECONDS)) {
                ChildJvm.sigkill(process);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            ChildJvm.sigkill(process);
        }
    }

    static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
