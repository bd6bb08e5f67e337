package org.holdfast.server.ingest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.holdfast.common.id.VolumeId;
import org.holdfast.common.protocol.ErrorCode;
import org.holdfast.common.protocol.ProtocolException;
import org.holdfast.server.security.AccessPrincipal;
import org.holdfast.server.security.AuditEvent;
import org.holdfast.server.security.Role;
import org.holdfast.server.security.VolumeScope;
import org.junit.jupiter.api.Test;

/**
 * The access rules of one agent connection without a socket: a token refused at HELLO, a request
 * outside the token's scope or role, and a token revoked after HELLO are each refused with
 * UNAUTHORIZED, counted and audited, and the refusal never repeats the secret.
 */
class AgentAccessTest {
    private static final String SCOPED = "scoped-agent-token-0123456789";
    private static final String VIEWER = "viewer-token-0123456789";

    private final TestTokens tokens = new TestTokens()
            .add(SCOPED, new AccessPrincipal("token:2(web)", Role.AGENT, new VolumeScope(List.of("web-*")), null))
            .add(VIEWER, new AccessPrincipal("token:3(view)", Role.VIEWER, VolumeScope.ALL, null));
    private final RecordingAuditLog audit = new RecordingAuditLog();
    private final AtomicLong refused = new AtomicLong();
    private final AgentAccess access = new AgentAccess(tokens, audit,
            Clock.fixed(Instant.ofEpochMilli(1_000), ZoneOffset.UTC), refused, () -> "10.0.0.9:5000");

    @Test
    void authenticate_unknownToken_refusedAuditedAndNoPrincipal() {
        assertThatThrownBy(() -> access.authenticate("not-a-token-secret"))
                .isInstanceOfSatisfying(ProtocolException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.UNAUTHORIZED))
                .hasMessageContaining("unknown token").hasMessageNotContaining("not-a-token-secret");
        assertThat(access.principal()).isNull();
        assertThat(refused).hasValue(1);
        assertThat(audit.events()).singleElement().satisfies(e -> {
            assertThat(e.principal()).isEqualTo("anonymous");
            assertThat(e.action()).isEqualTo("ingest.connect");
            assertThat(e.result()).isEqualTo("denied");
            assertThat(e.source()).isEqualTo("10.0.0.9:5000");
        });
    }

    @Test
    void authorize_volumeOutsideScope_refusedAndAudited() {
        access.authenticate(SCOPED);
        access.authorize(IngestAction.BACKUP, new VolumeId("web-1"));
        assertThatThrownBy(() -> access.authorize(IngestAction.RESTORE, new VolumeId("db-1")))
                .isInstanceOfSatisfying(ProtocolException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.UNAUTHORIZED))
                .hasMessageContaining("outside the token's volume scope");
        assertThat(refused).hasValue(1);
        AuditEvent denied = audit.events().get(audit.events().size() - 1);
        assertThat(denied.action()).isEqualTo("snapshot.restore");
        assertThat(denied.target()).isEqualTo("volume:db-1");
        assertThat(denied.principal()).isEqualTo("token:2(web)");
    }

    @Test
    void authorize_roleWithoutTheAction_refused() {
        access.authenticate(VIEWER);
        access.authorize(IngestAction.LIST, new VolumeId("db-1"));
        assertThatThrownBy(() -> access.authorize(IngestAction.BACKUP, new VolumeId("db-1")))
                .isInstanceOf(ProtocolException.class).hasMessageContaining("may not back up volumes");
        assertThat(refused).hasValue(1);
    }

    @Test
    void authorize_tokenRevokedAfterHello_refused() {
        access.authenticate(SCOPED);
        tokens.revoke(SCOPED);
        assertThatThrownBy(() -> access.authorize(IngestAction.BACKUP, new VolumeId("web-1")))
                .isInstanceOfSatisfying(ProtocolException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.UNAUTHORIZED))
                .hasMessageContaining("revoked").hasMessageNotContaining(SCOPED);
        assertThat(audit.events()).extracting(AuditEvent::result).containsExactly("denied");
    }
}
