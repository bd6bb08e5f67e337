package org.holdfast.server.ingest;

import java.lang.System.Logger.Level;
import java.time.Clock;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import org.holdfast.common.id.VolumeId;
import org.holdfast.common.protocol.ErrorCode;
import org.holdfast.common.protocol.ProtocolException;
import org.holdfast.server.security.AccessPrincipal;
import org.holdfast.server.security.AuditEvent;
import org.holdfast.server.security.AuditLog;
import org.holdfast.server.security.AuthenticationFailedException;
import org.holdfast.server.security.TokenAuthenticator;

/**
 * Who is on one agent connection and what it may do: HELLO's token checked by the authenticator,
 * then checked again with the principal's role ({@link IngestAction}) and volume scope before every
 * request, so a token revoked or expired after HELLO starts nothing more. Every refusal is counted
 * and audited, and reads the same whether or not the volume exists (the scope is checked before the
 * catalog). Lane only.
 */
final class AgentAccess {
    private static final System.Logger LOG = System.getLogger(AgentAccess.class.getName());

    private final TokenAuthenticator authenticator;
    private final AuditLog auditLog;
    private final Clock clock;
    private final AtomicLong refused;
    private final Supplier<String> remoteAddress;
    private AccessPrincipal principal;
    // HELLO's token, checked again before every request
    private String token;

    AgentAccess(TokenAuthenticator authenticator, AuditLog auditLog, Clock clock, AtomicLong refused, Supplier<String> remoteAddress) {
        this.authenticator = authenticator;
        this.auditLog = auditLog;
        this.clock = clock;
        this.refused = refused;
        this.remoteAddress = remoteAddress;
    }

    /** The principal as last authenticated; null before HELLO's token was accepted. */
    AccessPrincipal principal() {
        return principal;
    }

    /**
     * The principal of HELLO's {@code token}, or UNAUTHORIZED (audited). The reason never repeats the
     * token. The authenticator is asked on every connection, so a revoked token fails from the
     * next connection on.
     */
    AccessPrincipal authenticate(String helloToken) {
        String reason;
        try {
            if (helloToken.isEmpty()) {
                throw new AuthenticationFailedException(AuthenticationFailedException.Reason.MISSING,
                        "no API token: the agent sent none, and this server needs one; an admin creates agent tokens"
                                + " (operations.md, \"Making tokens\")");
            }
            principal = authenticator.authenticate(helloToken);
            token = helloToken;
            return principal;
        } catch (AuthenticationFailedException e) {
            reason = e.getMessage();
        }
        refused.incrementAndGet();
        audit("anonymous", "ingest.connect", "", "denied", reason);
        throw new ProtocolException(ErrorCode.UNAUTHORIZED, "token refused: " + reason);
    }

    /**
     * Refuses (UNAUTHORIZED, audited) unless HELLO's token is still valid (not revoked or expired
     * since) and the principal's role and scope allow {@code action} on {@code volume}.
     */
    void authorize(IngestAction action, VolumeId volume) {
        String why = null;
        try {
            principal = authenticator.authenticate(token);
            if (!action.allows(principal.role())) {
                why = "role " + principal.role().wireName() + " may not " + action.verb + " volumes over the ingest port";
            } else if (!principal.mayReach(volume.name())) {
                // Same answer whether or not the volume exists: the scope is checked before the catalog.
                why = "this token may not " + action.verb + " volume '" + volume + "': it is outside the token's volume scope";
            }
        } catch (AuthenticationFailedException e) {
            why = "token refused: " + e.getMessage();
        }
        if (why != null) {
            refused.incrementAndGet();
            audit(action.auditAction, "volume:" + volume, "denied", why);
            throw new ProtocolException(ErrorCode.UNAUTHORIZED, why);
        }
    }

    /** Audits {@code action} by this connection's principal ("anonymous" before HELLO); a failure to write is logged, never thrown. */
    void audit(String action, String target, String result, String detail) {
        audit(principal == null ? "anonymous" : principal.name(), action, target, result, detail);
    }

    private void audit(String who, String action, String target, String result, String detail) {
        try {
            auditLog.record(new AuditEvent(clock.millis(), who, remoteAddress.get(), action, target, result, detail));
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "could not write an audit entry for " + action + " " + target + ": " + e.getMessage());
        }
    }
}
