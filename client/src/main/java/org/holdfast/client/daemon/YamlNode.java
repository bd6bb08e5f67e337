package org.holdfast.client.daemon;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import java.io.IOException;
import java.io.Reader;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A YAML document as a tree that remembers the line of every value, so that a config error can
 * name the line (Jackson's own tree forgets locations).
 */
final class YamlNode {
    enum Kind { MAP, LIST, SCALAR, NULL }

    final Kind kind;
    final int line;
    /** The field's path as a user writes it: {@code volumes[1].hooks.pre}. */
    final String path;
    final Map<String, YamlNode> fields;
    final List<YamlNode> items;
    final String text;

    private YamlNode(Kind kind, int line, String path, Map<String, YamlNode> fields, List<YamlNode> items, String text) {
        this.kind = kind;
        this.line = line;
        this.path = path;
        this.fields = fields;
        this.items = items;
        this.text = text;
    }

    /** Thrown for a document that is not YAML; carries the line. */
    static final class SyntaxError extends Exception {
        final int line;

        SyntaxError(int line, String message) {
            super(message);
            this.line = line;
        }
    }

    /** Parses one document; duplicate keys go to {@code problems} as "line: message". */
    static YamlNode parse(Reader reader, List<String[]> duplicates) throws IOException, SyntaxError {
        try (JsonParser p = new YAMLFactory().createParser(reader)) {
            if (p.nextToken() == null) {
                return new YamlNode(Kind.NULL, 1, "", Map.of(), List.of(), null);
            }
            return read(p, "", duplicates);
        } catch (JsonProcessingException e) {
            int line = e.getLocation() == null ? 0 : e.getLocation().getLineNr();
            String msg = e.getOriginalMessage() == null ? e.toString() : e.getOriginalMessage();
            throw new SyntaxError(line, msg.lines().findFirst().orElse(msg).strip());
        }
    }

    private static YamlNode read(JsonParser p, String path, List<String[]> duplicates) throws IOException {
        int line = p.currentTokenLocation().getLineNr();
        JsonToken t = p.currentToken();
        if (t == JsonToken.START_OBJECT) {
            Map<String, YamlNode> fields = new LinkedHashMap<>();
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String name = p.currentName();
                int nameLine = p.currentTokenLocation().getLineNr();
                p.nextToken();
                String childPath = path.isEmpty() ? name : path + "." + name;
                YamlNode child = read(p, childPath, duplicates);
                if (fields.putIfAbsent(name, child) != null) {
                    duplicates.add(new String[] {String.valueOf(nameLine), childPath});
                }
            }
            return new YamlNode(Kind.MAP, line, path, fields, List.of(), null);
        }
        if (t == JsonToken.START_ARRAY) {
            List<YamlNode> items = new ArrayList<>();
            while (p.nextToken() != JsonToken.END_ARRAY) {
                items.add(read(p, path + "[" + items.size() + "]", duplicates));
            }
            return new YamlNode(Kind.LIST, line, path, Map.of(), items, null);
        }
        if (t == JsonToken.VALUE_NULL) {
            return new YamlNode(Kind.NULL, line, path, Map.of(), List.of(), null);
        }
        return new YamlNode(Kind.SCALAR, line, path, Map.of(), List.of(), p.getText());
    }
}
