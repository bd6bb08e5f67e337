package org.holdfast.server.app;

import org.holdfast.server.store.object.ObjectStoreUnavailableException;
import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/**
 * Backend s3: turns an object store that cannot be used at start (unreachable, a missing bucket,
 * refused credentials, a store without create-only PUTs) into a short report naming what to fix,
 * instead of a bean-creation stack trace.
 */
public class ObjectStoreFailureAnalyzer extends AbstractFailureAnalyzer<ObjectStoreUnavailableException> {

    @Override
    protected FailureAnalysis analyze(Throwable rootFailure, ObjectStoreUnavailableException cause) {
        String action = switch (cause.reason()) {
            case UNREACHABLE -> "Check holdfast.store.s3.endpoint: the object store must be running and reachable from this host"
                    + " (address, port, firewall, DNS). The server does not start without it: its sealed data logs live there.";
            case NO_SUCH_BUCKET -> "Create the bucket in the object store (for example `aws s3 mb s3://<bucket> --endpoint-url"
                    + " <endpoint>`), or correct holdfast.store.s3.bucket; holdfast never creates buckets itself.";
            case ACCESS_DENIED -> "Check the credentials (holdfast.store.s3.credentials-file with access-key and secret-key, or"
                    + " AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY) and that they may read, write and delete in the bucket.";
            case FAILING -> "The object store answered errors (5xx, 503 Slow Down) to every attempt: check its health, then start"
                    + " the server again.";
            case REJECTED -> "Check the holdfast.store.s3.* settings against what the object store expects (see"
                    + " docs/operations.md, \"Object store (preview)\").";
        };
        return new FailureAnalysis("Holdfast cannot use its object store (holdfast.store.backend=s3): " + cause.getMessage(), action,
                cause);
    }
}
