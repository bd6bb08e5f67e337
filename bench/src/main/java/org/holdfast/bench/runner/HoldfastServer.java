package org.holdfast.bench.runner;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.holdfast.common.ports.TestPorts;

/**
 * The real Holdfast server as a child process ({@code java -jar}, with the launcher's
 * server/bin/jvm.options) on 127.0.0.1 with a fresh data directory and free ports; started once
 * per workload and engine.
 */
public final class HoldfastServer implements AutoCloseable {
    private static final Duration STARTUP = Duration.ofSeconds(180);

    private final Path dataDir;
    private final WatchedProcess process;
    private final int httpPort;
    private final int ingestPort;
    private final String adminToken;
    private final String agentToken;
    private final boolean tls;
    /** Built once the server has written its certificate; trusts exactly that certificate. */
    private HttpClient http;

    private HoldfastServer(Path dataDir, WatchedProcess process, int httpPort, int ingestPort, String adminToken, String agentToken,
                           boolean tls) {
        this.adminToken = adminToken;
        this.agentToken = agentToken;
        this.dataDir = dataDir;
        this.tls = tls;
        this.process = process;
        this.httpPort = httpPort;
        this.ingestPort = ingestPort;
    }

    /** Starts the server jar with the given engine and heap, and waits for /actuator/health to say UP. */
    public static HoldfastServer start(Path jar, Path workDir, String engine, String xmx) throws IOException {
        return start(jar, workDir, engine, xmx, List.of(), List.of(), true);
    }

    /**
     * Like {@link #start(Path, Path, String, String)}, with extra JVM options (before {@code -jar})
     * and extra server arguments ({@code --holdfast.gc.bookkeeping=off}, ...). {@code tls} says whether the
     * server runs with TLS (the default; false needs {@code --holdfast.tls.enabled=false} among the arguments).
     */
    public static HoldfastServer start(Path jar, Path workDir, String engine, String xmx, List<String> jvmOptions,
                                       List<String> serverArgs, boolean tls) throws IOException {
        Path dataDir = Files.createDirectories(workDir.resolve("data"));
        Path tmp = Files.createDirectories(workDir.resolve("tmp"));
        // tokens made offline before the first start, as an operator's script would
        String adminToken = createToken(jar, dataDir, tmp, "bench-admin", "admin");
        String agentToken = createToken(jar, dataDir, tmp, "bench-agent", "agent");
        // claimed, not probed: outside the ephemeral range and held against other test JVMs until this one exits
        int httpPort = TestPorts.claim();
        int ingestPort = TestPorts.claim();
        // the launcher's options (server/bin/jvm.options) first: the bench measures the server as users run it
        List<String> ours = new ArrayList<>(List.of("-Xmx" + xmx, "-Djava.io.tmpdir=" + tmp));
        ours.addAll(jvmOptions);
        List<String> cmd = new ArrayList<>(List.of("java"));
        cmd.addAll(ServerJvmOptions.forJar(jar, ours));
        cmd.addAll(List.of("-jar", jar.toString(),
                "--holdfast.data-dir=" + dataDir,
                "--server.address=127.0.0.1",
                "--server.port=" + httpPort,
                "--holdfast.ingest.host=127.0.0.1",
                "--holdfast.ingest.port=" + ingestPort,
                "--spring.main.banner-mode=off"));
        cmd.addAll(EngineOption.serverArgs(engine));
        cmd.addAll(serverArgs);
        WatchedProcess p = WatchedProcess.start(cmd, null, workDir, workDir.resolve("server"));
        HoldfastServer s = new HoldfastServer(dataDir, p, httpPort, ingestPort, adminToken, agentToken, tls);
        s.awaitHealthy();
        return s;
    }

    /** {@code holdfast-server create-token} with the server jar; returns the token it prints. */
    private static String createToken(Path jar, Path dataDir, Path tmp, String name, String role) throws IOException {
        return org.holdfast.bench.workload.Processes.run(List.of("java", "-Djava.io.tmpdir=" + tmp, "-cp", jar.toString(),
                "-Dloader.main=org.holdfast.server.app.CredentialTool", "org.springframework.boot.loader.launch.PropertiesLauncher",
                "create-token", "--data-dir", dataDir.toString(), "--name", name, "--role", role), null).strip();
    }

    /** An agent token for every volume; pass it to agents as HOLDFAST_TOKEN (never as an argument). */
    public String agentToken() {
        return agentToken;
    }

