package org.holdfast.server.app;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.context.properties.EnableConfigurationProperties;

/** The Holdfast server: {@code java -jar holdfast-server.jar} starts a working appliance on ./holdfast-data. */
@SpringBootApplication(scanBasePackages = {"org.holdfast.server.app", "org.holdfast.server.api"})
@EnableConfigurationProperties(HoldfastProperties.class)
public class HoldfastServer {

    public static void main(String[] args) {
        SpringApplication.run(HoldfastServer.class, args);
    }
}
