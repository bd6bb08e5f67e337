package org.holdfast.server.api;

import java.net.URI;

/** Stable {@code type} URIs of the problem details the API returns; clients may switch on them. */
public final class ProblemTypes {
    private ProblemTypes() {
    }

    public static final URI UNKNOWN_VOLUME = URI.create("urn:holdfast:problem:unknown-volume");
    public static final URI UNKNOWN_SNAPSHOT = URI.create("urn:holdfast:problem:unknown-snapshot");
    public static final URI INVALID_REQUEST = URI.create("urn:holdfast:problem:invalid-request");
    /** A refused GC request: backup in progress, hold or lock, newest snapshot. */
    public static final URI CONFLICT = URI.create("urn:holdfast:problem:conflict");
    public static final URI CORRUPT_DATA = URI.create("urn:holdfast:problem:corrupt-data");
    public static final URI STORE_UNAVAILABLE = URI.create("urn:holdfast:problem:store-unavailable");
    /** 401: no credentials, or a malformed, unknown, expired or revoked one, or a wrong password. */
    public static final URI UNAUTHENTICATED = URI.create("urn:holdfast:problem:unauthenticated");
    /** 403: authenticated, but the role may not do this. */
    public static final URI FORBIDDEN = URI.create("urn:holdfast:problem:forbidden");
    /** 429: too many failed logins; the Retry-After header says when to try again. */
    public static final URI TOO_MANY_LOGINS = URI.create("urn:holdfast:problem:too-many-logins");
    /** 404: no user of that name, or no token of that id. */
    public static final URI UNKNOWN_CREDENTIAL = URI.create("urn:holdfast:problem:unknown-credential");
    /** 409: the change would break a rule on users or tokens (duplicate name, last admin). */
    public static final URI CREDENTIAL_CONFLICT = URI.create("urn:holdfast:problem:credential-conflict");
    /** 404: no named retention policy of that name. */
    public static final URI UNKNOWN_POLICY = URI.create("urn:holdfast:problem:unknown-policy");
    /** 409: a volume of that name exists already (create). */
    public static final URI VOLUME_EXISTS = URI.create("urn:holdfast:problem:volume-exists");
    /** 404: no job of that id (never, or no longer in the bounded history). */
    public static final URI UNKNOWN_JOB = URI.create("urn:holdfast:problem:unknown-job");
    /** 409: the job has already ended (cancel). */
    public static final URI JOB_FINISHED = URI.create("urn:holdfast:problem:job-finished");
    /** 503: the server is stopping and accepts no new jobs. */
    public static final URI SERVER_STOPPING = URI.create("urn:holdfast:problem:server-stopping");
    /** 404: no endpoint at this path (a typo, or a method of a newer version). */
    public static final URI NOT_FOUND = URI.create("urn:holdfast:problem:not-found");
    /** 405: the path exists but not for this method; the Allow header lists the methods it takes. */
    public static final URI METHOD_NOT_ALLOWED = URI.create("urn:holdfast:problem:method-not-allowed");
    /** 406: none of the media types in Accept can be produced (JSON, or octet-stream for an image). */
    public static final URI NOT_ACCEPTABLE = URI.create("urn:holdfast:problem:not-acceptable");
    /** 413: the request body is over the limit (1 MiB for JSON bodies). */
    public static final URI PAYLOAD_TOO_LARGE = URI.create("urn:holdfast:problem:payload-too-large");
    /** 415: the body is not {@code application/json}. */
    public static final URI UNSUPPORTED_MEDIA_TYPE = URI.create("urn:holdfast:problem:unsupported-media-type");
    /** 416: the Range header asks for bytes past the end of the image; Content-Range gives its length. */
    public static final URI RANGE_NOT_SATISFIABLE = URI.create("urn:holdfast:problem:range-not-satisfiable");
    /** 409: only a master lists workers; this node is standalone or a worker (the detail says where the master is). */
    public static final URI NOT_A_MASTER = URI.create("urn:holdfast:problem:not-a-master");
    /** 409: a worker serves no volumes, snapshots, jobs, GC or statistics; the detail names its master. */
    public static final URI NOT_ON_A_WORKER = URI.create("urn:holdfast:problem:not-on-a-worker");
    /** 404: no worker with that id is registered with this master. */
    public static final URI UNKNOWN_WORKER = URI.create("urn:holdfast:problem:unknown-worker");
    /** 409: the worker is connected; stop it before removing or replacing it. */
    public static final URI WORKER_CONNECTED = URI.create("urn:holdfast:problem:worker-connected");
    /** 409: a replacement names a node that a worker holds already (another worker, or the one replaced). */
    public static final URI NODE_NAME_TAKEN = URI.create("urn:holdfast:problem:node-name-taken");
    /** 503: the image's first block lives on a lost worker whose range is still being copied from the bucket; retry after Retry-After. */
    public static final URI RANGE_COPY_BUILDING = URI.create("urn:holdfast:problem:range-copy-building");
    /** 409: a takeover fence reset whose confirmed epoch is not the fence's now (or the worker has none); nothing changed. */
    public static final URI FENCE_RESET_REFUSED = URI.create("urn:holdfast:problem:fence-reset-refused");
    /** 409: the worker token is bound to as many nodes as holdfast.cluster.max-nodes-per-token allows. */
    public static final URI TOKEN_NODE_LIMIT = URI.create("urn:holdfast:problem:token-node-limit");
    /** 500: a failure the server did not expect; the server log has the details. */
    public static final URI INTERNAL_ERROR = URI.create("urn:holdfast:problem:internal-error");

    /** The type of a problem that only has a status (Spring's and the servlet container's own errors). */
    public static URI forStatus(int status) {
        return switch (status) {
            case 400 -> INVALID_REQUEST;
            case 401 -> UNAUTHENTICATED;
            case 403 -> FORBIDDEN;
            case 404 -> NOT_FOUND;
            case 405 -> METHOD_NOT_ALLOWED;
            case 406 -> NOT_ACCEPTABLE;
            case 409 -> CONFLICT;
            case 413 -> PAYLOAD_TOO_LARGE;
            case 415 -> UNSUPPORTED_MEDIA_TYPE;
            case 416 -> RANGE_NOT_SATISFIABLE;
            default -> status >= 500 ? INTERNAL_ERROR : INVALID_REQUEST;
        };
    }
    /** 403: a snapshot download link that is missing, altered, expired, for another snapshot, or whose holder lost the right. */
    public static final URI INVALID_DOWNLOAD_LINK = URI.create("urn:holdfast:problem:invalid-download-link");
    /** 507: the data disk is full (its free-space reserve reached); free space, then retry. */
    public static final URI STORAGE_FULL = URI.create("urn:holdfast:problem:storage-full");
    /** 503: the catalog database stopped taking writes after a background error (a full disk); free space, then retry or restart. */
    public static final URI CATALOG_STOPPED = URI.create("urn:holdfast:problem:catalog-stopped");
    /** 409: catalog backups are off (no holdfast.catalog.backup.directory). */
    public static final URI CATALOG_BACKUP_OFF = URI.create("urn:holdfast:problem:catalog-backup-off");
    /** 409: a worker's index rebuild cannot start now (a worker not connected, a rebuild or GC job in progress); the detail says why. */
    public static final URI REBUILD_REFUSED = URI.create("urn:holdfast:problem:rebuild-refused");
    /** 404: no catalog backup with this id in the backup directory (GET /api/v1/catalog/backups lists them). */
    public static final URI UNKNOWN_CATALOG_BACKUP = URI.create("urn:holdfast:problem:unknown-catalog-backup");
}
