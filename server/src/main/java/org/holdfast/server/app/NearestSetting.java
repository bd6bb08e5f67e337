package org.holdfast.server.app;

import java.util.Comparator;
import java.util.Locale;
import java.util.Optional;
import org.holdfast.common.text.EditDistance;

/** The known setting a misspelt name most likely meant, for the advice "did you mean ...?". */
final class NearestSetting {
    private NearestSetting() {
    }

    /**
     * The known setting nearest to {@code name} (any spelling: dots, dashes, underscores and case are
     * ignored), if one is close: a few letters off, or one whose last word contains the name's
     * ({@code holdfast.gc.retention}: {@code holdfast.gc.default-retention}); one in the same group first.
     */
    static Optional<String> to(String name) {
        String dotted = name.toLowerCase(Locale.ROOT).replace('_', '.');
        String key = key(name);
        String last = key(dotted.substring(dotted.lastIndexOf('.') + 1));
        String group = dotted.substring(0, Math.max(0, dotted.lastIndexOf('.')));
        return SettingNames.known().stream()
                .map(k -> new Candidate(k, EditDistance.levenshtein(key, key(k)), key(k).startsWith(key(group)) ? 0 : 1))
                .filter(c -> c.distance() <= Math.max(2, key.length() / 5)
                        || last.length() >= 4 && key(c.setting().substring(c.setting().lastIndexOf('.') + 1)).contains(last))
                .min(Comparator.comparingInt(Candidate::otherGroup).thenComparingInt(Candidate::distance))
                .map(Candidate::setting);
    }

    private record Candidate(String setting, int distance, int otherGroup) {
    }

    private static String key(String name) {
        return name.toLowerCase(Locale.ROOT).replaceAll("[-_.]", "");
    }
}
