package org.holdfast.server.api;

import java.net.URI;
import java.time.Instant;
import java.util.List;
import java.util.stream.Collectors;
import org.holdfast.server.catalog.UnknownSnapshotException;
import org.holdfast.server.catalog.UnknownVolumeException;
import org.holdfast.server.catalog.VolumeExistsException;
import org.holdfast.server.security.AuthenticationFailedException;
import org.holdfast.server.security.CredentialConflictException;
import org.holdfast.server.security.LoginThrottledException;
import org.holdfast.server.security.UnknownCredentialException;
import org.holdfast.server.gc.GcConflictException;
import org.holdfast.server.gc.SnapshotLockedException;
import org.holdfast.server.gc.UnknownPolicyException;
import org.holdfast.server.jobs.JobFinishedException;
import org.holdfast.server.jobs.JobsClosedException;
import org.holdfast.server.jobs.UnknownJobException;
import org.holdfast.server.store.CorruptBlockException;
import org.holdfast.gc.GcCorruptException;
import org.holdfast.server.store.CatalogStoppedException;
import org.holdfast.server.store.CorruptDataException;
import org.holdfast.server.store.StorageFullException;
import org.holdfast.server.store.StoreException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.MediaType;
import org.springframework.http.converter.HttpMessageNotReadableException;
import org.springframework.web.context.request.WebRequest;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseEntity;
import org.springframework.web.ErrorResponse;
import org.springframework.web.HttpMediaTypeNotSupportedException;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.RestControllerAdvice;
import org.springframework.web.servlet.NoHandlerFoundException;
import org.springframework.web.servlet.mvc.method.annotation.ResponseEntityExceptionHandler;
import org.springframework.web.servlet.resource.NoResourceFoundException;

/** The one place where domain exceptions become RFC 9457 problem details (Spring MVC's own errors too, via the base class). */
@RestControllerAdvice
public class ProblemAdvice extends ResponseEntityExceptionHandler {
    private static final Logger LOG = LoggerFactory.getLogger(ProblemAdvice.class);

    /**
     * Spring MVC's own errors (unreadable JSON, a path or query value of the wrong type, an unknown
     * path, a method or media type the endpoint does not take) get the stable {@code type} of their
     * status ({@link ProblemTypes#forStatus}) instead of {@code about:blank}, and an unreadable body a
     * detail that says what to fix.
     */
    @Override
    protected ResponseEntity<Object> handleExceptionInternal(Exception ex, Object body, HttpHeaders headers,
                                                             HttpStatusCode status, WebRequest request) {
        // Spring passes no body for its ErrorResponse exceptions (404, 405, 406, 415...) and takes theirs later: type that one
        ProblemDetail problem = body instanceof ProblemDetail pd ? pd : body == null && ex instanceof ErrorResponse er ? er.getBody() : null;
        if (problem != null && (problem.getType() == null || "about:blank".equals(problem.getType().toString()))) {
            ProblemDetail p = problem;
            p.setType(ProblemTypes.forStatus(status.value()));
            if (ex instanceof NoResourceFoundException || ex instanceof NoHandlerFoundException) {
                p.setDetail("no endpoint at " + request.getDescription(false).replaceFirst("^uri=", "")
                        + "; GET /v3/api-docs (or docs/api.md) lists the API");
            }
            if (ex instanceof HttpMediaTypeNotSupportedException m) {
                // curl -d without -H sends a form type: say which header the call wants
                p.setDetail((m.getContentType() == null ? "no Content-Type" : "Content-Type '" + m.getContentType() + "'")
                        + " is not supported here; send the body with 'Content-Type: " + supported(m) + "'");
            }
            if (ex instanceof HttpMessageNotReadableException) {
                p.setDetail("the request body is not valid JSON for this call (a missing or malformed body, or a field of the"
                        + " wrong type); see docs/api.md for the fields it takes");
            }
        }
        return super.handleExceptionInternal(ex, body, headers, status, request);
    }

