package org.holdfast.server.app;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.boot.context.properties.bind.BindException;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.core.env.StandardEnvironment;
import org.springframework.core.env.SystemEnvironmentPropertySource;

/** {@link ServiceLinkPorts}: a Service's {@code HOLDFAST_INGEST_PORT=tcp://...} no longer fails the start; a port set by the operator stays. */
class ServiceLinkPortsTest {

    private static StandardEnvironment env(Map<String, Object> variables) {
        StandardEnvironment env = new StandardEnvironment();
        env.getPropertySources().replace(StandardEnvironment.SYSTEM_ENVIRONMENT_PROPERTY_SOURCE_NAME,
                new SystemEnvironmentPropertySource(StandardEnvironment.SYSTEM_ENVIRONMENT_PROPERTY_SOURCE_NAME, variables));
        return env;
    }

    private static Map<String, Object> kubernetesServices() {
        Map<String, Object> v = new LinkedHashMap<>();
        v.put("HOLDFAST_INGEST_SERVICE_HOST", "10.96.0.12"); // a Service named holdfast-ingest
        v.put("HOLDFAST_INGEST_PORT", "tcp://10.96.0.12:7070");
        v.put("HOLDFAST_INGEST_PORT_7070_TCP", "tcp://10.96.0.12:7070");
        v.put("HOLDFAST_CLUSTER_PORT", "tcp://10.96.0.13:7071"); // holdfast-cluster
        v.put("HOLDFAST_DATA_DIR", "/var/lib/holdfast");
        return v;
    }

    @Test
    void serviceAddressesInPortVariables_areDropped_andTheRestKept() {
        StandardEnvironment env = env(kubernetesServices());
        // without the filter Spring cannot bind the port: this is the start failure the filter avoids
        assertThatThrownBy(() -> Binder.get(env).bind("holdfast.ingest.port", Integer.class)).isInstanceOf(BindException.class);

        assertThat(ServiceLinkPorts.drop(env)).containsOnlyKeys("HOLDFAST_INGEST_PORT", "HOLDFAST_CLUSTER_PORT")
                .containsEntry("HOLDFAST_INGEST_PORT", "tcp://10.96.0.12:7070");

        assertThat(Binder.get(env).bind("holdfast.ingest.port", Integer.class).isBound()).isFalse(); // the default applies
        assertThat(Binder.get(env).bind("holdfast.cluster.port", Integer.class).isBound()).isFalse();
        assertThat(env.getProperty("holdfast.data-dir")).isEqualTo("/var/lib/holdfast");
        assertThat(env.getProperty("HOLDFAST_INGEST_SERVICE_HOST")).isEqualTo("10.96.0.12");
        UnknownSettings.check(env); // and nothing left is refused
    }

    @Test
    void aPortTheOperatorSets_isKept_evenBesideAService() {
        Map<String, Object> v = kubernetesServices();
        v.put("HOLDFAST_INGEST_PORT", "17070"); // the pod spec's own value wins over the Service's
        StandardEnvironment env = env(v);

        assertThat(ServiceLinkPorts.drop(env)).containsOnlyKeys("HOLDFAST_CLUSTER_PORT");

        assertThat(Binder.get(env).bind("holdfast.ingest.port", Integer.class).get()).isEqualTo(17070);
    }

    @Test
    void aMistypedPortValue_isNotDropped_soItStillFailsTheStart() {
        StandardEnvironment env = env(new LinkedHashMap<>(Map.of("HOLDFAST_INGEST_PORT", "70x70")));

        assertThat(ServiceLinkPorts.drop(env)).isEmpty();

        assertThatThrownBy(() -> Binder.get(env).bind("holdfast.ingest.port", Integer.class)).isInstanceOf(BindException.class);
    }
}
