package org.holdfast.server.app;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.env.YamlPropertySourceLoader;
import org.springframework.core.env.MapPropertySource;
import org.springframework.core.env.SimpleCommandLinePropertySource;
import org.springframework.core.env.StandardEnvironment;
import org.springframework.core.env.SystemEnvironmentPropertySource;
import org.springframework.core.io.FileSystemResource;

/**
 * {@link UnknownSettings} and {@link SettingNames}: a misspelt holdfast.* name from any source is
 * refused with its source and the nearest setting; every setting the code reads, the docs list or a
 * script or test passes is known, so the check never refuses a real one.
 */
class UnknownSettingsTest {
    private static final Path REPO = Path.of("").toAbsolutePath().getParent();

    /** An environment with nothing but {@code sources} (no real environment variables or system properties). */
    private static StandardEnvironment env(org.springframework.core.env.PropertySource<?>... sources) {
        StandardEnvironment env = new StandardEnvironment();
        env.getPropertySources().remove(StandardEnvironment.SYSTEM_ENVIRONMENT_PROPERTY_SOURCE_NAME);
        env.getPropertySources().remove(StandardEnvironment.SYSTEM_PROPERTIES_PROPERTY_SOURCE_NAME);
        for (var s : sources) {
            env.getPropertySources().addLast(s);
        }
        return env;
    }

    private static SystemEnvironmentPropertySource variables(Map<String, Object> vars) {
        return new SystemEnvironmentPropertySource(StandardEnvironment.SYSTEM_ENVIRONMENT_PROPERTY_SOURCE_NAME, vars);
    }

    private static String refusal(StandardEnvironment env) {
        try {
            UnknownSettings.check(env);
        } catch (UnknownSettingException e) {
            return e.getMessage();
        }
        throw new AssertionError("not refused");
    }

    @Test
    void known_listsTheNestedRecordsSettings_andTheSettingsOfEveryPropertiesRecord() {
        assertThat(SettingNames.known()).contains("holdfast.data-dir", "holdfast.store.s3.bucket", "holdfast.store.s3.max-read-requests-per-second",
                "holdfast.dedup.sungem.u-segment", "holdfast.dedup.shadow-exact", "holdfast.dedup.cluster.broadcast", "holdfast.gc.default-retention",
                "holdfast.catalog.backup.directory", "holdfast.audit.retention", "holdfast.verify.window", "holdfast.stats.survey-interval",
                "holdfast.cluster.lost-after", "holdfast.ingest.max-volume-size");
        // groups are not settings: holdfast.store.s3=x would bind nothing
        assertThat(SettingNames.known()).doesNotContain("holdfast.store.s3", "holdfast.dedup", "holdfast.gc");
    }

    record WithMap(Map<String, String> labels) {
    }

    @Test
    void addNames_refusesWhatItCannotList_soANewKindOfSettingFailsHere() {
        assertThatThrownBy(() -> SettingNames.addNames(WithMap.class, "holdfast.x", new TreeSet<>()))
                .hasMessageContaining("holdfast.x.labels").hasMessageContaining("java.util.Map");
        assertThatThrownBy(() -> SettingNames.addNames(String.class, "holdfast.y", new TreeSet<>()))
                .hasMessageContaining("not a record");
    }

    @Test
    void check_commandLineTypo_namesItsSourceAndTheNearestSetting() {
        String m = refusal(env(new SimpleCommandLinePropertySource("--holdfast.store.s3.bukcet=b", "--holdfast.data-dir=/srv/h")));
        assertThat(m).isEqualTo("unknown setting holdfast.store.s3.bukcet (command line): did you mean holdfast.store.s3.bucket?");
    }

    @Test
    void check_environmentTypo_namesTheVariableToSet_andAcceptsSpringsSpellingsAndOtherProgramsVariables() {
        String m = refusal(env(variables(Map.of("HOLDFAST_STORE_S3_BUKCET", "b", "HOLDFAST_DATADIR", "/srv/h", "HOLDFAST_DATA_DIR", "/srv/h",
                "HOLDFAST_TOKEN", "t", "HOLDFAST_AGENT_JAR", "a.jar", "HOLDFAST_SERVER_JAR", "s.jar", "PATH", "/bin"))));
        assertThat(m).isEqualTo("unknown setting HOLDFAST_STORE_S3_BUKCET (environment variable): did you mean"
                + " HOLDFAST_STORE_S3_BUCKET (holdfast.store.s3.bucket)?");
    }