    private static String supported(HttpMediaTypeNotSupportedException m) {
        List<MediaType> types = m.getSupportedMediaTypes();
        return types.isEmpty() || types.contains(MediaType.APPLICATION_JSON) ? "application/json"
                : types.stream().map(MediaType::toString).collect(Collectors.joining("' or '"));
    }

    /** A chunked body that went past {@link RequestBodyLimit#MAX_BYTES} while Jackson read it: 413, not 400. */
    @Override
    protected ResponseEntity<Object> handleHttpMessageNotReadable(HttpMessageNotReadableException ex, HttpHeaders headers,
                                                                  HttpStatusCode status, WebRequest request) {
        for (Throwable t = ex; t != null; t = t.getCause()) {
            if (t instanceof RequestBodyLimit.BodyTooLargeException big) {
                ProblemDetail p = problem(HttpStatus.PAYLOAD_TOO_LARGE, ProblemTypes.PAYLOAD_TOO_LARGE, "Request body too large",
                        big.getMessage());
                return ResponseEntity.status(HttpStatus.PAYLOAD_TOO_LARGE).header(HttpHeaders.CONNECTION, "close").body(p);
            }
        }
        return super.handleHttpMessageNotReadable(ex, headers, status, request);
    }

    @ExceptionHandler(UnknownVolumeException.class)
    ProblemDetail unknownVolume(UnknownVolumeException e) {
        return problem(HttpStatus.NOT_FOUND, ProblemTypes.UNKNOWN_VOLUME, "Unknown volume", e.getMessage());
    }

    @ExceptionHandler(UnknownSnapshotException.class)
    ProblemDetail unknownSnapshot(UnknownSnapshotException e) {
        return problem(HttpStatus.NOT_FOUND, ProblemTypes.UNKNOWN_SNAPSHOT, "Unknown snapshot", e.getMessage());
    }

    @ExceptionHandler(IllegalArgumentException.class)
    ProblemDetail invalid(IllegalArgumentException e) {
        return problem(HttpStatus.BAD_REQUEST, ProblemTypes.INVALID_REQUEST, "Invalid request", e.getMessage());
    }

    @ExceptionHandler(AdminRequiredException.class)
    ProblemDetail forbidden(AdminRequiredException e) {
        return problem(HttpStatus.FORBIDDEN, ProblemTypes.FORBIDDEN, "Forbidden", e.getMessage());
    }

    @ExceptionHandler(AuthenticationFailedException.class)
    ResponseEntity<ProblemDetail> authenticationFailed(AuthenticationFailedException e) {
        return ResponseEntity.status(HttpStatus.UNAUTHORIZED).header("WWW-Authenticate", "Bearer realm=\"holdfast\"")
                .body(problem(HttpStatus.UNAUTHORIZED, ProblemTypes.UNAUTHENTICATED, "Authentication failed", e.getMessage()));
    }

    @ExceptionHandler(LoginThrottledException.class)
    ResponseEntity<ProblemDetail> throttled(LoginThrottledException e) {
        return ResponseEntity.status(HttpStatus.TOO_MANY_REQUESTS)
                .header("Retry-After", Long.toString(Math.max(1, (e.retryAfter().toMillis() + 999) / 1000)))
                .body(problem(HttpStatus.TOO_MANY_REQUESTS, ProblemTypes.TOO_MANY_LOGINS, "Too many failed logins", e.getMessage()));
    }

    @ExceptionHandler(org.holdfast.server.security.InvalidDownloadLinkException.class)
    ProblemDetail invalidDownloadLink(org.holdfast.server.security.InvalidDownloadLinkException e) {
        return problem(HttpStatus.FORBIDDEN, ProblemTypes.INVALID_DOWNLOAD_LINK, "Invalid download link", e.getMessage());
    }

    @ExceptionHandler(UnknownCredentialException.class)
    ProblemDetail unknownCredential(UnknownCredentialException e) {
        return problem(HttpStatus.NOT_FOUND, ProblemTypes.UNKNOWN_CREDENTIAL, "Unknown user or token", e.getMessage());
    }

