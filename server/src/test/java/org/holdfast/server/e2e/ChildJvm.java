package org.holdfast.server.e2e;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/**
 * Launches a child JVM on the test's own class path, its output going to files, and kills it
 * with SIGKILL.
 *
 * <p>The test class path holds both the server's Logback and the agent's slf4j-nop; each child
 * gets the class path minus the logging back end that is not its own, so that SLF4J picks
 * exactly one provider and prints no "multiple providers" warning on stderr (the agent's stderr
 * is asserted on).
 *
 * <p>Server and agent children start with a class-data-sharing archive of their class path
 * ({@link ChildClassArchive}), trained by the first such child of the build.
 */
final class ChildJvm {
    /** Exit value the JDK reports on Linux for a child ended by signal 9: 0x80 + 9. */
    static final int SIGKILL_EXIT = 137;

    private static final Set<Process> LIVE = ConcurrentHashMap.newKeySet();
    /**
     * Options every child gets before the caller's own (a later option wins), from
     * {@code holdfast.e2e.child-jvm-options}: the build passes {@code -XX:TieredStopAtLevel=1} because
     * these children are short-lived and a JVM that only compiles with C1 starts the server about
     * twice as fast on two cores, and {@code -XX:-BytecodeVerificationRemote} because verifying the
     * classes of the class path (javac's and released jars') costs a server start about a tenth of its
     * CPU and finds nothing, and {@code -XX:MetaspaceSize=128m} because a server start otherwise makes
     * two full GCs as its metaspace grows; {@code -Pslow} passes nothing, so the figures come from the full JIT.
     */
    private static final List<String> DEFAULT_OPTIONS = Arrays.stream(
            System.getProperty("holdfast.e2e.child-jvm-options", "").trim().split("\\s+")).filter(o -> !o.isEmpty()).toList();
    /** For a child that moves hundreds of MiB (C1 code hashes about 4x slower): the full JIT again, whatever the default. */
    static final List<String> FULL_JIT = List.of("-XX:TieredStopAtLevel=4");
    /**
     * What each child is started through so that it gets the shutdown signals at their defaults, as
     * from a terminal. A build started in the background (a CI runner, {@code mvn ... &} in a script)
     * ignores SIGINT and SIGQUIT (under nohup also SIGHUP), every process below it inherits that through exec, and a
     * JVM started with a signal ignored keeps ignoring it: Ctrl-C ({@code kill -INT}) would then never
     * reach an agent's shutdown hooks, and the agent would finish its restore instead. GNU env resets
     * them, then execs java (same pid). Empty where that env is missing: the children then inherit
     * the build's signal handling.
     */
    private static final List<String> DEFAULT_SIGNALS = defaultSignals();

    private static final ChildClasspath SERVER_CLASSPATH = new ChildClasspath("server",
            // The browser tests' Selenium and its OpenTelemetry, the Docker tests' Testcontainers: the test's, never the server's.
            entry -> !jarName(entry).startsWith("slf4j-nop") && !jarName(entry).startsWith("selenium-")
                    && !jarName(entry).startsWith("opentelemetry-") && !jarName(entry).startsWith("testcontainers-")
                    && !jarName(entry).startsWith("docker-java-") && !jarName(entry).startsWith("duct-tape-"),
            ServerProcess.MAIN_CLASS, List.of("-Xmx512m", "-XX:+UseSerialGC", "-Dspring.context.exit=onRefresh"),
            scratch -> List.of("--holdfast.data-dir=" + scratch.resolve("data"), "--server.address=127.0.0.1", "--server.port=0",
                    "--holdfast.ingest.host=127.0.0.1", "--holdfast.ingest.port=0", "--holdfast.dedup.engine=sungem",
                    "--spring.main.banner-mode=off"));

