package org.holdfast.client.net;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.holdfast.client.AgentException;
import org.junit.jupiter.api.Test;

class ServerAddressTest {
    @Test
    void parse_hostAndPort_split() {
        assertThat(ServerAddress.parse("backup.example:7171")).isEqualTo(new ServerAddress("backup.example", 7171));
    }

    @Test
    void parse_hostOnly_defaultPort() {
        assertThat(ServerAddress.parse("localhost").port()).isEqualTo(7070);
    }

    @Test
    void parse_bracketedIpv6_hostAndPort() {
        ServerAddress a = ServerAddress.parse("[::1]:9000");
        assertThat(a.host()).isEqualTo("::1");
        assertThat(a.port()).isEqualTo(9000);
        assertThat(a.key()).doesNotContain(":");
    }

    @Test
    void parse_badPort_usageError() {
        assertThatThrownBy(() -> ServerAddress.parse("h:99999")).isInstanceOf(AgentException.class);
        assertThatThrownBy(() -> ServerAddress.parse("h:x")).isInstanceOf(AgentException.class);
        assertThatThrownBy(() -> ServerAddress.parse(":7070")).isInstanceOf(AgentException.class);
    }
}
