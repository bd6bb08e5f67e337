package org.holdfast.server.ingest.cluster;

import java.io.DataInputStream;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.holdfast.common.protocol.ErrorCode;
import org.holdfast.common.protocol.ErrorMessage;
import org.holdfast.common.protocol.Registered;
import org.holdfast.server.cluster.LoadProbe;
import org.holdfast.server.ingest.cluster.WorkerClusterVersionFallbackTest.Frame;

/** A master of an older or this release played by a socket, for the version tests of the sealed-log reports: its REGISTER step. */
final class PlayedMaster {
    private PlayedMaster() {
    }

    /**
     * Reads the worker's REGISTER on {@code s} and adds its version to {@code offered}; a version above
     * {@code newest} is refused UNSUPPORTED_VERSION (false), else the worker is registered as worker 3
     * over [2^40, 2^40 + 2^30), heartbeats every 100 ms (true).
     */
    static boolean registers(Socket s, DataInputStream in, int newest, List<Integer> offered) throws Exception {
        Frame register = WorkerClusterVersionFallbackTest.read(in);
        int version = ((register.body()[0] & 0xff) << 8) | (register.body()[1] & 0xff);
        offered.add(version);
        if (version > newest) {
            WorkerClusterVersionFallbackTest.send(s.getOutputStream(), ErrorMessage.of(ErrorCode.UNSUPPORTED_VERSION,
                    "this master speaks cluster protocol versions 1 to " + newest + ", the worker w1 version " + version));
            return false;
        }
        WorkerClusterVersionFallbackTest.send(s.getOutputStream(), new Registered(3, 1, 1L << 40, (1L << 40) + (1L << 30), 100,
                "v" + newest, 1L << 40, 60_000));
        return true;
    }

    /** Worker node "w1" serving {@code data}, registering with the master on {@code master} (not started). */
    static WorkerConnector worker(ServerSocket master, Path tmp, WorkerRangeData data) throws Exception {
        Path token = Files.writeString(tmp.resolve("token"), "hft_test");
        return new WorkerConnector(new WorkerConnector.Settings("127.0.0.1", master.getLocalPort(), null, "w1", token, null, "auto",
                "test", Duration.ofSeconds(5), Duration.ofMillis(50), Duration.ofMillis(200)), new LoadProbe(tmp), null, data);
    }
}
