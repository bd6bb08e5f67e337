package org.holdfast.server.api;

import java.time.Instant;
import java.util.List;
import org.holdfast.server.app.OnStandaloneOrMaster;
import org.holdfast.server.ingest.RunningBackups;
import org.holdfast.server.security.AccessPrincipal;
import org.holdfast.server.security.Role;
import org.springframework.context.annotation.Conditional;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * The backups in progress on the ingest port, with their progress (viewer and above; a scoped caller
 * sees only its volumes). Who sends a backup (token, agent name, address) is shown to operators and
 * admins only, as in {@code /api/v1/agents}: viewers see the figures, not who sends them.
 */
@RestController
@Conditional(OnStandaloneOrMaster.class)
public class BackupController {
    private final RunningBackups running;

    public BackupController(RunningBackups running) {
        this.running = running;
    }

    /**
     * One backup in progress. {@code positionBytes} of {@code volumeBytes}: how far the agent has
     * read the volume; {@code bytesReceived}: block payload uploaded (compressed); rates since
     * {@code startedAt}; {@code etaSeconds} from the position's rate (null until it moves).
     */
    public record BackupView(long sessionId, String volume, String principal, String agent, String remoteAddress, int blockSize,
                             long volumeBytes, long parentSequence, String startedAt, long entriesReceived, long blocksReceived,
                             long bytesReceived, long positionBytes, double bytesPerSecond, Long etaSeconds) {
        static BackupView of(RunningBackups.Backup b, boolean showSender) {
            Long eta = b.positionBytesPerSecond() > 0
                    ? (long) Math.ceil(Math.max(0, b.volumeBytes() - b.positionBytes()) / b.positionBytesPerSecond()) : null;
            return new BackupView(b.sessionId(), b.volume(), showSender ? b.principal() : null, showSender ? b.agent() : null,
                    showSender ? b.remoteAddress() : null, b.blockSize(),
                    b.volumeBytes(), b.parentSequence(), Instant.ofEpochMilli(b.startedAtMillis()).toString(), b.entriesReceived(),
                    b.blocksReceived(), b.bytesReceived(), b.positionBytes(), b.bytesPerSecond(), eta);
        }
    }

    /** The backups running now, oldest first. */
    @GetMapping("/api/v1/backups")
    public List<BackupView> list() {
        AccessPrincipal p = Caller.require();
        boolean showSender = p.role().includes(Role.OPERATOR);
        return running.list().stream().filter(b -> p.mayReach(b.volume())).map(b -> BackupView.of(b, showSender)).toList();
    }
}
