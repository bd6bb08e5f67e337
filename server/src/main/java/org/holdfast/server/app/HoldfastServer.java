package org.holdfast.server.app;

import org.holdfast.common.kill.KillPoints;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.context.properties.EnableConfigurationProperties;

/** The Holdfast server: {@code java -jar holdfast-server.jar} starts a working appliance on ./holdfast-data. */
@SpringBootApplication(scanBasePackages = {"org.holdfast.server.app", "org.holdfast.server.api"})
@EnableConfigurationProperties(HoldfastProperties.class)
public class HoldfastServer {

    public static void main(String[] args) {
        // loads the kill-point registry now: a mistyped -Dholdfast.kill-point fails the start, not a later hit
        KillPoints.armedPoint().ifPresent(p -> System.err.println("holdfast: TEST MODE: kill point " + p.name()
                + " is armed; this process halts when it reaches it"));
        SpringApplication.run(HoldfastServer.class, args);
    }
}