    /**
     * Kubernetes gives every pod of a namespace these variables for a Service named holdfast (or
     * holdfast-ingest), the server's own pod included; Docker links give the same port variables. They
     * name no setting, and refusing them would stop a server in such a pod with nothing the operator set.
     */
    @Test
    void check_serviceLinkVariablesOfAServiceNamedHoldfast_pass_butATypoBesideThemIsStillRefused() {
        Map<String, Object> vars = new java.util.HashMap<>(Map.of(
                "HOLDFAST_SERVICE_HOST", "10.96.0.12", "HOLDFAST_SERVICE_PORT", "8080", "HOLDFAST_SERVICE_PORT_HTTPS", "8080",
                "HOLDFAST_PORT", "tcp://10.96.0.12:8080", "HOLDFAST_PORT_8080_TCP", "tcp://10.96.0.12:8080",
                "HOLDFAST_PORT_8080_TCP_PROTO", "tcp", "HOLDFAST_PORT_8080_TCP_PORT", "8080", "HOLDFAST_PORT_8080_TCP_ADDR", "10.96.0.12",
                "HOLDFAST_AGENTS_SERVICE_HOST", "10.96.0.13", "HOLDFAST_AGENTS_PORT_7070_TCP_ADDR", "10.96.0.13"));
        vars.put("HOLDFAST_AGENTS_PORT", "tcp://10.96.0.13:7070");
        UnknownSettings.check(env(variables(vars)));

        vars.put("HOLDFAST_INGST_PORT", "7070"); // a typo of HOLDFAST_INGEST_PORT: a number, no service link's tcp:// address
        assertThat(refusal(env(variables(vars)))).isEqualTo("unknown setting HOLDFAST_INGST_PORT (environment variable):"
                + " did you mean HOLDFAST_INGEST_PORT (holdfast.ingest.port)?");
    }

    @Test
    void check_systemPropertyTypo_isRefused_butTheHarnessesPropertiesPass() {
        MapPropertySource props = new MapPropertySource(StandardEnvironment.SYSTEM_PROPERTIES_PROPERTY_SOURCE_NAME, Map.of(
                "holdfast.gc.defaultRetention", "7d", "holdfast.gc.retention", "7d", "holdfast.kill-point", "x",
                "holdfast.test.port-locks", "/tmp/l", "holdfast.e2e.child-jvm-options", "-X", "java.io.tmpdir", "/tmp"));
        assertThat(refusal(env(props))).isEqualTo("unknown setting holdfast.gc.retention (system property -Dholdfast.gc.retention):"
                + " did you mean holdfast.gc.default-retention?");
    }

    @Test
    void check_configFile_namesTheFileAndLine_andEveryUnknownNameAtOnce(@TempDir Path dir) throws IOException {
        Path yml = Files.writeString(dir.resolve("application.yml"), """
                holdfast:
                  data-dir: /srv/h
                  store:
                    s3:
                      bucket: b
                      endpont: http://127.0.0.1:9000
                  frobnicate: 3
                """);
        var sources = new YamlPropertySourceLoader().load("config", new FileSystemResource(yml));
        String m = refusal(env(sources.get(0)));
        assertThat(m).startsWith("unknown settings holdfast.store.s3.endpont (").contains("application.yml] - 6:")
                .contains("did you mean holdfast.store.s3.endpoint?")
                .contains("; holdfast.frobnicate (").contains("no setting has a name like it (docs/operations.md lists them)");
    }

    @Test
    void check_theBuiltInDefaultsAndTheRealEnvironment_pass() throws IOException {
        var sources = new YamlPropertySourceLoader().load("defaults", new org.springframework.core.io.ClassPathResource("application.yml"));
        StandardEnvironment env = new StandardEnvironment(); // this JVM's system properties (surefire's) and environment
        sources.forEach(env.getPropertySources()::addLast);
        UnknownSettings.check(env);
    }

    /** Every setting name in a table of docs/operations.md ("`holdfast.x.a`, `b`" names holdfast.x.a and holdfast.x.b). */
    @Test
    void everyDocumentedSetting_isKnown_andPassesTheCheck() throws IOException {
        List<String> documented = new ArrayList<>();
        Pattern code = Pattern.compile("`([^`]+)`");
        for (String line : Files.readAllLines(REPO.resolve("docs/operations.md"))) {
            if (!line.startsWith("| `holdfast.")) {
                continue;
            }
            String parent = null;
            Matcher m = code.matcher(line.substring(0, line.indexOf('|', 1)));
            while (m.find()) {
                String name = m.group(1).replaceAll("=.*", "");
                if (name.startsWith("holdfast.")) {
                    parent = name.substring(0, name.lastIndexOf('.'));
                    documented.add(name);
                } else {
                    documented.add(parent + "." + name);
                }
            }
        }
        assertThat(documented).hasSizeGreaterThan(60);
        assertThat(SettingNames.known()).containsAll(documented);
        UnknownSettings.check(env(new SimpleCommandLinePropertySource(documented.stream().map(n -> "--" + n + "=1").toArray(String[]::new))));
    }