    private void awaitHealthy() throws IOException {
        long deadline = System.nanoTime() + STARTUP.toNanos();
        String last = "no answer";
        while (System.nanoTime() < deadline) {
            if (!process.isAlive()) {
                throw new IOException("server exited during startup\n" + process.diagnostics());
            }
            if (tls && !Files.exists(certificateFile())) {
                sleep(200); // written early in the server's start
                continue;
            }
            try {
                HttpResponse<String> r = get("/actuator/health");
                last = r.statusCode() + " " + r.body();
                if (r.statusCode() == 200 && r.body().contains("\"UP\"") && ingestAccepts()) {
                    return;
                }
            } catch (IOException e) {
                last = e.toString();
            }
            sleep(200);
        }
        process.stop(Duration.ofSeconds(5));
        throw new IOException("server not healthy after " + STARTUP + ": " + last + "\n" + process.diagnostics());
    }

    private boolean ingestAccepts() {
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), ingestPort), 2000);
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    /** The self-signed certificate the server made in its data directory. */
    public Path certificateFile() {
        return dataDir.resolve("tls").resolve("server.crt");
    }

    /** The agent options that trust this server: {@code --fingerprint} of its certificate, or {@code --no-tls}. */
    public List<String> agentTrustArgs() {
        if (!tls) {
            return List.of("--no-tls");
        }
        try {
            byte[] der = certificate().getEncoded();
            byte[] sha = java.security.MessageDigest.getInstance("SHA-256").digest(der);
            return List.of("--fingerprint", java.util.HexFormat.ofDelimiter(":").withUpperCase().formatHex(sha));
        } catch (java.security.GeneralSecurityException e) {
            throw new IllegalStateException("cannot fingerprint " + certificateFile() + ": " + e, e);
        }
    }

    private java.security.cert.X509Certificate certificate() {
        try (var in = Files.newInputStream(certificateFile())) {
            return (java.security.cert.X509Certificate) java.security.cert.CertificateFactory.getInstance("X.509")
                    .generateCertificate(in);
        } catch (IOException | java.security.GeneralSecurityException e) {
            throw new IllegalStateException("cannot read the server certificate " + certificateFile() + ": " + e, e);
        }
    }

    private synchronized HttpClient http() {
        if (http == null) {
            HttpClient.Builder b = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5));
            if (tls) {
                try {
                    java.security.KeyStore ks = java.security.KeyStore.getInstance("PKCS12");
                    ks.load(null, null);
                    ks.setCertificateEntry("holdfast", certificate());
                    javax.net.ssl.TrustManagerFactory tmf = javax.net.ssl.TrustManagerFactory.getInstance(
                            javax.net.ssl.TrustManagerFactory.getDefaultAlgorithm());
                    tmf.init(ks);
                    javax.net.ssl.SSLContext ctx = javax.net.ssl.SSLContext.getInstance("TLS");
                    ctx.init(null, tmf.getTrustManagers(), null);
                    b.sslContext(ctx);
                } catch (IOException | java.security.GeneralSecurityException e) {
                    throw new IllegalStateException("cannot trust " + certificateFile() + ": " + e, e);
                }
            }
            http = b.build();
        }
        return http;
    }

    /** {@code 127.0.0.1:port} of the agent protocol. */
    public String ingestAddress() {
        return "127.0.0.1:" + ingestPort;
    }

    /** The data directory. */
    public Path dataDir() {
        return dataDir;
    }

    /** Peak resident memory of the server so far. */
    public long peakRssBytes() {
        return process.peakRssBytes();
    }

    /** Writes {@code jcmd PID Thread.print} next to {@code logPrefix} and returns the file's path. */
    public String threadDump(Path logPrefix) {
        Path file = logPrefix.resolveSibling(logPrefix.getFileName() + ".server-threads.txt");
        try {
            Files.writeString(file, org.holdfast.bench.workload.Processes.run(
                    List.of("jcmd", Long.toString(process.pid()), "Thread.print"), null));
            return file.toString();
        } catch (IOException e) {
            return "(jcmd failed: " + e.getMessage() + ")";
        }
    }

    /** The server's process id. */
    public long pid() {
        return process.pid();
    }

    /** Whether the server still runs. */
    public boolean isAlive() {
        return process.isAlive();
    }

    /** The last lines of its logs. */
    public String diagnostics() {
        return process.diagnostics();
    }

    /** The Prometheus scrape, or empty text if the endpoint is missing. */
    public String prometheus() {
        try {
            HttpResponse<String> r = get("/actuator/prometheus");
            return r.statusCode() == 200 ? r.body() : "";
        } catch (IOException e) {
            return "";
        }
    }

    /** GET on the server's HTTP port. */
    public HttpResponse<String> get(String path) throws IOException {
        try {
            return http().send(HttpRequest.newBuilder(URI.create((tls ? "https" : "http") + "://127.0.0.1:" + httpPort + path))
                    .header("Authorization", "Bearer " + adminToken)
                    .timeout(Duration.ofSeconds(30)).GET().build(), HttpResponse.BodyHandlers.ofString());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted", e);
        }
    }

    @Override
    public void close() {
        process.stop(Duration.ofSeconds(30));
    }

    private static void sleep(long ms) throws IOException {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted", e);
        }
    }
}
