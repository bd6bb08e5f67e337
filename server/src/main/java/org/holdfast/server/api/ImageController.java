package org.holdfast.server.api;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.swagger.v3.oas.annotations.Operation;
import io.swagger.v3.oas.annotations.Parameter;
import io.swagger.v3.oas.annotations.media.Schema;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.io.OutputStream;
import java.time.Clock;
import org.holdfast.common.id.VolumeId;
import org.holdfast.server.app.OnStandaloneOrMaster;
import org.holdfast.server.catalog.Catalog;
import org.holdfast.server.catalog.SnapshotRecord;
import org.holdfast.server.catalog.UnknownSnapshotException;
import org.holdfast.server.catalog.VolumeRecord;
import org.holdfast.server.restore.SnapshotImage;
import org.holdfast.server.security.AuditEvent;
import org.holdfast.server.security.AuditLog;
import org.holdfast.server.security.DownloadLinks;
import org.holdfast.server.security.InvalidDownloadLinkException;
import org.holdfast.server.security.PrincipalRoles;
import org.holdfast.server.security.Role;
import org.holdfast.server.stats.TransferRates;
import org.holdfast.server.store.CorruptDataException;
import org.holdfast.server.store.BlockHome;
import org.holdfast.server.store.RangeCopy;
import org.holdfast.server.store.RangeCopyBuildingException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.context.annotation.Conditional;
import org.springframework.http.HttpHeaders;
import org.springframework.http.MediaType;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RestController;

/**
 * {@code GET /api/v1/volumes/{name}/snapshots/{snapshot}/image}: a snapshot's raw image, with
 * single-range {@code Range} support (206, 416), every block verified before it is sent
 * ({@link SnapshotImage}), read where it lives ({@link BlockHome}: with the blocks on the workers, from
 * each range's owner; a block whose worker is down fails the download, 503 before the body started, with
 * Retry-After and the copy's progress while its first block waits for a lost worker's range copy). Operator, admin, or an agent token scoped to the volume; not viewer
 * (a viewer sees metadata, not data).
 *
 * <p>A block that fails its check once the response is under way cannot become an error status
 * any more: the handler logs it, counts it ({@code holdfast_image_verify_failures_total}) and sets
 * {@link #ABORT_CONNECTION}, and the server closes the connection without finishing the body, so
 * the client sees fewer bytes than Content-Length (or no final chunk), never a wrong byte. A
 * failure before anything was sent is an ordinary 500 corrupt-data problem.
 *
 * <p>A browser cannot put the bearer token on a plain link: {@code POST .../image/link} hands the
 * caller a short-lived link ({@link DownloadLinks}) to {@code GET .../image/download?link=...},
 * which needs no header and serves the same image while the link and its holder's rights last.
 */
@RestController
@Conditional(OnStandaloneOrMaster.class)
public class ImageController {
    /** Request attribute: the response must end by closing the connection, unfinished (read by a Tomcat valve in app). */
    public static final String ABORT_CONNECTION = "org.holdfast.server.api.abortConnection";

    private static final Logger LOG = LoggerFactory.getLogger(ImageController.class);
    /** How the {@code {snapshot}} path segment is documented on every route here. */
    private static final String SNAPSHOT_DOC = "the snapshot's sequence (7) or its id (vol@7)";
    private static final String SNAPSHOT_PATTERN = "^([^@/]+@)?[1-9][0-9]{0,17}$";

    private final Catalog catalog;
    private final BlockHome home;
    private final Counter verifyFailures;
    private final AuditLog audit;
    private final Clock clock;
    private final TransferRates rates;

    private final DownloadLinks links;
    private final PrincipalRoles roles;

    public ImageController(Catalog catalog, BlockHome home, MeterRegistry meters, ObjectProvider<AuditLog> audit, Clock holdfastClock,
                           ObjectProvider<TransferRates> rates, DownloadLinks links, PrincipalRoles roles) {
        this.catalog = catalog;
        this.links = links;
        this.roles = roles;
        this.rates = rates.getIfAvailable(() -> null);
        this.home = home;
        this.verifyFailures = Counter.builder("holdfast.image.verify.failures")
                .description("image downloads ended early because a block failed its check (run the checker)").register(meters);
        this.audit = audit.getIfAvailable(() -> AuditLog.NONE);
        this.clock = holdfastClock;
    }

