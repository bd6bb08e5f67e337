package org.holdfast.bench.runner;

import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A value of {@code --engines} and the server arguments that select it: {@code sungem}, {@code exact},
 * or {@code cluster<N>} / {@code cluster<N>-hash} for the master/worker engine with N in-process
 * workers in nearest or hash mode (the server's preview, {@code holdfast.dedup.cluster.*}), and
 * {@code cluster<N>-full}: nearest mode with a full broadcast instead of the default two-phase one.
 */
public final class EngineOption {
    private static final Pattern CLUSTER = Pattern.compile("cluster(\\d{1,2})(-hash|-full)?");

    private EngineOption() {
    }

    /** The server arguments for {@code engine}; an unknown name is an error naming the accepted ones. */
    public static List<String> serverArgs(String engine) {
        if (engine.equals("sungem") || engine.equals("exact")) {
            return List.of("--holdfast.dedup.engine=" + engine);
        }
        Matcher m = CLUSTER.matcher(engine);
        if (m.matches() && Integer.parseInt(m.group(1)) >= 1) {
            List<String> args = List.of("--holdfast.dedup.engine=cluster", "--holdfast.dedup.cluster.workers=" + Integer.parseInt(m.group(1)),
                    "--holdfast.dedup.cluster.mode=" + ("-hash".equals(m.group(2)) ? "hash" : "nearest"));
            if ("-full".equals(m.group(2))) {
                args = new java.util.ArrayList<>(args);
                args.add("--holdfast.dedup.cluster.broadcast=full");
            }
            return List.copyOf(args);
        }
        throw new IllegalArgumentException("unknown engine '" + engine + "': use sungem, exact, cluster<N>, cluster<N>-hash or cluster<N>-full"
                + " (N in-process workers, e.g. cluster4)");
    }
}