    @ExceptionHandler(CredentialConflictException.class)
    ProblemDetail credentialConflict(CredentialConflictException e) {
        return problem(HttpStatus.CONFLICT, ProblemTypes.CREDENTIAL_CONFLICT, "Conflict", e.getMessage());
    }

    @ExceptionHandler(GcConflictException.class)
    ProblemDetail conflict(GcConflictException e) {
        ProblemDetail p = problem(HttpStatus.CONFLICT, ProblemTypes.CONFLICT, "Conflict", e.getMessage());
        if (e instanceof SnapshotLockedException l) {
            p.setProperty("lock", l.lock().describe());
            p.setProperty("lockMode", l.lock().mode().wireName());
            p.setProperty("lockUntil", l.lock().untilMillis() == null ? null : Instant.ofEpochMilli(l.lock().untilMillis()).toString());
        }
        return p;
    }

    @ExceptionHandler(CorruptDataException.class)
    ProblemDetail corrupt(CorruptDataException e) {
        LOG.error("corrupt data", e);
        if (e instanceof CorruptBlockException b) {
            // the block is marked bad already; name everything an operator needs to find it
            ProblemDetail p = problem(HttpStatus.INTERNAL_SERVER_ERROR, ProblemTypes.CORRUPT_DATA, "Corrupt data", e.getMessage());
            p.setProperty("file", b.file());
            p.setProperty("pbn", b.pbn());
            p.setProperty("offset", b.offset());
            p.setProperty("problem", b.problem());
            p.setProperty("volume", b.volume());
            p.setProperty("snapshot", b.volume() == null || b.sequence() == null ? null : b.volume() + "@" + b.sequence());
            p.setProperty("lbn", b.lbn());
            return p;
        }
        return problem(HttpStatus.INTERNAL_SERVER_ERROR, ProblemTypes.CORRUPT_DATA, "Corrupt data", e.getMessage() + "; run the checker");
    }

    @ExceptionHandler(StoreException.class)
    ProblemDetail store(StoreException e) {
        if (e instanceof CatalogStoppedException) {
            LOG.warn("catalog stopped: " + e.getMessage());
            return problem(HttpStatus.SERVICE_UNAVAILABLE, ProblemTypes.CATALOG_STOPPED, "Catalog stopped", e.getMessage());
        }
        if (e instanceof StorageFullException || StoreException.isNoSpace(e)) {
            return storageFull(e);
        }
        LOG.warn("store unavailable", e);
        return problem(HttpStatus.SERVICE_UNAVAILABLE, ProblemTypes.STORE_UNAVAILABLE, "Store unavailable", e.getMessage());
    }

    /** A block's worker is not connected (data on workers): 503, the message names the worker and what to do. */
    /** The progress as properties, and Retry-After: the time the copy says it needs, between 1 and 30 s (a block may come sooner). */
    @ExceptionHandler(org.holdfast.server.store.RangeCopyBuildingException.class)
    ResponseEntity<ProblemDetail> rangeCopyBuilding(org.holdfast.server.store.RangeCopyBuildingException e) {
        org.holdfast.server.store.RangeCopy.Progress p = e.progress();
        ProblemDetail problem = problem(HttpStatus.SERVICE_UNAVAILABLE, ProblemTypes.RANGE_COPY_BUILDING, "Range copy building",
                e.getMessage());
        problem.setProperty("worker", p.worker());
        problem.setProperty("logsDone", p.logsDone());
        problem.setProperty("logsTotal", p.logsTotal());
        problem.setProperty("bytesDone", p.bytesDone());
        problem.setProperty("secondsLeft", p.secondsLeft() < 0 ? null : p.secondsLeft());
        long retry = p.secondsLeft() < 0 ? 10 : Math.min(30, Math.max(1, p.secondsLeft()));
        return ResponseEntity.status(HttpStatus.SERVICE_UNAVAILABLE).header("Retry-After", Long.toString(retry)).body(problem);
    }

