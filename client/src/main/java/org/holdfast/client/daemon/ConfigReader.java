package org.holdfast.client.daemon;

import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.holdfast.client.AgentException;
import org.holdfast.client.ExitCode;
import org.holdfast.client.net.ServerAddress;
import org.holdfast.common.id.VolumeId;
import org.holdfast.common.tls.CertificateFingerprint;

/**
 * Reads and validates the daemon's YAML file. Every problem is collected (not only the first), each
 * naming its line and field, and the file is refused as a whole with a {@link ConfigException}.
 * Sources are not required to exist yet: a pre hook may create them (an LVM snapshot).
 */
public final class ConfigReader {
    static final Duration DEFAULT_HOOK_TIMEOUT = Duration.ofMinutes(1);
    static final AgentConfig.Retry DEFAULT_RETRY = new AgentConfig.Retry(8, Duration.ofSeconds(30), Duration.ofMinutes(10));
    private static final Pattern DURATION = Pattern.compile("(\\d{1,9})\\s*(ms|s|m|h)?");

    private final Path file;
    private final Map<String, String> env;
    /** Problems sorted by line, then in the order found. */
    private final TreeMap<Integer, List<String>> problems = new TreeMap<>();

    private ConfigReader(Path file, Map<String, String> env) {
        this.file = file;
        this.env = env;
    }

    /** Reads {@code file}; the default state directory comes from the process environment. */
    public static AgentConfig read(Path file) {
        return read(file, System.getenv());
    }

    /** As {@link #read(Path)} with the given environment (for the default state directory). */
    public static AgentConfig read(Path file, Map<String, String> env) {
        String text;
        try {
            text = Files.readString(file, StandardCharsets.UTF_8);
        } catch (NoSuchFileException e) {
            throw new AgentException(ExitCode.USAGE, "config file " + file + " does not exist",
                    "write one (docs/agent.md has an example) or pass --config FILE");
        } catch (IOException e) {
            throw new AgentException(ExitCode.USAGE, "cannot read config file " + file + ": " + e.getMessage(),
                    "make it readable by the user the daemon runs as", e);
        }
        return new ConfigReader(file, env).parse(new java.io.StringReader(text));
    }

    /** The state directory when the file names none: $STATE_DIRECTORY (systemd), else $XDG_STATE_HOME or ~/.local/state. */
    public static Path defaultStateDir(Map<String, String> env) {
        String systemd = env.get("STATE_DIRECTORY");
        if (systemd != null && !systemd.isBlank()) {
            return Path.of(systemd.split(":")[0]);
        }
        String xdg = env.get("XDG_STATE_HOME");
        if (xdg != null && !xdg.isBlank() && Path.of(xdg).isAbsolute()) {
            return Path.of(xdg, "holdfast-agent");
        }
        String home = env.getOrDefault("HOME", System.getProperty("user.home"));
        return Path.of(home, ".local", "state", "holdfast-agent");
    }

    private AgentConfig parse(Reader reader) {
        List<String[]> duplicates = new ArrayList<>();
        YamlNode root;
        try {
            root = YamlNode.parse(reader, duplicates);
        } catch (YamlNode.SyntaxError e) {
            problem(e.line, null, "not valid YAML: " + e.getMessage());
            throw failure();
        } catch (IOException e) {
            throw new AgentException(ExitCode.USAGE, "cannot read config file " + file + ": " + e.getMessage(), null, e);
        }
        for (String[] d : duplicates) {
            problem(Integer.parseInt(d[0]), d[1], "given twice; keep one");
        }
        if (root.kind != YamlNode.Kind.MAP) {
            problem(root.line, null, "the file must be a mapping with server, trust and volumes");
            throw failure();
        }
        known(root, "server", "trust", "token-file", "state-dir", "retry", "volumes");
        String server = server(root.fields.get("server"), root);
        AgentConfig.Trust trust = trust(root.fields.get("trust"), root);
        Path tokenFile = tokenFile(root.fields.get("token-file"));
        YamlNode stateNode = root.fields.get("state-dir");
        Path stateDir = stateNode == null ? defaultStateDir(env) : absolutePath(stateNode);
        AgentConfig.Retry retry = retry(root.fields.get("retry"));
        List<AgentConfig.VolumeConfig> volumes = volumes(root.fields.get("volumes"), root);
        if (!problems.isEmpty()) {
            throw failure();
        }
        return new AgentConfig(server, trust, tokenFile, stateDir, retry, volumes);
    }

    private String server(YamlNode n, YamlNode parent) {
        if (n == null) {
            problem(parent.line, "server", "missing: name the server's ingest address, HOST:PORT (port 7070 by default)");
            return null;
        }
        String s = scalar(n);
        if (s != null) {
            try {
                ServerAddress.parse(s);
            } catch (RuntimeException e) {
                problem(n, "'" + s + "' is not HOST:PORT: " + e.getMessage());
            }
        }
        return s;
    }

