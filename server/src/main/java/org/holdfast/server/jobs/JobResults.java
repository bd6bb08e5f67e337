package org.holdfast.server.jobs;

import java.lang.reflect.RecordComponent;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Turns what a job answers into its stored result: a tree of maps (insertion order kept), lists,
 * text, booleans, longs and doubles, which the store can encode and JSON shows as it is. Records
 * become maps of their components, so a job can answer its report record as is; enums become
 * their lower-case names, instants ISO-8601 text, anything else its {@code toString()}.
 */
public final class JobResults {
    /** Deepest nesting kept; deeper values become text (a report is a few levels deep). */
    static final int MAX_DEPTH = 8;

    private JobResults() {
    }

    /** The result tree of {@code value}: a map (a non-map value is kept under {@code value}). */
    public static Map<String, Object> of(Object value) {
        if (value == null) {
            return Map.of();
        }
        Object v = convert(value, 0);
        if (v instanceof Map<?, ?> m) {
            @SuppressWarnings("unchecked")
            Map<String, Object> map = (Map<String, Object>) m;
            return map;
        }
        Map<String, Object> wrapped = new LinkedHashMap<>();
        wrapped.put("value", v);
        return Collections.unmodifiableMap(wrapped);
    }

    private static Object convert(Object v, int depth) {
        if (v == null || v instanceof String || v instanceof Boolean || v instanceof Long || v instanceof Double) {
            return v;
        }
        if (v instanceof Integer || v instanceof Short || v instanceof Byte) {
            return ((Number) v).longValue();
        }
        if (v instanceof Float f) {
            return f.doubleValue();
        }
        if (v instanceof Enum<?> e) {
            return e.name().toLowerCase(Locale.ROOT);
        }
        if (v instanceof Instant i) {
            return i.toString();
        }
        if (depth >= MAX_DEPTH) {
            return String.valueOf(v);
        }
        if (v instanceof Map<?, ?> m) {
            Map<String, Object> out = new LinkedHashMap<>();
            m.forEach((k, x) -> out.put(String.valueOf(k), convert(x, depth + 1)));
            return Collections.unmodifiableMap(out);
        }
        if (v instanceof Collection<?> c) {
            List<Object> out = new ArrayList<>(c.size());
            for (Object x : c) {
                out.add(convert(x, depth + 1));
            }
            return Collections.unmodifiableList(out);
        }
        if (v.getClass().isRecord()) {
            Map<String, Object> out = new LinkedHashMap<>();
            for (RecordComponent rc : v.getClass().getRecordComponents()) {
                try {
                    rc.getAccessor().setAccessible(true);
                    out.put(rc.getName(), convert(rc.getAccessor().invoke(v), depth + 1));
                } catch (ReflectiveOperationException | RuntimeException e) {
                    out.put(rc.getName(), "unreadable: " + e);
                }
            }
            return Collections.unmodifiableMap(out);
        }
        return String.valueOf(v);
    }
}