    /** The raw image of snapshot {@code snapshot} (its sequence, or {@code volume@sequence}). */
    @Operation(summary = "Download a snapshot's raw image",
            description = "Streams the image as it was backed up (application/octet-stream), every block verified against its "
                    + "fingerprint before it is sent. One Range (bytes=first-last, first-, -suffix) answers 206; a range past the end "
                    + "416. A block that fails its check after the body started ends the response early (the connection closes "
                    + "before Content-Length bytes); wrong bytes are never sent. Operator or admin, or an agent token for its volumes.")
    @GetMapping(value = "/api/v1/volumes/{name}/snapshots/{snapshot}/image", produces = MediaType.APPLICATION_OCTET_STREAM_VALUE)
    public void image(@PathVariable String name,
                      @Parameter(description = SNAPSHOT_DOC, schema = @Schema(type = "string", pattern = SNAPSHOT_PATTERN)) @PathVariable String snapshot,
                      @Parameter(description = "one byte range, e.g. bytes=0-1048575, bytes=4096- or bytes=-512")
                      @RequestHeader(value = HttpHeaders.RANGE, required = false) String range,
                      @Parameter(description = "the ETag (or Last-Modified) of an earlier answer: the range applies only if it still matches")
                      @RequestHeader(value = HttpHeaders.IF_RANGE, required = false) String ifRange,
                      HttpServletRequest request, HttpServletResponse response) throws IOException {
        VolumeRecord volume = catalog.requireVolume(PathIds.volumeId(name));
        serve(volume, require(volume, snapshot), range, ifRange, request, response, Principals.name(request));
    }

    /** A download link's answer: where to fetch the image without a header, and until when. */
    public record DownloadLinkView(String href, String expiresAt, long lifetimeSeconds) {
    }

    /** A short-lived link to the snapshot's image for the caller (a browser's download). */
    @Operation(summary = "Get a short-lived download link to a snapshot's image",
            description = "For a browser, which cannot send the bearer header on a plain link: answers a relative href to "
                    + "GET .../image/download?link=... that works without a header, for this snapshot only, for the caller only "
                    + "(it stops working when the caller's rights end), until expiresAt (minutes; a server restart ends it "
                    + "sooner). Operator or admin.")
    @PostMapping("/api/v1/volumes/{name}/snapshots/{snapshot}/image/link")
    @Audited("snapshot.download-link")
    public DownloadLinkView link(@PathVariable String name,
                                 @Parameter(description = SNAPSHOT_DOC, schema = @Schema(type = "string", pattern = SNAPSHOT_PATTERN)) @PathVariable String snapshot,
                                 HttpServletRequest request) {
        VolumeRecord volume = catalog.requireVolume(PathIds.volumeId(name));
        long sequence = require(volume, snapshot).sequence();
        DownloadLinks.Link link = links.issue(Principals.name(request), volume.internalId(), sequence);
        String href = "/api/v1/volumes/" + name + "/snapshots/" + sequence + "/image/download?link=" + link.link();
        return new DownloadLinkView(href, java.time.Instant.ofEpochMilli(link.expiresMillis()).toString(), links.lifetime().toSeconds());
    }

