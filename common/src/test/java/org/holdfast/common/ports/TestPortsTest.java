package org.holdfast.common.ports;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class TestPortsTest {
    /** Enough claims that random draws from the ~12,000 ports would meet (p > 0.9) if nothing held them. */
    private static final int CLAIMS = 300;

    @Test
    void claim_fromTwoThreads_neverReturnsTheSamePortTwice() throws Exception {
        ConcurrentLinkedQueue<Integer> ports = new ConcurrentLinkedQueue<>();
        Runnable claimer = () -> {
            for (int i = 0; i < CLAIMS; i++) {
                ports.add(TestPorts.claim());
            }
        };
        Thread a = new Thread(claimer);
        Thread b = new Thread(claimer);
        a.start();
        b.start();
        a.join();
        b.join();

        assertThat(ports).hasSize(2 * CLAIMS).doesNotHaveDuplicates();
        assertThat(TestPorts.held()).containsAll(ports);
    }

    @Test
    void claim_whileAnotherJvmHoldsPorts_returnsNoneOfThem() throws Exception {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        Process child = new ProcessBuilder(java, "-cp", System.getProperty("java.class.path"),
                "-Dholdfast.test.port-locks=" + TestPorts.LOCKS, PortHoldingChild.class.getName(), Integer.toString(CLAIMS))
                .redirectError(ProcessBuilder.Redirect.INHERIT).start();
        try {
            Set<Integer> childPorts = new HashSet<>();
            BufferedReader out = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.US_ASCII));
            for (String line = out.readLine(); !"held".equals(line); line = out.readLine()) {
                assertThat(line).as("the child's output ended before it said it holds its ports").isNotNull();
                childPorts.add(Integer.parseInt(line));
            }
            List<Integer> mine = new ArrayList<>();
            for (int i = 0; i < CLAIMS; i++) {
                mine.add(TestPorts.claim());
            }

            assertThat(childPorts).hasSize(CLAIMS);
            assertThat(mine).doesNotContainAnyElementsOf(childPorts);
            int theirs = childPorts.iterator().next();
            try (FileChannel lock = FileChannel.open(TestPorts.LOCKS.resolve(theirs + ".lock"), StandardOpenOption.WRITE)) {
                assertThat(lock.tryLock()).as("the child's lock on port %d", theirs).isNull();
            }
        } finally {
            child.getOutputStream().close();
            assertThat(child.waitFor(30, TimeUnit.SECONDS)).as("the child exits when its stdin closes").isTrue();
        }
    }

    @Test
    void claim_withAddresses_returnsAPortFreeOnEachOfThem() throws Exception {
        int port = TestPorts.claim("127.0.0.2", "127.0.0.3");

        int[] range = TestPorts.rangeOutside(String.join(" ", java.nio.file.Files.readAllLines(Path.of("/proc/sys/net/ipv4/ip_local_port_range"))));
        assertThat(port).isBetween(range[0], range[1] - 1);
        for (String host : List.of("127.0.0.2", "127.0.0.3")) {
            try (ServerSocket s = new ServerSocket()) {
                s.bind(new InetSocketAddress(InetAddress.getByName(host), port));
                assertThat(s.getLocalPort()).isEqualTo(port);
            }
        }
    }

    @Test
    void claim_unknownHost_saysWhichAddress() {
        assertThatThrownBy(() -> TestPorts.claim("not an address"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("not an address");
    }

    @Test
    void rangeOutside_procText_isBelowTheEphemeralRange() {
        assertThat(TestPorts.rangeOutside("32768\t60999\n")).containsExactly(20_000, 32_768);
    }

    @Test
    void rangeOutside_lowEphemeralStart_isAboveItsEnd() {
        assertThat(TestPorts.rangeOutside("1024 60999")).containsExactly(61_000, 65_536);
    }

    @Test
    void rangeOutside_truncatedText_saysWhatItRead() {
        assertThatThrownBy(() -> TestPorts.rangeOutside("3"))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("'3'").hasMessageContaining("two numbers");
    }

    @Test
    void rangeOutside_wholePortSpace_saysWhatToChange() {
        assertThatThrownBy(() -> TestPorts.rangeOutside("1024 65535"))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("ip_local_port_range");
    }
}
