package org.holdfast.server.app;

import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.context.properties.EnableConfigurationProperties;

/**
 * The Holdfast server: {@code java -jar holdfast-server.jar} starts a working appliance on
 * ./holdfast-data; a first argument naming an offline tool runs that instead ({@link ServerCli}).
 */
@SpringBootApplication(scanBasePackages = {"org.holdfast.server.app", "org.holdfast.server.api"})
@EnableConfigurationProperties(HoldfastProperties.class)
public class HoldfastServer {

    public static void main(String[] args) {
        ServerCli.main(args);
    }
}