    /**
     * Settings read by name rather than bound (@Value, @ConditionalOnProperty, getProperty, the offline
     * tools' lookups), and every --holdfast.* or -Dholdfast.* that docs, scripts, tests and benchmarks
     * pass: each is a known setting or a harness's, so a new one read outside a record fails here.
     */
    @Test
    void everyNameReadOrPassedAnywhere_isKnownOrAHarnesssProperty() throws IOException {
        Pattern read = Pattern.compile("(?:\\$\\{|get(?:Property|Integer|Long|Boolean)\\(\"|apply\\(\"|(?:name|prefix) = \")"
                + "(holdfast\\.[a-zA-Z0-9.-]*[a-zA-Z0-9])");
        // a whole name: not the start of a placeholder like --holdfast.store.s3.NAME or a pattern like --holdfast.store.*
        Pattern passed = Pattern.compile("(?:--|-D)(holdfast\\.[a-zA-Z0-9.-]*[a-zA-Z0-9])(?![a-zA-Z0-9.*-])");
        Set<String> unknown = new TreeSet<>();
        List<Path> files;
        try (Stream<Path> s = Stream.of("server/src", "client/src", "common/src", "bench/src", "gc-engine/src", "docs", "docker", "server/bin", ".ci")
                .map(REPO::resolve).filter(Files::exists).flatMap(UnknownSettingsTest::walk)) {
            // the tests of the refusal spell settings wrong on purpose
            files = s.filter(f -> f.toString().matches(".*\\.(java|md|yml|yaml|sh|properties)$|.*/bin/.*|.*/\\.ci/.*"))
                    .filter(f -> !f.endsWith("UnknownSettingsTest.java") && !f.endsWith("ServerCliTest.java")).toList();
        }
        for (Path f : files) {
            String text = text(f);
            for (Pattern p : List.of(read, passed)) {
                Matcher m = p.matcher(text);
                while (m.find()) {
                    String name = m.group(1);
                    if (name.matches(".*\\.[A-Z]+")) {
                        continue; // a placeholder: holdfast.store.s3.NAME
                    }
                    if (!SettingNames.known().contains(name) && !SettingNames.otherProgram(name, false) && !prefixOfKnown(name, p == read)) {
                        unknown.add(name + " in " + REPO.relativize(f));
                    }
                }
            }
        }
        assertThat(unknown).isEmpty();
    }

    /** A @ConditionalOnProperty prefix or a concatenated name's start ("holdfast.store.s3." + name) is a group, not a setting. */
    private static boolean prefixOfKnown(String name, boolean read) {
        return read && SettingNames.known().stream().anyMatch(k -> k.startsWith(name + "."));
    }

    /** Every HOLDFAST_* variable the repository's scripts, docs and programs name is a setting's or another program's. */
    @Test
    void everyHoldfastVariableNamedAnywhere_isASettingOrAnotherProgramsVariable() throws IOException {
        Pattern variable = Pattern.compile("HOLDFAST_[A-Z0-9_]*[A-Z0-9]");
        Set<String> unknown = new TreeSet<>();
        try (Stream<Path> s = Stream.of("server/src/main", "client/src/main", "bench/src/main", "docs", "docker", "server/bin", ".ci", "README.md")
                .map(REPO::resolve).filter(Files::exists).flatMap(UnknownSettingsTest::walk)) {
            for (Path f : s.filter(f -> !f.endsWith("SettingNames.java")).toList()) { // it names HOLDFAST_AGENT_ as a prefix
                Matcher m = variable.matcher(text(f));
                while (m.find()) {
                    String v = m.group();
                    // a setting's (in any spelling Spring reads), or the start of a group in prose (HOLDFAST_STORE_*, HOLDFAST_AGENT_*)
                    boolean setting = accepted(v) || SettingNames.known().stream().anyMatch(k -> SettingNames.variable(k).startsWith(v + "_"));
                    // a Service's link variable, which the docs name (HOLDFAST_PORT=tcp://...)
                    boolean link = ServiceLinkVariables.is(v, "tcp://10.96.0.12:8080");
                    if (!setting && !link && !SettingNames.otherProgram(v, true) && !SettingNames.otherProgram(v + "_X", true)) {
                        unknown.add(v + " in " + REPO.relativize(f));
                    }
                }
            }
        }
        assertThat(unknown).isEmpty();
    }

    /** The file as text (bytes that are no UTF-8 become replacement characters) less the lines quoting a refusal's advice. */
    private static String text(Path f) throws IOException {
        return new String(Files.readAllBytes(f), java.nio.charset.StandardCharsets.UTF_8).replaceAll("(?m)^.*did you mean.*$", "");
    }

    private static boolean accepted(String variable) {
        try {
            UnknownSettings.check(env(variables(Map.of(variable, "x"))));
            return true;
        } catch (UnknownSettingException e) {
            return false;
        }
    }

    private static Stream<Path> walk(Path p) {
        try {
            return Files.isDirectory(p) ? Files.walk(p).filter(Files::isRegularFile).filter(f -> !f.toString().contains("/target/")
                    && !f.toString().contains("/node_modules/")) : Stream.of(p);
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