    /** The image through a link from {@link #link}: no bearer header; 403 invalid-download-link for a bad or stale link. */
    @Operation(summary = "Download a snapshot's raw image through a download link",
            description = "The image as GET .../image sends it (ranges included), for a link from POST .../image/link, without "
                    + "an Authorization header. 403 (invalid-download-link) if the link is missing, altered, expired, for "
                    + "another snapshot, or its holder may no longer download images.")
    @GetMapping(value = "/api/v1/volumes/{name}/snapshots/{snapshot}/image/download", produces = MediaType.APPLICATION_OCTET_STREAM_VALUE)
    public void download(@PathVariable String name,
                         @Parameter(description = SNAPSHOT_DOC, schema = @Schema(type = "string", pattern = SNAPSHOT_PATTERN)) @PathVariable String snapshot,
                         @Parameter(description = "the link's text, as POST .../image/link answered it") @RequestParam(required = false) String link,
                         @RequestHeader(value = HttpHeaders.RANGE, required = false) String range,
                         @RequestHeader(value = HttpHeaders.IF_RANGE, required = false) String ifRange,
                         HttpServletRequest request, HttpServletResponse response) throws IOException {
        VolumeId v = PathIds.volumeId(name);
        long sequence = sequence(name, snapshot);
        // the link is checked before anything is looked up, so a caller without one learns no volume names
        VolumeRecord volume = catalog.volume(v).orElse(null);
        DownloadLinks.Grant grant;
        try {
            grant = links.check(link, volume == null ? -1 : volume.internalId(), sequence);
            if (!roles.current(grant.principal()).map(r -> r.includes(Role.OPERATOR)).orElse(false)) {
                throw new InvalidDownloadLinkException("the download link's holder (" + grant.principal()
                        + ") may no longer download images; log in again and ask for a new one");
            }
        } catch (InvalidDownloadLinkException e) {
            record(request, Principals.name(request), name + "@" + sequence, "denied", e.getMessage());
            throw e;
        }
        serve(volume, require(volume, snapshot), range, ifRange, request, response, grant.principal() + " (link)");
    }

    /** The snapshot the path segment names: 400 if it is no snapshot id, 404 if the volume has no such snapshot. */
    private SnapshotRecord require(VolumeRecord volume, String snapshot) {
        String name = volume.name().name();
        long sequence = sequence(name, snapshot);
        return catalog.snapshot(volume, sequence).orElseThrow(() -> new UnknownSnapshotException(name, sequence));
    }

    private void serve(VolumeRecord volume, SnapshotRecord s, String range, String ifRange, HttpServletRequest request,
                       HttpServletResponse response, String principal) throws IOException {
        String name = volume.name().name();
        long sequence = s.sequence();
        SnapshotImage image = new SnapshotImage(catalog, home, volume, s);
        long length = image.length();
        String etag = "\"" + volume.internalId() + "-" + sequence + "\"";

        response.setHeader(HttpHeaders.ACCEPT_RANGES, "bytes");
        response.setHeader(HttpHeaders.ETAG, etag);
        response.setDateHeader(HttpHeaders.LAST_MODIFIED, s.createdAtMillis());
        boolean rangeApplies = ifRange == null || ifRange.trim().equals(etag) || ifRange.trim().equals(response.getHeader(HttpHeaders.LAST_MODIFIED));
        ByteRange.Outcome outcome = ByteRange.resolve(rangeApplies ? range : null, length);
        if (outcome instanceof ByteRange.Unsatisfiable) {
            response.setHeader(HttpHeaders.CONTENT_RANGE, "bytes */" + length);
            throw new RangeNotSatisfiableException("the range '" + range + "' starts past the end of the image of " + length
                    + " bytes (snapshot " + name + "@" + sequence + "); ask for bytes 0-" + Math.max(0, length - 1));
        }
        long first = 0;
        long last = length - 1;
        if (outcome instanceof ByteRange.Partial p) {
            first = p.range().first();
            last = p.range().last();
            response.setStatus(HttpServletResponse.SC_PARTIAL_CONTENT);
            response.setHeader(HttpHeaders.CONTENT_RANGE, "bytes " + first + "-" + last + "/" + length);
        }
        response.setContentType(MediaType.APPLICATION_OCTET_STREAM_VALUE);
        response.setContentLengthLong(last - first + 1);
        response.setHeader(HttpHeaders.CONTENT_DISPOSITION, "attachment; filename=\"" + name + "-" + sequence + ".img\"");
        if ("HEAD".equals(request.getMethod()) || length == 0) {
            return;
        }
        refuseWhileCopying(image, first, last, request, response, name + "@" + sequence, principal);
        send(image, first, last, request, response, name + "@" + sequence, principal);
    }