    private AgentConfig.Trust trust(YamlNode n, YamlNode parent) {
        if (n == null) {
            problem(parent.line, "trust", "missing: give trust.fingerprint (the server's SHA-256 fingerprint), trust.ca-cert"
                    + " (a PEM file) or trust.no-tls: true");
            return null;
        }
        if (!map(n)) {
            return null;
        }
        known(n, "fingerprint", "ca-cert", "no-tls");
        String fp = null;
        YamlNode fpNode = n.fields.get("fingerprint");
        if (fpNode != null && (fp = scalar(fpNode)) != null) {
            try {
                CertificateFingerprint.parse(fp);
            } catch (IllegalArgumentException e) {
                problem(fpNode, "not a SHA-256 fingerprint: " + e.getMessage() + " (copy the one the server logs at start)");
            }
        }
        YamlNode caNode = n.fields.get("ca-cert");
        Path ca = caNode == null ? null : readableFile(caNode);
        YamlNode noTlsNode = n.fields.get("no-tls");
        boolean noTls = noTlsNode != null && bool(noTlsNode);
        int given = (fpNode != null ? 1 : 0) + (caNode != null ? 1 : 0) + (noTls ? 1 : 0);
        if (given != 1) {
            problem(n, "give exactly one of fingerprint, ca-cert or no-tls: true (found " + given + ")");
        }
        return new AgentConfig.Trust(fp, ca, noTls);
    }

    private Path tokenFile(YamlNode n) {
        return n == null ? null : readableFile(n);
    }

    private AgentConfig.Retry retry(YamlNode n) {
        if (n == null) {
            return DEFAULT_RETRY;
        }
        if (!map(n)) {
            return DEFAULT_RETRY;
        }
        known(n, "attempts", "initial-backoff", "max-backoff");
        YamlNode a = n.fields.get("attempts");
        int attempts = a == null ? DEFAULT_RETRY.attempts() : integer(a, 1, 1000);
        YamlNode i = n.fields.get("initial-backoff");
        Duration initial = i == null ? DEFAULT_RETRY.initialBackoff() : duration(i);
        YamlNode m = n.fields.get("max-backoff");
        Duration max = m == null ? DEFAULT_RETRY.maxBackoff() : duration(m);
        if (initial != null && max != null && max.compareTo(initial) < 0) {
            problem(m == null ? n : m, "max-backoff (" + max + ") is shorter than initial-backoff (" + initial + ")");
        }
        return new AgentConfig.Retry(attempts, initial, max);
    }

    private List<AgentConfig.VolumeConfig> volumes(YamlNode n, YamlNode parent) {
        List<AgentConfig.VolumeConfig> out = new ArrayList<>();
        if (n == null || n.kind == YamlNode.Kind.NULL || (n.kind == YamlNode.Kind.LIST && n.items.isEmpty())) {
            problem(n == null ? parent.line : n.line, "volumes", "missing: list at least one volume (name, source, schedule)");
            return out;
        }
        if (n.kind != YamlNode.Kind.LIST) {
            problem(n, "must be a list of volumes, each starting with '- name: ...'");
            return out;
        }
        Set<String> names = new HashSet<>();
        for (YamlNode v : n.items) {
            if (!map(v)) {
                continue;
            }
            known(v, "name", "source", "schedule", "block-size", "hooks", "dirty-bitmap");
            String name = required(v, "name", "the volume's name on the server");
            if (name != null && !VolumeId.isValid(name)) {
                problem(v.fields.get("name"), "invalid volume name '" + name + "': use 1 to 128 letters, digits, '.', '_' or '-',"
                        + " not starting with '.'");
            } else if (name != null && !names.add(name)) {
                problem(v.fields.get("name"), "volume '" + name + "' is listed twice");
            }
            YamlNode src = v.fields.get("source");
            Path source = null;
            if (src == null) {
                problem(v.line, v.path + ".source", "missing: the image file or block device to back up");
            } else {
                source = absolutePath(src);
            }
            CronSchedule schedule = null;
            String cron = required(v, "schedule", "a cron expression such as '0 2 * * *' (daily at 02:00)");
            if (cron != null) {
                try {
                    schedule = CronSchedule.parse(cron);
                } catch (IllegalArgumentException e) {
                    problem(v.fields.get("schedule"), e.getMessage());
                }
            }
            YamlNode bs = v.fields.get("block-size");
            int blockSize = 0;
            if (bs != null) {
                blockSize = integer(bs, 512, 1 << 20);
                if (blockSize > 0 && Integer.bitCount(blockSize) != 1) {
                    problem(bs, blockSize + " is not a power of two (512 to 1048576)");
                }
            }
            AgentConfig.Hook pre = null;
            AgentConfig.Hook post = null;
            YamlNode hooks = v.fields.get("hooks");
            if (hooks != null && map(hooks)) {
                known(hooks, "pre", "post");
                pre = hook(hooks.fields.get("pre"));
                post = hook(hooks.fields.get("post"));
            }
            YamlNode dirtyBitmap = v.fields.get("dirty-bitmap");
            out.add(new AgentConfig.VolumeConfig(name, source, blockSize, schedule, pre, post,
                    dirtyBitmap != null && bool(dirtyBitmap)));
        }
        return out;
    }

