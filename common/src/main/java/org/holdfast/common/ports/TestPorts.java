package org.holdfast.common.ports;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.UnknownHostException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Claims TCP ports for servers a test starts later (a child JVM, a fake peer), so that no other test
 * JVM on the machine claims the same port in the meantime. A claimed port lies outside the kernel's
 * ephemeral range (the kernel never takes it as the source port of an outgoing connection), is held
 * by an exclusive lock on {@code /tmp/holdfast-test-ports/<port>.lock} for the rest of this JVM's
 * life (the kernel drops the lock when the JVM exits, however it exits), is never handed out twice
 * by this JVM, and was free to bind on the wildcard address and on each address the caller names
 * when it was claimed. Probing alone did not do: two test JVMs could probe the same free port and
 * both hand it out.
 */
public final class TestPorts {
    /** Where the lock files live; {@code holdfast.test.port-locks} moves them (all JVMs must agree). */
    static final Path LOCKS = Path.of(System.getProperty("holdfast.test.port-locks", "/tmp/holdfast-test-ports"));
    private static final Path EPHEMERAL = Path.of("/proc/sys/net/ipv4/ip_local_port_range");
    private static final int ATTEMPTS = 500;
    /** Ports this JVM holds, with their lock's channel: kept open (and reachable) until the JVM exits. */
    private static final Map<Integer, FileChannel> HELD = new HashMap<>();
    private static int[] range;

    private TestPorts() {
    }

    /** A port claimed for this JVM, free on the wildcard address and on the loopback address. */
    public static int claim() {
        return claim(InetAddress.getLoopbackAddress());
    }

    /**
     * A port claimed for this JVM, free on the wildcard address and on each of {@code hosts}
     * ("127.0.0.2", ...: the addresses the caller's servers will bind).
     */
    public static int claim(String... hosts) {
        InetAddress[] addresses = new InetAddress[hosts.length];
        for (int i = 0; i < hosts.length; i++) {
            try {
                addresses[i] = InetAddress.getByName(hosts[i]);
            } catch (UnknownHostException e) {
                throw new IllegalArgumentException("not an address: " + hosts[i], e);
            }
        }
        return claim(addresses);
    }

    private static synchronized int claim(InetAddress... addresses) {
        int[] r = range();
        try {
            Files.createDirectories(LOCKS);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create the port lock directory " + LOCKS + ": make it writable", e);
        }
        for (int attempt = 0; attempt < ATTEMPTS; attempt++) {
            int port = r[0] + ThreadLocalRandom.current().nextInt(r[1] - r[0]);
            // checked before any channel is opened: closing a second channel on a file this JVM
            // has locked would drop that lock
            if (HELD.containsKey(port)) {
                continue;
            }
            FileChannel lock = tryLock(port);
            if (lock == null) {
                continue; // another JVM holds it
            }
            if (bindable(port, addresses)) {
                HELD.put(port, lock);
                return port;
            }
            close(lock); // in use by something that takes no lock: draw again
        }
        throw new IllegalStateException("no port in [" + r[0] + ", " + r[1] + ") could be claimed after " + ATTEMPTS
                + " draws: see which processes hold ports there (ss -ltn) and the locks in " + LOCKS);
    }

    /** The ports this JVM has claimed so far. */
    static synchronized java.util.Set<Integer> held() {
        return java.util.Set.copyOf(HELD.keySet());
    }

    private static FileChannel tryLock(int port) {
        FileChannel channel = null;
        try {
            channel = FileChannel.open(LOCKS.resolve(port + ".lock"), StandardOpenOption.CREATE, StandardOpenOption.WRITE);
            FileLock lock = channel.tryLock();
            if (lock != null) {
                return channel;
            }
        } catch (IOException | OverlappingFileLockException e) {
            // unreadable or held: draw again
        }
        close(channel);
        return null;
    }

    private static boolean bindable(int port, InetAddress... addresses) {
        if (!bindable(new InetSocketAddress(port))) {
            return false;
        }
        for (InetAddress a : addresses) {
            if (!bindable(new InetSocketAddress(a, port))) {
                return false;
            }
        }
        return true;
    }

    private static boolean bindable(InetSocketAddress address) {
        try (ServerSocket s = new ServerSocket()) {
            // strict, as the servers bind: a port whose connections still linger in TIME_WAIT counts as taken
            s.setReuseAddress(false);
            s.bind(address, 1);
            return true;
        } catch (IOException taken) {
            return false;
        }
    }

    private static void close(FileChannel channel) {
        if (channel == null) {
            return;
        }
        try {
            channel.close();
        } catch (IOException e) {
            // nothing held through it any more
        }
    }

    private static int[] range() {
        if (range == null) {
            range = rangeOutside(ephemeralRange());
        }
        return range;
    }

    /** The kernel's ephemeral range as /proc states it, or Linux's default where it cannot be read. */
    private static String ephemeralRange() {
        try {
            // procfs files report a size of 0: read lines until the end, never a size-bound read
            return String.join(" ", Files.readAllLines(EPHEMERAL));
        } catch (IOException e) {
            return "32768 60999"; // not Linux: the usual range
        }
    }

    /**
     * Where claimed ports are drawn from, [from, to), given the ephemeral range's text ("32768\t60999"):
     * 20000 up to the range's start, or above its end when it starts too low to leave room below.
     */
    static int[] rangeOutside(String ephemeral) {
        List<String> fields = List.of(ephemeral.trim().split("\\s+"));
        if (fields.size() != 2) {
            throw new IllegalStateException("cannot read the ephemeral port range from '" + ephemeral + "': expected two numbers");
        }
        int low;
        int high;
        try {
            low = Integer.parseInt(fields.get(0));
            high = Integer.parseInt(fields.get(1));
        } catch (NumberFormatException e) {
            throw new IllegalStateException("cannot read the ephemeral port range from '" + ephemeral + "': expected two numbers", e);
        }
        if (low >= 21_000) {
            return new int[] {20_000, low};
        }
        if (high <= 64_535) {
            return new int[] {high + 1, 65_536};
        }
        throw new IllegalStateException("the ephemeral port range " + low + "-" + high
                + " leaves no room for test servers' ports: narrow net.ipv4.ip_local_port_range");
    }
}