    @ExceptionHandler(org.holdfast.server.store.BlocksUnavailableException.class)
    ProblemDetail blocksUnavailable(org.holdfast.server.store.BlocksUnavailableException e) {
        LOG.warn("blocks unavailable: " + e.getMessage());
        return problem(HttpStatus.SERVICE_UNAVAILABLE, ProblemTypes.STORE_UNAVAILABLE, "Blocks unavailable", e.getMessage());
    }

    @ExceptionHandler(UnknownPolicyException.class)
    ProblemDetail unknownPolicy(UnknownPolicyException e) {
        return problem(HttpStatus.NOT_FOUND, ProblemTypes.UNKNOWN_POLICY, "Unknown retention policy", e.getMessage());
    }

    @ExceptionHandler(VolumeExistsException.class)
    ProblemDetail volumeExists(VolumeExistsException e) {
        return problem(HttpStatus.CONFLICT, ProblemTypes.VOLUME_EXISTS, "Volume exists", e.getMessage());
    }

    @ExceptionHandler(UnknownJobException.class)
    ProblemDetail unknownJob(UnknownJobException e) {
        return problem(HttpStatus.NOT_FOUND, ProblemTypes.UNKNOWN_JOB, "Unknown job", e.getMessage());
    }

    @ExceptionHandler(JobFinishedException.class)
    ProblemDetail jobFinished(JobFinishedException e) {
        ProblemDetail p = problem(HttpStatus.CONFLICT, ProblemTypes.JOB_FINISHED, "Job already ended", e.getMessage());
        p.setProperty("state", e.job().state().wireName());
        return p;
    }

    @ExceptionHandler(org.holdfast.server.cluster.NotAMasterException.class)
    ProblemDetail notAMaster(org.holdfast.server.cluster.NotAMasterException e) {
        return problem(HttpStatus.CONFLICT, ProblemTypes.NOT_A_MASTER, "Not a master", e.getMessage());
    }

    @ExceptionHandler(org.holdfast.server.cluster.UnknownWorkerException.class)
    ProblemDetail unknownWorker(org.holdfast.server.cluster.UnknownWorkerException e) {
        return problem(HttpStatus.NOT_FOUND, ProblemTypes.UNKNOWN_WORKER, "Unknown worker", e.getMessage());
    }

    @ExceptionHandler(org.holdfast.server.cluster.WorkerConnectedException.class)
    ProblemDetail workerConnected(org.holdfast.server.cluster.WorkerConnectedException e) {
        return problem(HttpStatus.CONFLICT, ProblemTypes.WORKER_CONNECTED, "Worker connected", e.getMessage());
    }

    @ExceptionHandler(org.holdfast.server.cluster.RebuildRefusedException.class)
    ProblemDetail rebuildRefused(org.holdfast.server.cluster.RebuildRefusedException e) {
        return problem(HttpStatus.CONFLICT, ProblemTypes.REBUILD_REFUSED, "Rebuild refused", e.getMessage());
    }

    @ExceptionHandler(org.holdfast.server.cluster.FenceResetRefusedException.class)
    ProblemDetail fenceResetRefused(org.holdfast.server.cluster.FenceResetRefusedException e) {
        return problem(HttpStatus.CONFLICT, ProblemTypes.FENCE_RESET_REFUSED, "Fence reset refused", e.getMessage());
    }

    /** Over REST a rebind reaches the registry's refusals (the token's node limit), and a replacement (the new node name). */
    @ExceptionHandler(org.holdfast.server.cluster.RegistrationRefusedException.class)
    ProblemDetail registrationRefused(org.holdfast.server.cluster.RegistrationRefusedException e) {
        return switch (e.reason()) {
            case INVALID_NODE_NAME -> problem(HttpStatus.BAD_REQUEST, ProblemTypes.INVALID_REQUEST, "Invalid request", e.getMessage());
            case NODE_CONFLICT -> problem(HttpStatus.CONFLICT, ProblemTypes.NODE_NAME_TAKEN, "Node name taken", e.getMessage());
            default -> problem(HttpStatus.CONFLICT, ProblemTypes.TOKEN_NODE_LIMIT, "Token node limit", e.getMessage());
        };
    }

