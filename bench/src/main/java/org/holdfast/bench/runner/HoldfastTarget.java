package org.holdfast.bench.runner;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Holdfast as a benchmark target: one server process per workload (with one dedup engine), and
 * one agent process per backup or restore, run with {@code java -jar} exactly as an operator
 * would. The agent's state directory is private to this target, so that two targets (two
 * engines) never share the agent's memory of the previous snapshot. In {@link AgentMode#DAEMON}
 * each volume (a simulated host) also has a resident agent daemon, and each agent process hands
 * its command to it, as on a host where the agent is installed as a service.
 */
public final class HoldfastTarget implements BackupTarget {
    private static final Duration AGENT_TIMEOUT = Duration.ofMinutes(30);
    /** Thread names of the GC's bookkeeping (BOSC log flusher and committers), as /proc shows them. */
    private static final String[] GC_THREADS = {"gma-", "holdfast-gc", "gc-", "job-gc"}; // job-gc: GC jobs (cycles)

    private final Path serverJar;
    private final Path agentJar;
    private final String engine;
    private final String serverXmx;
    private final String agentXmx;
    private final ServerOptions options;
    private final AgentMode agentMode;
    /** Daemon mode: the resident agent of each simulated host (one volume each), started before its day 0. */
    private final Map<String, ResidentAgent> daemons = new LinkedHashMap<>();
    /** Whether the kernel refused to reset a daemon's peak-RSS mark (its peaks then span its life so far). */
    private boolean peakResetRefused;
    private final Map<String, Map<Integer, String>> snapshots = new HashMap<>();
    private Path dir;
    private Path stateDir;
    private HoldfastServer server;
    private int runs;
    private Map<String, Double> metricsAtOpen = Map.of();
    /** The server's metrics after the latest backup (restores come after all backups). */
    private Map<String, Double> metricsAfterBackups = Map.of();
    private double backupToolSeconds;
    private double cpuAtOpen;
    private double gcCpuAtOpen;
    /** Server CPU seconds from open to the end of the latest backup (restores come after all backups). */
    private double ingestCpu = -1;

    /** A target running {@code engine} (exact or sungem). */
    public HoldfastTarget(Path serverJar, Path agentJar, String engine, String serverXmx, String agentXmx) {
        this(serverJar, agentJar, engine, serverXmx, agentXmx, new ServerOptions(true, 0, List.of()));
    }

    /**
     * How the server is run: {@code gcBookkeeping} false starts a fresh store with
     * {@code holdfast.gc.bookkeeping=off} (the baseline of the GC overhead figure);
     * {@code gcCommitters} &gt; 0 sets {@code holdfast.gc.committers}; {@code jvmOptions} go before -jar;
     * {@code tls} false starts the server with {@code holdfast.tls.enabled=false} and the agent with
     * {@code --no-tls} (the baseline of the TLS cost figure).
     */
    public record ServerOptions(boolean gcBookkeeping, int gcCommitters, List<String> jvmOptions, boolean tls) {
        /** With TLS on (the server's default). */
        public ServerOptions(boolean gcBookkeeping, int gcCommitters, List<String> jvmOptions) {
            this(gcBookkeeping, gcCommitters, jvmOptions, true);
        }
    }

    /** A target running {@code engine} with the given server options. */
    public HoldfastTarget(Path serverJar, Path agentJar, String engine, String serverXmx, String agentXmx,
                          ServerOptions options) {
        this(serverJar, agentJar, engine, serverXmx, agentXmx, options, AgentMode.FRESH);
    }

    /** A target running {@code engine} with the given server options, its agent commands run in {@code agentMode}. */
    public HoldfastTarget(Path serverJar, Path agentJar, String engine, String serverXmx, String agentXmx,
                          ServerOptions options, AgentMode agentMode) {
        this.agentMode = agentMode;
        this.serverJar = serverJar;
        this.agentJar = agentJar;
        this.engine = engine;
        this.serverXmx = serverXmx;
        this.agentXmx = agentXmx;
        this.options = options;
    }

    /** The engine, GC, TLS and agent-mode variant this target is. */
    public HoldfastVariant variant() {
        return new HoldfastVariant(engine, options.gcBookkeeping(), options.tls(), agentMode);
    }

    @Override
    public String name() {
        return variant().name();
    }

    /** The dedup engine this target runs. */
    public String engine() {
        return engine;
    }

