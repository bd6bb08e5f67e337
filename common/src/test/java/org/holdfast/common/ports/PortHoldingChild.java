package org.holdfast.common.ports;

import java.io.IOException;

/**
 * A second JVM for {@link TestPortsTest}: claims the number of ports its argument says, prints each on
 * a line, then "held", and keeps them until its stdin closes.
 */
public final class PortHoldingChild {
    private PortHoldingChild() {
    }

    public static void main(String[] args) throws IOException {
        int count = Integer.parseInt(args[0]);
        for (int i = 0; i < count; i++) {
            System.out.println(TestPorts.claim());
        }
        System.out.println("held");
        System.out.flush();
        while (System.in.read() >= 0) {
            // held until the parent closes our stdin
        }
    }
}