    @ExceptionHandler(JobsClosedException.class)
    ProblemDetail jobsClosed(JobsClosedException e) {
        return problem(HttpStatus.SERVICE_UNAVAILABLE, ProblemTypes.SERVER_STOPPING, "Server stopping", e.getMessage());
    }

    /** 416 for an image Range past the end; the handler already set Content-Range: bytes *&#47;length. */
    @ExceptionHandler(ImageController.RangeNotSatisfiableException.class)
    ProblemDetail rangeNotSatisfiable(ImageController.RangeNotSatisfiableException e) {
        return problem(HttpStatus.REQUESTED_RANGE_NOT_SATISFIABLE, ProblemTypes.RANGE_NOT_SATISFIABLE, "Range not satisfiable",
                e.getMessage());
    }

    @ExceptionHandler(GcCorruptException.class)
    ProblemDetail corruptGcMetadata(GcCorruptException e) {
        LOG.error("corrupt GC metadata", e);
        // the message names the GC file and the chunk
        return problem(HttpStatus.INTERNAL_SERVER_ERROR, ProblemTypes.CORRUPT_DATA, "Corrupt GC metadata",
                e.getMessage() + "; stop the server and rebuild it from the catalog: holdfast-server gc-rebuild --data-dir <data-dir>");
    }

    @ExceptionHandler(org.holdfast.gc.GcStoreException.class)
    ProblemDetail gcStore(org.holdfast.gc.GcStoreException e) {
        if (StoreException.isNoSpace(e)) {
            return storageFull(e);
        }
        LOG.warn("GC store unavailable", e);
        return problem(HttpStatus.SERVICE_UNAVAILABLE, ProblemTypes.STORE_UNAVAILABLE, "Store unavailable", e.getMessage());
    }

    /** 507: an operation failed for lack of space; nothing it would have changed changed. */
    private static ProblemDetail storageFull(RuntimeException e) {
        LOG.warn("storage full: " + e.getMessage());
        String detail = e instanceof StorageFullException f ? f.advice() : "storage full: no space left on the data disk ("
                + e.getMessage() + "); delete snapshots or volumes, then run reclaim-now (POST /api/v1/gc/reclaim), or grow the disk";
        ProblemDetail p = problem(HttpStatus.INSUFFICIENT_STORAGE, ProblemTypes.STORAGE_FULL, "Storage full", detail);
        if (e instanceof StorageFullException f && f.freeBytes() >= 0) {
            p.setProperty("freeBytes", f.freeBytes());
            p.setProperty("reserveBytes", f.reserveBytes());
        }
        return p;
    }

    @ExceptionHandler(org.holdfast.server.catalog.CatalogBackupOffException.class)
    ProblemDetail catalogBackupOff(org.holdfast.server.catalog.CatalogBackupOffException e) {
        ProblemDetail p = problem(HttpStatus.CONFLICT, ProblemTypes.CATALOG_BACKUP_OFF, "Catalog backups off", e.getMessage());
        p.setProperty("setting", "holdfast.catalog.backup.directory");
        return p;
    }

    @ExceptionHandler(org.holdfast.server.store.UnknownCatalogBackupException.class)
    ProblemDetail unknownCatalogBackup(org.holdfast.server.store.UnknownCatalogBackupException e) {
        return problem(HttpStatus.NOT_FOUND, ProblemTypes.UNKNOWN_CATALOG_BACKUP, "Unknown catalog backup", e.getMessage());
    }

    private static ProblemDetail problem(HttpStatus status, URI type, String title, String detail) {
        ProblemDetail p = ProblemDetail.forStatusAndDetail(status, detail);
        p.setType(type);
        p.setTitle(title);
        return p;
    }
}