    @Override
    public void open(Path dir) throws IOException {
        this.dir = Files.createDirectories(dir);
        this.stateDir = Files.createDirectories(dir.resolve("agent-state"));
        List<String> args = new ArrayList<>();
        if (!options.gcBookkeeping()) {
            args.add("--holdfast.gc.bookkeeping=off");
        }
        if (options.gcCommitters() > 0) {
            args.add("--holdfast.gc.committers=" + options.gcCommitters());
        }
        if (!options.tls()) {
            args.add("--holdfast.tls.enabled=false");
        }
        this.server = HoldfastServer.start(serverJar, dir.resolve("server"), engine, serverXmx, options.jvmOptions(), args,
                options.tls());
        // Before any clock or baseline: the launcher unpacks the jar and records its class-data archive on
        // a backup of an all-zero image (zero blocks store nothing), so no measured run pays for that.
        Path warmup = Files.write(dir.resolve("launcher-warmup.img"), new byte[1 << 20]);
        // (the agent's home is the state dir, so its known-servers file is the bench's own, never the user's)
        agent("launcher-setup", withTrust(List.of("backup", "--server", server.ingestAddress(), "--volume", "bench-launcher-warmup",
                "--source", warmup.toAbsolutePath().toString(), "--state-dir",
                dir.resolve("launcher-warmup-state").toAbsolutePath().toString(), "--json")));
        Files.deleteIfExists(warmup);
        this.metricsAtOpen = PrometheusText.parse(server.prometheus());
        this.cpuAtOpen = ThreadCpu.process(server.pid());
        this.gcCpuAtOpen = ThreadCpu.threads(server.pid(), GC_THREADS);
    }

    /** {@code args} plus how the agent trusts the server: its pinned fingerprint, or --no-tls. */
    private List<String> withTrust(List<String> args) {
        List<String> a = new ArrayList<>(args);
        a.addAll(server.agentTrustArgs());
        return a;
    }

    private WatchedProcess.Outcome agent(String label, List<String> args) throws IOException {
        Path log = dir.resolve("logs").resolve(String.format("%04d-%s", ++runs, label));
        WatchedProcess.Outcome o = WatchedProcess.run(agentCommand(args), agentEnv(), dir, log, AGENT_TIMEOUT);
        if (o.exitCode() != 0) {
            String dump = server.isAlive() ? "; server threads at that moment: " + server.threadDump(log) : "";
            throw new IOException(name() + ": agent " + label + " exited " + o.exitCode() + ":\n" + o.errorTail()
                    + (server.isAlive() ? dump : "\nserver died:\n" + server.diagnostics()));
        }
        return o;
    }

    /** What a run of the agent CLI gives: its outcome, and its client RSS (with the daemon's in daemon mode). */
    private record AgentRun(WatchedProcess.Outcome outcome, long clientPeakRssBytes) {
    }

    /**
     * {@code command} (backup or restore) of {@code volume}: in a fresh JVM, or in daemon mode handed to
     * the volume's resident agent with {@code --socket}; a run the daemon did not log as handed off fails.
     */
    private AgentRun agentRun(String command, String volume, String label, List<String> args) throws IOException {
        if (agentMode == AgentMode.FRESH) {
            WatchedProcess.Outcome o = agent(label, args);
            return new AgentRun(o, o.peakRssBytes());
        }
        ResidentAgent d = daemons.get(volume);
        if (d == null) {
            // before the host's day 0 and outside the timing: the daemon starts cold, as a booted host's would
            d = ResidentAgent.start(agentCommand(List.of()), agentEnv(), dir, dir.resolve("daemon-" + volume),
                    dir.resolve("logs").resolve("daemon-" + volume), server.ingestAddress(), server.agentTrustArgs());
            daemons.put(volume, d);
        }
        int before = d.handoffs(command, volume);
        boolean perRun = d.resetPeak();
        List<String> a = new ArrayList<>(args);
        a.addAll(List.of("--socket", d.socket().toString()));
        WatchedProcess.Outcome o = agent(label, a);
        if (!d.awaitHandoff(command, volume, before)) {
            throw new IOException(name() + ": agent " + label + " did not hand off to the daemon on " + d.socket()
                    + " (no 'handoff: " + command + " of volume " + volume + " ended' in its log)" + (d.isAlive() ? "" : "; the daemon died")
                    + "\ncaller: " + o.errorTail() + "\ndaemon: " + d.diagnostics());
        }
        // both are resident during the run: the caller's peak plus the daemon's (over its life if the kernel
        // refused the reset of its peak mark)
        if (!perRun) {
            peakResetRefused = true;
        }
        return new AgentRun(o, o.peakRssBytes() + d.peakRssBytes());
    }

