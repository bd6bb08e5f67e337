package org.holdfast.server.app;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Properties;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.config.YamlPropertiesFactoryBean;
import org.springframework.core.io.ClassPathResource;

/** The warnings a healthy start used to log, held off at their source (docs/operations.md "Troubleshooting"). */
class StartWarningsTest {

    @Test
    void commonsLoggingJar_isNotOnTheClassPath_soSpringJclDoesNotWarn() {
        // spring-jcl carries the org.apache.commons.logging API but not its impl package; the real jar does
        assertThatThrownBy(() -> Class.forName("org.apache.commons.logging.impl.LogFactoryImpl"))
                .isInstanceOf(ClassNotFoundException.class);
    }

    @Test
    void springDocEndpoints_areEnabledExplicitly_soSpringDocDoesNotWarn() {
        YamlPropertiesFactoryBean yaml = new YamlPropertiesFactoryBean();
        yaml.setResources(new ClassPathResource("application.yml"));
        Properties p = yaml.getObject();
        assertThat(p).containsEntry("springdoc.api-docs.enabled", true).containsEntry("springdoc.swagger-ui.enabled", true);
    }
}