    /** A hook is a command string (default timeout), or a mapping with command and timeout. */
    private AgentConfig.Hook hook(YamlNode n) {
        if (n == null || n.kind == YamlNode.Kind.NULL) {
            return null;
        }
        if (n.kind == YamlNode.Kind.SCALAR) {
            return n.text.isBlank() ? blankCommand(n) : new AgentConfig.Hook(n.text, DEFAULT_HOOK_TIMEOUT);
        }
        if (!map(n)) {
            return null;
        }
        known(n, "command", "timeout");
        String command = required(n, "command", "the shell command to run");
        if (command != null && command.isBlank()) {
            return blankCommand(n.fields.get("command"));
        }
        YamlNode t = n.fields.get("timeout");
        Duration timeout = t == null ? DEFAULT_HOOK_TIMEOUT : duration(t);
        if (timeout != null && timeout.isZero()) {
            problem(t, "a hook timeout must be longer than 0");
        }
        return command == null ? null : new AgentConfig.Hook(command, timeout);
    }

    private AgentConfig.Hook blankCommand(YamlNode n) {
        problem(n, "empty command; remove the hook or give a command");
        return null;
    }

    private String required(YamlNode map, String field, String what) {
        YamlNode n = map.fields.get(field);
        if (n == null) {
            problem(map.line, (map.path.isEmpty() ? "" : map.path + ".") + field, "missing: " + what);
            return null;
        }
        return scalar(n);
    }

    private void known(YamlNode map, String... fields) {
        List<String> names = List.of(fields);
        for (Map.Entry<String, YamlNode> e : map.fields.entrySet()) {
            if (!names.contains(e.getKey())) {
                problem(e.getValue(), "unknown field '" + e.getKey() + "' (known here: " + String.join(", ", names) + ")");
            }
        }
    }

    private boolean map(YamlNode n) {
        if (n.kind != YamlNode.Kind.MAP) {
            problem(n, "must be a mapping (field: value lines)");
            return false;
        }
        return true;
    }

    private String scalar(YamlNode n) {
        if (n.kind != YamlNode.Kind.SCALAR) {
            problem(n, n.kind == YamlNode.Kind.NULL ? "has no value" : "must be a single value, not a "
                    + (n.kind == YamlNode.Kind.MAP ? "mapping" : "list"));
            return null;
        }
        return n.text;
    }

    private boolean bool(YamlNode n) {
        String s = scalar(n);
        if (s == null) {
            return false;
        }
        if (!s.equals("true") && !s.equals("false")) {
            problem(n, "'" + s + "' is not true or false");
        }
        return s.equals("true");
    }

    private int integer(YamlNode n, int min, int max) {
        String s = scalar(n);
        if (s == null) {
            return 0;
        }
        try {
            int v = Integer.parseInt(s.strip());
            if (v < min || v > max) {
                problem(n, v + " is out of range " + min + " to " + max);
                return 0;
            }
            return v;
        } catch (NumberFormatException e) {
            problem(n, "'" + s + "' is not a whole number");
            return 0;
        }
    }

    /** {@code 90}, {@code 90s}, {@code 500ms}, {@code 5m}, {@code 2h}; a bare number is seconds. */
    private Duration duration(YamlNode n) {
        String s = scalar(n);
        if (s == null) {
            return null;
        }
        Matcher m = DURATION.matcher(s.strip());
        if (!m.matches()) {
            problem(n, "'" + s + "' is not a duration like 30s, 500ms, 5m or 2h");
            return null;
        }
        long v = Long.parseLong(m.group(1));
        String unit = m.group(2) == null ? "s" : m.group(2);
        return switch (unit) {
            case "ms" -> Duration.ofMillis(v);
            case "m" -> Duration.ofMinutes(v);
            case "h" -> Duration.ofHours(v);
            default -> Duration.ofSeconds(v);
        };
    }

    private Path absolutePath(YamlNode n) {
        String s = scalar(n);
        if (s == null || s.isBlank()) {
            if (s != null) {
                problem(n, "empty path");
            }
            return null;
        }
        Path p = Path.of(s);
        if (!p.isAbsolute()) {
            problem(n, "'" + s + "' is a relative path; write it absolute (a service's working directory is not yours)");
            return null;
        }
        return p;
    }

    private Path readableFile(YamlNode n) {
        Path p = absolutePath(n);
        if (p != null && !Files.isReadable(p)) {
            problem(n, Files.exists(p) ? p + " is not readable by this user" : p + " does not exist");
        }
        return p;
    }

    private void problem(YamlNode n, String message) {
        problem(n.line, n.path, message);
    }

    private void problem(int line, String field, String message) {
        String where = "line " + line + (field == null || field.isEmpty() ? "" : ", " + field);
        problems.computeIfAbsent(line, k -> new ArrayList<>()).add(where + ": " + message);
    }

    private ConfigException failure() {
        List<String> all = new ArrayList<>();
        problems.values().forEach(all::addAll);
        return new ConfigException(file, all);
    }
}