    /** The agent CLI with {@code args}: the launcher, else java -jar, with the bench's agent JVM options. */
    private List<String> agentCommand(List<String> args) {
        // Through the agent's launcher (client/bin/holdfast-agent) when it can be found, so the agent runs
        // with the JVM options users get (its class-data-sharing archive); else plain java -jar.
        List<String> cmd;
        if (launcherUsable()) {
            cmd = new ArrayList<>(List.of("bash", agentLauncher().toString()));
        } else {
            cmd = new ArrayList<>(List.of("java"));
            cmd.addAll(agentJvm());
            cmd.addAll(List.of("-jar", agentJar.toString()));
        }
        cmd.addAll(args);
        return cmd;
    }

    private Map<String, String> agentEnv() {
        Map<String, String> env = new HashMap<>(Map.of("HOME", stateDir.toAbsolutePath().toString()));
        env.put("HOLDFAST_TOKEN", server.agentToken());
        if (launcherUsable()) {
            env.put("HOLDFAST_AGENT_JAR", agentJar.toAbsolutePath().toString());
            env.put("HOLDFAST_AGENT_CACHE", dir.resolve("agent-cache").toAbsolutePath().toString());
            env.put("JAVA_OPTS", String.join(" ", agentJvm()));
        }
        return env;
    }

    private List<String> agentJvm() {
        return List.of("-Xmx" + agentXmx, "-Duser.home=" + stateDir.toAbsolutePath());
    }

    private boolean launcherUsable() {
        return agentLauncher() != null && !stateDir.toAbsolutePath().toString().matches(".*\\s.*");
    }

    /** The agent launcher script: -Dholdfast.bench.agentLauncher, else client/bin/holdfast-agent above the working directory. */
    private static Path agentLauncher() {
        String prop = System.getProperty("holdfast.bench.agentLauncher");
        if (prop != null) {
            return prop.isEmpty() ? null : Path.of(prop);
        }
        for (Path d = Path.of("").toAbsolutePath(); d != null; d = d.getParent()) {
            Path p = d.resolve("client").resolve("bin").resolve("holdfast-agent");
            if (Files.isRegularFile(p)) {
                return p;
            }
        }
        return null;
    }

    @Override
    public BackupOutcome backup(String volume, int day, Path image) throws IOException {
        AgentRun run = agentRun("backup", volume, "backup-" + volume + "-day" + day, withTrust(List.of("backup", "--server",
                server.ingestAddress(), "--volume", volume, "--source", image.toAbsolutePath().toString(),
                "--state-dir", stateDir.resolve(volume).toAbsolutePath().toString(), "--json")));
        WatchedProcess.Outcome o = run.outcome();
        JsonNode j = AgentJson.parse(o.stdout());
        String id = AgentJson.text(j, "snapshotId", "snapshot", "sequence", "id");
        if (id == null) {
            throw new IOException(name() + ": backup summary names no snapshot: " + j);
        }
        snapshots.computeIfAbsent(volume, v -> new HashMap<>()).put(day, id);
        long sentBytes = AgentJson.number(j, "sentBytes", "bytesSent", "uploadedBytes", "wireBytes");
        if (sentBytes < 0) {
            long blocks = AgentJson.number(j, "sentBlocks", "blocksSent", "uploadedBlocks");
            sentBytes = blocks < 0 ? -1 : blocks * 4096;
        }
        long newBlocks = AgentJson.number(j, "newBlocks", "storedBlocks");
        long changed = AgentJson.number(j, "changedBlocks");
        long zero = AgentJson.number(j, "zeroBlocks", "changedZeroBlocks");
        double tool = j.has("seconds") ? j.get("seconds").asDouble() : -1;
        backupToolSeconds += Math.max(0, tool);
        double cpuNow = ThreadCpu.process(server.pid());
        ingestCpu = cpuNow < 0 ? -1 : cpuNow - cpuAtOpen;
        try {
            metricsAfterBackups = PrometheusText.parse(server.prometheus());
        } catch (RuntimeException e) {
            // the engine rate then covers up to the previous backup, or is n/a; the backup itself stands
        }
        return new BackupOutcome(o.seconds(), tool, run.clientPeakRssBytes(), sentBytes, changed, zero, newBlocks, id);
    }

