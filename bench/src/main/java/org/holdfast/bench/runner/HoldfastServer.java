package org.holdfast.bench.runner;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
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

/**
 * The real Holdfast server as a child process ({@code java -jar}) on 127.0.0.1 with a fresh
 * data directory and free ports; started once per workload and engine.
 */
public final class HoldfastServer implements AutoCloseable {
    private static final Duration STARTUP = Duration.ofSeconds(180);

    private final Path dataDir;
    private final WatchedProcess process;
    private final int httpPort;
    private final int ingestPort;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private final String adminToken;
    private final String agentToken;

    private HoldfastServer(Path dataDir, WatchedProcess process, int httpPort, int ingestPort, String adminToken, String agentToken) {
        this.adminToken = adminToken;
        this.agentToken = agentToken;
        this.dataDir = dataDir;
        this.process = process;
        this.httpPort = httpPort;
        this.ingestPort = ingestPort;
    }

    /** Starts the server jar with the given engine and heap, and waits for /actuator/health to say UP. */
    public static HoldfastServer start(Path jar, Path workDir, String engine, String xmx) throws IOException {
        return start(jar, workDir, engine, xmx, List.of(), List.of());
    }

    /**
     * Like {@link #start(Path, Path, String, String)}, with extra JVM options (before {@code -jar})
     * and extra server arguments ({@code --holdfast.gc.bookkeeping=off}, ...).
     */
    public static HoldfastServer start(Path jar, Path workDir, String engine, String xmx, List<String> jvmOptions,
                                       List<String> serverArgs) throws IOException {
        Path dataDir = Files.createDirectories(workDir.resolve("data"));
        Path tmp = Files.createDirectories(workDir.resolve("tmp"));
        // tokens made offline before the first start, as an operator's script would
        String adminToken = createToken(jar, dataDir, tmp, "bench-admin", "admin");
        String agentToken = createToken(jar, dataDir, tmp, "bench-agent", "agent");
        int httpPort = freePort();
        int ingestPort = freePort();
        while (ingestPort == httpPort) {
            ingestPort = freePort();
        }
        List<String> cmd = new ArrayList<>(List.of("java", "-Xmx" + xmx, "-Djava.io.tmpdir=" + tmp));
        cmd.addAll(jvmOptions);
        cmd.addAll(List.of("-jar", jar.toString(),
                "--holdfast.data-dir=" + dataDir,
                "--server.address=127.0.0.1",
                "--server.port=" + httpPort,
                "--holdfast.ingest.host=127.0.0.1",
                "--holdfast.ingest.port=" + ingestPort,
                "--holdfast.dedup.engine=" + engine,
                "--spring.main.banner-mode=off"));
        cmd.addAll(serverArgs);
        WatchedProcess p = WatchedProcess.start(cmd, null, workDir, workDir.resolve("server"));
        HoldfastServer s = new HoldfastServer(dataDir, p, httpPort, ingestPort, adminToken, agentToken);
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
            return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + httpPort + path))
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

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
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
