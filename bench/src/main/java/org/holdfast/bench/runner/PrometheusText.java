package org.holdfast.bench.runner;

import java.util.Map;
import java.util.TreeMap;

/** The Prometheus text format reduced to metric name (without labels) to the sum of its samples. */
public final class PrometheusText {
    private PrometheusText() {
    }

    /** Sums the samples of each metric name; comments and unparsable lines are skipped. */
    public static Map<String, Double> parse(String text) {
        Map<String, Double> sums = new TreeMap<>();
        for (String line : text.split("\\R")) {
            if (line.isBlank() || line.startsWith("#")) {
                continue;
            }
            int brace = line.indexOf('{');
            int nameEnd = brace > 0 ? brace : line.indexOf(' ');
            if (nameEnd <= 0) {
                continue;
            }
            String name = line.substring(0, nameEnd);
            // After the labels come the value and, optionally, a timestamp.
            String rest = (brace > 0 ? line.substring(line.lastIndexOf('}') + 1) : line.substring(nameEnd)).trim();
            String value = rest.split("\\s+")[0];
            try {
                sums.merge(name, Double.parseDouble(value), Double::sum);
            } catch (NumberFormatException e) {
                // NaN and odd values are not summed.
            }
        }
        return sums;
    }

    /** The first metric whose name contains all parts, or null. */
    public static String find(Map<String, Double> metrics, String... parts) {
        for (String name : metrics.keySet()) {
            boolean all = true;
            for (String p : parts) {
                all &= name.contains(p);
            }
            if (all) {
                return name;
            }
        }
        return null;
    }
}
