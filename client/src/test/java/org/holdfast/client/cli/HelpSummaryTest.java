package org.holdfast.client.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.LinkedHashMap;
import java.util.Map;
import org.holdfast.client.AgentRun;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** {@code holdfast-agent --help} lists each command with a summary that is a whole sentence, not one cut at a line break. */
class HelpSummaryTest {
    @Test
    void help_everyCommandSummary_isAWholeSentence() {
        AgentRun r = AgentRun.of("--help");
        assertThat(r.exit()).isZero();
        Map<String, String> summaries = commands(r.stdout());
        assertThat(summaries).containsOnlyKeys("backup", "snapshots", "restore", "daemon", "run-now", "status");
        summaries.forEach((name, summary) ->
                assertThat(summary).as("summary of %s in:%n%s", name, r.stdout()).endsWith(".").doesNotContain("  "));
        assertThat(summaries.get("daemon")).startsWith("Run as a service: back up each volume of the config file on its cron");
    }

    @Test
    void everySubcommand_firstDescriptionLine_endsASentence() {
        CommandLine cl = new CommandLine(new HoldfastAgent());
        cl.getSubcommands().forEach((name, sub) -> {
            String[] d = sub.getCommandSpec().usageMessage().description();
            assertThat(d).as(name).isNotEmpty();
            assertThat(d[0]).as("first description line of %s (the help's summary)", name).endsWith(".");
        });
    }

    /** The "Commands:" section: name to summary, continuation lines joined. */
    private static Map<String, String> commands(String help) {
        Map<String, String> out = new LinkedHashMap<>();
        String current = null;
        boolean in = false;
        for (String line : help.lines().toList()) {
            if (line.equals("Commands:")) {
                in = true;
            } else if (in && line.isBlank()) {
                break;
            } else if (in && line.matches("  \\S.*")) {
                String[] parts = line.strip().split("\\s+", 2);
                current = parts[0];
                out.put(current, parts.length > 1 ? parts[1].strip() : "");
            } else if (in && current != null) {
                out.merge(current, " " + line.strip(), String::concat);
            }
        }
        return out;
    }
}
