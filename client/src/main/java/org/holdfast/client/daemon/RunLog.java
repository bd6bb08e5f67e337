package org.holdfast.client.daemon;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Consumer;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.holdfast.client.GuardedReplace;
import org.holdfast.client.StateDirectory;

/**
 * The daemon's record of its runs, in its state directory (docs/agent.md, "The run log"):
 * <ul>
 * <li>{@code runs.jsonl}: one {@link RunRecord} per line, appended when a run ends; trimmed to the
 *     newest {@link #KEEP} lines once it holds twice as many;</li>
 * <li>{@code running/VOLUME.json}: written when a run starts and removed when it is recorded. One
 *     left behind means the daemon died during that run: at its next start the daemon runs that
 *     volume's post hook (so no file system stays frozen, no LVM snapshot stays behind) and records
 *     the run as interrupted.</li>
 * </ul>
 * A torn last line (a crash during the append) is skipped when reading.
 */
final class RunLog {
    static final int KEEP = 1000;
    // the runs name volumes, snapshots and errors; a state-dir the operator made (or a unit without StateDirectoryMode=0700) may be 0755
    private static final FileAttribute<Set<PosixFilePermission>> PRIVATE_FILE =
            PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------"));
    // a run marker's temporary name (GuardedReplace): the marker's name, a dot, the random number, ".tmp"
    private static final Pattern LEFTOVER_MARKER = Pattern.compile("(.+\\.json)\\.[0-9]+\\.tmp");
    private static final ObjectMapper JSON = new ObjectMapper().configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, false);

    private final Path file;
    private final Path running;
    private final Map<String, RunRecord> last = new HashMap<>();
    private int lines;

    RunLog(Path stateDir) {
        this(stateDir, line -> { });
    }

    /**
     * The run log in {@code stateDir}, after removing what writers killed with SIGKILL left there
     * (one line each to {@code notices}); the daemon holds the state directory's lock, so no other
     * daemon writes here.
     */
    RunLog(Path stateDir, Consumer<String> notices) {
        this.file = stateDir.resolve("runs.jsonl");
        this.running = stateDir.resolve("running");
        try {
            StateDirectory.createPrivate(running);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create " + running, e);
        }
        removeLeftovers(notices);
        for (RunRecord r : readAll()) {
            last.put(r.volume(), r);
            lines++;
        }
    }

    /** Every readable record, oldest first. */
    synchronized List<RunRecord> readAll() {
        List<RunRecord> out = new ArrayList<>();
        if (!Files.exists(file)) {
            return out;
        }
        try {
            for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
                try {
                    out.add(JSON.readValue(line, RunRecord.class));
                } catch (JsonProcessingException e) {
                    // a torn line from a crash during an append: the run it described shows up as interrupted
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read the run log " + file, e);
        }
        return out;
    }

    /** The newest record of {@code volume}, or null. */
    synchronized RunRecord last(String volume) {
        return last.get(volume);
    }

    /** Notes that a run of {@code volume} began; the marker outlives a crash. */
    void begin(RunRecord started) {
        write(running.resolve(started.volume() + ".json"), json(started) + "\n");
    }

    /** Appends {@code r} and removes its volume's running marker. */
    synchronized void append(RunRecord r) {
        try {
            createPrivate(file);
            Files.writeString(file, json(r) + "\n", StandardCharsets.UTF_8, StandardOpenOption.CREATE, StandardOpenOption.APPEND,
                    StandardOpenOption.SYNC);
            Files.deleteIfExists(running.resolve(r.volume() + ".json"));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot append to the run log " + file, e);
        }
        last.put(r.volume(), r);
        if (++lines >= 2 * KEEP) {
            trim();
        }
    }

    /** The runs that began and were never recorded (the daemon died), as their start records. */
    List<RunRecord> unfinished() {
        List<RunRecord> out = new ArrayList<>();
        try (Stream<Path> s = Files.list(running)) {
            for (Path p : s.filter(f -> f.toString().endsWith(".json")).toList()) {
                try {
                    out.add(JSON.readValue(Files.readString(p, StandardCharsets.UTF_8), RunRecord.class));
                } catch (JsonProcessingException e) {
                    String name = p.getFileName().toString();
                    out.add(new RunRecord(name.substring(0, name.length() - 5), "schedule", null, null, RunRecord.INTERRUPTED,
                            0, null, 0, 0, 0, null, null, "marker torn", null));
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot list " + running, e);
        }
        return out;
    }

    /** The temporary files of killed writes: {@code runs.jsonl.<random>.tmp}, {@code running/VOLUME.json.<random>.tmp}. */
    private void removeLeftovers(Consumer<String> notices) {
        GuardedReplace.removeLeftovers(file, "a daemon trimming the run log", notices);
        Set<String> markers = new TreeSet<>();
        List<Path> legacy = new ArrayList<>(List.of(file.resolveSibling(file.getFileName() + ".tmp")));
        try (Stream<Path> s = Files.list(running)) {
            s.forEach(p -> {
                String name = p.getFileName().toString();
                Matcher m = LEFTOVER_MARKER.matcher(name);
                if (m.matches()) {
                    markers.add(m.group(1));
                } else if (name.endsWith(".json.tmp")) {
                    legacy.add(p);
                }
            });
            // daemons before GuardedReplace wrote one fixed name X.tmp, replaced at X's next write; ours holds the lock
            for (Path p : legacy) {
                Files.deleteIfExists(p);
            }
        } catch (IOException e) {
            return; // unfinished() reports a directory it cannot list
        }
        for (String marker : markers) {
            GuardedReplace.removeLeftovers(running.resolve(marker), "a daemon starting a run of volume "
                    + marker.substring(0, marker.length() - ".json".length()), notices);
        }
    }

    private void trim() {
        List<RunRecord> all = readAll();
        StringBuilder sb = new StringBuilder();
        for (RunRecord r : all.subList(Math.max(0, all.size() - KEEP), all.size())) {
            sb.append(json(r)).append('\n');
        }
        write(file, sb.toString());
        lines = Math.min(all.size(), KEEP);
    }

    private static void write(Path target, String text) {
        try {
            GuardedReplace.write(target, text.getBytes(StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + target, e);
        }
    }

    /** Creates {@code f} readable only by this user unless it exists (an append adds to it as it is). */
    private static void createPrivate(Path f) throws IOException {
        try {
            Files.createFile(f, PRIVATE_FILE);
        } catch (java.nio.file.FileAlreadyExistsException kept) {
            // written before: its mode stays
        }
    }

    static String json(Object value) {
        try {
            return JSON.writeValueAsString(value);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }
}