    /**
     * 503 (Retry-After, the copy's progress) instead of a response that sends nothing while its first
     * block waits for a lost worker's range copy: clients would time out on it. Only the first block is
     * asked; a later one the copy has not reached stalls the body under way, as before.
     */
    private void refuseWhileCopying(SnapshotImage image, long first, long last, HttpServletRequest request, HttpServletResponse response,
                                    String target, String principal) {
        long pbn = image.firstPbn(first, last);
        RangeCopy.Progress pending = pbn == 0 ? null : home.copyPending(pbn);
        if (pending != null) {
            RangeCopyBuildingException e = new RangeCopyBuildingException(pbn, pending);
            record(request, principal, target, "failed", e.getMessage());
            response.reset(); // nothing has gone out: the problem's headers only
            throw e;
        }
    }

    private void send(SnapshotImage image, long first, long last, HttpServletRequest request, HttpServletResponse response,
                      String target, String principal) throws IOException {
        String detail = first == 0 && last == image.length() - 1 ? "" : "bytes " + first + "-" + last;
        OutputStream out = rates == null ? response.getOutputStream()
                : new CountedStream(response.getOutputStream(), rates, target.substring(0, target.lastIndexOf('@')));
        try {
            image.write(first, last, out);
            out.flush();
        } catch (RuntimeException e) {
            boolean corrupt = e instanceof CorruptDataException;
            if (corrupt) {
                verifyFailures.increment();
            }
            LOG.error("image download of {} ({}) ended early: {}; {}", target, detail.isEmpty() ? "whole image" : detail,
                    e.getMessage(), corrupt ? "run the checker (holdfast-server fsck)" : "see the cause", e);
            record(request, principal, target, "failed", e.getMessage());
            if (!response.isCommitted()) {
                response.reset(); // nothing has gone out: an ordinary error response (ProblemAdvice)
                throw e;
            }
            request.setAttribute(ABORT_CONNECTION, e);
            return;
        }
        record(request, principal, target, "ok", detail);
    }

    private void record(HttpServletRequest request, String principal, String target, String result, String detail) {
        audit.record(new AuditEvent(clock.millis(), principal, request.getRemoteAddr() + ":" + request.getRemotePort(),
                "snapshot.download", "volume:" + target, result, detail));
    }

    /** 416; Content-Range is already on the response. */
    static final class RangeNotSatisfiableException extends RuntimeException {
        RangeNotSatisfiableException(String message) {
            super(message);
        }
    }


    /** {@code 7} or {@code vol@7} (the id the snapshot list shows). */
    private static long sequence(String volume, String id) {
        String s = id.startsWith(volume + "@") ? id.substring(volume.length() + 1) : id;
        long n;
        try {
            n = Long.parseLong(s);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("snapshot '" + id + "' is not a snapshot id: give its sequence (7) or its id ("
                    + volume + "@7) as GET /api/v1/volumes/" + volume + "/snapshots lists them");
        }
        if (n < 1) {
            throw new UnknownSnapshotException(volume, n);
        }
        return n;
    }

    /** Counts a download's bytes into the restore rate (in steps of about 1 MiB, not per write). */
    private static final class CountedStream extends java.io.FilterOutputStream {
        private static final int STEP = 1 << 20;
        private final TransferRates rates;
        private final String volume;
        private long pending;

        CountedStream(OutputStream out, TransferRates rates, String volume) {
            super(out);
            this.rates = rates;
            this.volume = volume;
        }

        @Override
        public void write(byte[] b, int off, int len) throws IOException {
            out.write(b, off, len);
            pending += len;
            if (pending >= STEP) {
                rates.record(TransferRates.Direction.RESTORE, volume, pending);
                pending = 0;
            }
        }

        @Override
        public void flush() throws IOException {
            if (pending > 0) {
                rates.record(TransferRates.Direction.RESTORE, volume, pending);
                pending = 0;
            }
            out.flush();
        }
    }
}
