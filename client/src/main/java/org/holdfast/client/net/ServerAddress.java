package org.holdfast.client.net;

import org.holdfast.client.AgentException;
import org.holdfast.client.ExitCode;

/** A server's ingest address, parsed from {@code HOST:PORT}, {@code HOST} or {@code [IPv6]:PORT}. */
public record ServerAddress(String host, int port) {
    /** The ingest port when none is given. */
    public static final int DEFAULT_PORT = 7070;

    public ServerAddress {
        if (host == null || host.isBlank()) {
            throw new IllegalArgumentException("host must not be empty");
        }
        if (port < 1 || port > 65535) {
            throw new IllegalArgumentException("port out of range: " + port);
        }
    }

    /** Parses {@code text}; a bad value is a usage error. */
    public static ServerAddress parse(String text) {
        String t = text == null ? "" : text.strip();
        String host = t;
        String port = null;
        if (t.startsWith("[")) {
            int close = t.indexOf(']');
            if (close < 0) {
                throw bad(text);
            }
            host = t.substring(1, close);
            if (t.length() > close + 1) {
                if (t.charAt(close + 1) != ':') {
                    throw bad(text);
                }
                port = t.substring(close + 2);
            }
        } else if (t.indexOf(':') >= 0 && t.indexOf(':') == t.lastIndexOf(':')) {
            host = t.substring(0, t.indexOf(':'));
            port = t.substring(t.indexOf(':') + 1);
        }
        if (host.isEmpty()) {
            throw bad(text);
        }
        try {
            return new ServerAddress(host, port == null ? DEFAULT_PORT : Integer.parseInt(port));
        } catch (IllegalArgumentException e) {
            throw bad(text);
        }
    }

    private static AgentException bad(String text) {
        return new AgentException(ExitCode.USAGE, "invalid --server '" + text + "'",
                "use HOST:PORT, for example localhost:" + DEFAULT_PORT);
    }

    /** A file-name-safe key naming this server, for the state directory. */
    public String key() {
        return (host + "_" + port).replaceAll("[^A-Za-z0-9._-]", "_");
    }

    @Override
    public String toString() {
        return (host.indexOf(':') >= 0 ? "[" + host + "]" : host) + ":" + port;
    }
}