    private static final ChildClasspath AGENT_CLASSPATH = new ChildClasspath("agent",
            entry -> !jarName(entry).startsWith("logback-"),
            AgentProcess.MAIN_CLASS, List.of("-Xmx256m", "-XX:+UseSerialGC"),
            scratch -> {
                try {
                    Path source = Files.write(scratch.resolve("training.img"), new byte[1 << 16]);
                    return List.of("backup", "--server", "127.0.0.1:1", "--volume", "training", "--source", source.toString(),
                            "--state-dir", Files.createDirectories(scratch.resolve("state")).toString(), "--json",
                            "--known-servers", scratch.resolve("known-servers").toString());
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });

    static {
        // A test JVM that dies must not leave servers behind holding ports and data dirs.
        Runtime.getRuntime().addShutdownHook(new Thread(() -> LIVE.forEach(Process::destroyForcibly)));
    }

    private ChildJvm() {
    }

    private static List<String> defaultSignals() {
        List<String> env = List.of("/usr/bin/env", "--default-signal=INT,QUIT,TERM,HUP");
        List<String> probe = new ArrayList<>(env);
        probe.add("true");
        try {
            Process p = new ProcessBuilder(probe).redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
            if (p.waitFor(30, TimeUnit.SECONDS) && p.exitValue() == 0) {
                return env;
            }
            p.destroyForcibly();
        } catch (IOException e) {
            // no such env: reported below
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        System.out.println("[e2e] /usr/bin/env --default-signal is missing (GNU coreutils 8.31 or later has it): child JVMs"
                + " inherit this build's signal handling, and Ctrl-C does not reach them if the build runs in the background");
        return List.of();
    }

    /**
     * Class path entries for a server child: everything but the agent's no-op SLF4J provider. Its
     * class-data-sharing archive ({@link ChildClassArchive}) is trained by a server start on a scratch
     * directory that exits once its Spring context is refreshed ({@code spring.context.exit}).
     */
    static ChildClasspath serverClasspath() {
        return SERVER_CLASSPATH;
    }

    /**
     * Class path entries for an agent child: everything but Logback. Its archive is trained by a
     * backup of a small file to a port nothing listens on (the agent loads its command line, TLS and
     * Netty before it connects, then fails).
     */
    static ChildClasspath agentClasspath() {
        return AGENT_CLASSPATH;
    }

    private static String jarName(String entry) {
        return Path.of(entry).getFileName() == null ? entry : Path.of(entry).getFileName().toString();
    }

    /** The test class path's entries {@code classpath} keeps, in order. */
    private static List<String> entries(Predicate<String> classpath) {
        return Arrays.stream(System.getProperty("java.class.path").split(File.pathSeparator)).filter(e -> !e.isBlank()).filter(classpath)
                .toList();
    }

    /** The class-data-sharing archive children of {@code kind} map now, or null (off, or not trained yet). */
    static Path archive(ChildClasspath kind) {
        return ChildClassArchive.archiveFor(kind, entries(kind), DEFAULT_OPTIONS);
    }

    /** Starts {@code mainClass} with the filtered test class path; stdout and stderr go to the given files. */
    static Process start(String mainClass, List<String> jvmOptions, Predicate<String> classpath, List<String> args,
                         Path stdout, Path stderr) {
        return start(mainClass, jvmOptions, classpath, args, java.util.Map.of(), stdout, stderr);
    }

    /** As above, with extra environment variables for the child (for secrets that must not show in {@code ps}). */
    static Process start(String mainClass, List<String> jvmOptions, Predicate<String> classpath, List<String> args,
                         java.util.Map<String, String> env, Path stdout, Path stderr) {
        List<String> entries = entries(classpath);
        List<String> archiveOptions = List.of();
        if (classpath instanceof ChildClasspath kind) {
            ChildClassArchive.Prepared prepared = ChildClassArchive.prepare(kind, entries, DEFAULT_OPTIONS);
            entries = prepared.classpath();
            archiveOptions = prepared.jvmOptions();
        }
        String cp = String.join(File.pathSeparator, entries);
        List<String> cmd = new ArrayList<>(DEFAULT_SIGNALS);
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.addAll(DEFAULT_OPTIONS);
        cmd.addAll(archiveOptions);
        cmd.addAll(jvmOptions);
        cmd.add("-cp");
        cmd.add(cp);
        cmd.add(mainClass);
        cmd.addAll(args);
        try {
            Files.createDirectories(stdout.getParent());
            Files.writeString(stderr.resolveSibling(stderr.getFileName() + ".cmd"),
                    String.join(" ", cmd.subList(0, cmd.indexOf("-cp"))) + " -cp <test classpath> "
                            + String.join(" ", cmd.subList(cmd.indexOf(mainClass), cmd.size())) + "\n",
                    StandardCharsets.UTF_8);
            ProcessBuilder pb = new ProcessBuilder(cmd);
            pb.environment().putAll(env);
            Process p = pb
                    .redirectOutput(stdout.toFile())
                    .redirectError(stderr.toFile())
                    .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
                    .start();
            LIVE.add(p);
            p.onExit().thenRun(() -> LIVE.remove(p));
            return p;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start " + mainClass, e);
        }
    }

    /**
     * Sends SIGKILL and waits for the child to be gone. Returns true if it was the signal that
     * ended it (exit value 137), false if the child had already exited by itself.
     *
     * <p>{@link Process#destroyForcibly()} is SIGKILL on Linux; {@code ProcessKillTest} checks that
     * a child's shutdown hook does not run, so no graceful path hides behind it.
     */
    static boolean sigkill(Process p) {
        p.destroyForcibly();
        try {
            if (!p.waitFor(30, TimeUnit.SECONDS)) {
                throw new IllegalStateException("pid " + p.pid() + " survived SIGKILL for 30 s");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
        return p.exitValue() == SIGKILL_EXIT;
    }

    /**
     * Sends {@code signal} ("STOP", "CONT") to {@code p} with kill(1): a stopped child runs no
     * instruction until CONT, so what a test reads of its files then is what a SIGKILL would leave.
     */
    static void signal(Process p, String signal) {
        try {
            Process k = new ProcessBuilder("kill", "-s", signal, Long.toString(p.pid())).redirectErrorStream(true).start();
            String out = new String(k.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!k.waitFor(30, TimeUnit.SECONDS) || k.exitValue() != 0) {
                throw new IllegalStateException("kill -s " + signal + " " + p.pid() + " failed: " + out);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** The last {@code maxChars} characters of a log file, for failure messages. */
    static String tail(Path file, int maxChars) {
        try {
            if (!Files.exists(file)) {
                return "<no " + file.getFileName() + ">";
            }
            String s = new String(Files.readAllBytes(file), StandardCharsets.UTF_8);
            return s.length() <= maxChars ? s : "..." + s.substring(s.length() - maxChars);
        } catch (IOException | UncheckedIOException e) {
            return "<unreadable " + file + ": " + e + ">";
        }
    }
}
