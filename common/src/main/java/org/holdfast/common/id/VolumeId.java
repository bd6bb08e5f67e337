package org.holdfast.common.id;

import java.util.regex.Pattern;

/** The name of a protected volume, chosen by the operator: 1 to 128 of [A-Za-z0-9._-], not starting with a dot. */
public record VolumeId(String name) {
    /** Longest volume name accepted anywhere (wire, REST, catalog keys). */
    public static final int MAX_LENGTH = 128;

    private static final Pattern VALID = Pattern.compile("[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}");

    public VolumeId {
        if (name == null || !VALID.matcher(name).matches()) {
            throw new IllegalArgumentException("invalid volume name '" + name
                    + "': use 1 to " + MAX_LENGTH + " letters, digits, '.', '_' or '-', not starting with '.'");
        }
    }

    /** True if {@code name} would make a valid volume id. */
    public static boolean isValid(String name) {
        return name != null && VALID.matcher(name).matches();
    }

    @Override
    public String toString() {
        return name;
    }
}
