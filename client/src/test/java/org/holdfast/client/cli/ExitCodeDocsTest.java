package org.holdfast.client.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.holdfast.client.ExitCode;
import org.junit.jupiter.api.Test;

/** Every exit code the agent defines is documented in docs/agent.md and in --help, and nothing else is. */
class ExitCodeDocsTest {
    private static final Path DOC = Path.of("..", "docs", "agent.md");

    static Set<Integer> defined() {
        return Arrays.stream(ExitCode.values()).map(ExitCode::code).collect(Collectors.toCollection(TreeSet::new));
    }

    /** The codes in the table of the "## Exit codes" section: rows {@code | N | meaning |}. */
    static Set<Integer> documented(String markdown) {
        int start = markdown.indexOf("\n## Exit codes\n");
        assertThat(start).as("docs/agent.md has an '## Exit codes' section").isNotNegative();
        int end = markdown.indexOf("\n## ", start + 1);
        String section = markdown.substring(start, end < 0 ? markdown.length() : end);
        Set<Integer> codes = new TreeSet<>();
        Matcher m = Pattern.compile("(?m)^\\|\\s*(\\d+)\\s*\\|").matcher(section);
        while (m.find()) {
            assertThat(codes.add(Integer.parseInt(m.group(1)))).as("code %s documented once", m.group(1)).isTrue();
        }
        return codes;
    }

    @Test
    void exitCodes_docsTable_matchesExitCodeEnum() throws Exception {
        assertThat(documented(Files.readString(DOC))).isEqualTo(defined());
    }

    /** The --json failure document's names: docs/agent.md lists each as {@code `name` (N)}. */
    @Test
    void exitCodes_jsonNames_documented() throws Exception {
        String doc = Files.readString(DOC);
        for (ExitCode c : ExitCode.values()) {
            if (c != ExitCode.OK) {
                assertThat(doc).contains("`" + c.jsonName() + "` (" + c.code() + ")");
            }
        }
    }

    @Test
    void exitCodes_helpFooter_matchesExitCodeEnum() {
        Set<Integer> help = new TreeSet<>();
        Matcher m = Pattern.compile("^  (\\d+)  ").matcher("");
        for (String line : HoldfastAgent.EXIT_CODES) {
            if (m.reset(line).find()) {
                help.add(Integer.parseInt(m.group(1)));
            }
        }
        assertThat(help).isEqualTo(defined());
    }

    @Test
    void documented_rowMissing_detected() {
        String doc = "# Agent\n\n## Exit codes\n\n| code | meaning |\n| --- | --- |\n| 0 | ok |\n| 9 | extra |\n\n## Next\n| 1 | no |\n";
        assertThat(documented(doc)).containsExactly(0, 9).isNotEqualTo(defined());
    }
}