    @Override
    public RestoreOutcome restore(String volume, int day, Path target) throws IOException {
        String id = snapshots.getOrDefault(volume, Map.of()).get(day);
        if (id == null) {
            throw new IOException(name() + ": no snapshot of " + volume + " for day " + day);
        }
        Files.deleteIfExists(target);
        double regionsBefore = regionsRead();
        AgentRun run = agentRun("restore", volume, "restore-" + volume + "-day" + day, withTrust(List.of("restore", "--server",
                server.ingestAddress(), "--volume", volume, "--snapshot", id, "--target",
                target.toAbsolutePath().toString(), "--json")));
        WatchedProcess.Outcome o = run.outcome();
        double tool = -1;
        try {
            JsonNode j = AgentJson.parse(o.stdout());
            tool = j.has("seconds") ? j.get("seconds").asDouble() : -1;
        } catch (IOException e) {
            // The wall time is what counts; the agent's own figure is extra.
        }
        double regionsAfter = regionsRead();
        long regions = regionsBefore >= 0 && regionsAfter >= 0 ? Math.round(regionsAfter - regionsBefore) : -1;
        return new RestoreOutcome(o.seconds(), tool, run.clientPeakRssBytes(), regions);
    }

    /** The server's count of data-log regions read (holdfast_store_regions_read_total), or -1 if absent. */
    private double regionsRead() {
        try {
            Map<String, Double> m = PrometheusText.parse(server.prometheus());
            String key = PrometheusText.find(m, "store_regions_read");
            return key == null ? -1 : m.get(key);
        } catch (RuntimeException e) {
            return -1; // a figure the report then gives as n/a; the restore itself is what counts
        }
    }

    @Override
    public long storedBytes() throws IOException {
        return DirectorySize.of(server.dataDir());
    }

    @Override
    public Map<String, Object> describe() {
        Map<String, Object> d = new LinkedHashMap<>();
        d.put("engine", engine);
        d.put("serverJar", serverJar.toString());
        d.put("agentJar", agentJar.toString());
        d.put("serverXmx", serverXmx);
        d.put("tls", options.tls());
        d.put("agentXmx", agentXmx);
        d.put("agentMode", agentMode.name().toLowerCase(java.util.Locale.ROOT));
        d.put("gcBookkeeping", options.gcBookkeeping() ? "on" : "off");
        d.put("gcCommitters", options.gcCommitters() > 0 ? options.gcCommitters() : "server default (2)");
        if (!options.jvmOptions().isEmpty()) {
            d.put("serverJvmOptions", options.jvmOptions());
        }
        return d;
    }

    @Override
    public Map<String, Object> serverFigures() {
        Map<String, Object> f = new LinkedHashMap<>();
        if (server == null) {
            return f;
        }
        f.put("serverPeakRssBytes", server.peakRssBytes());
        if (agentMode == AgentMode.DAEMON) {
            double daemonCpu = 0;
            for (ResidentAgent d : daemons.values()) {
                daemonCpu += Math.max(0, d.cpuSeconds());
            }
            // the resident agents' whole CPU (start, every handed-off backup and restore); callers not included
            f.put("agentDaemons", daemons.size());
            f.put("agentDaemonCpuSeconds", daemonCpu);
            f.put("agentDaemonPeakPerRun", !peakResetRefused);
        }
        double cpu = ThreadCpu.process(server.pid()) - cpuAtOpen;
        double gcNow = ThreadCpu.threads(server.pid(), GC_THREADS);
        double gcCpu = gcNow < 0 ? -1 : gcNow - Math.max(0, gcCpuAtOpen);
        f.put("serverCpuSeconds", cpu);
        f.put("serverIngestCpuSeconds", ingestCpu);
        f.put("gcThreadCpuSeconds", gcCpu);
        if (cpu > 0 && gcCpu >= 0) {
            f.put("gcOverhead", gcCpu / cpu);
        }
        try {
            f.put("dataLogBytes", DirectorySize.of(server.dataDir(), DataLogs::isDataLog));
        } catch (IOException e) {
            f.put("dataLogBytes", -1L);
        }
        f.putAll(EngineRate.of(metricsAtOpen, metricsAfterBackups, backupToolSeconds));
        String loaded = PrometheusText.find(metricsAfterBackups, "dedup_containers_loaded");
        if (loaded != null) {
            // containers the engine read from disk during the backups (Sungem, and the cluster over all workers)
            f.put("containersLoaded", metricsAfterBackups.get(loaded) - metricsAtOpen.getOrDefault(loaded, 0.0));
        }
        Map<String, Double> now = PrometheusText.parse(server.prometheus());
        Map<String, Double> holdfast = new LinkedHashMap<>();
        now.forEach((k, v) -> {
            if (k.startsWith("holdfast")) {
                holdfast.put(k, v);
            }
        });
        f.put("metrics", holdfast);
        return f;
    }

    @Override
    public void close() {
        for (ResidentAgent d : daemons.values()) {
            d.close();
        }
        daemons.clear();
        if (server != null) {
            server.close();
        }
    }
}
