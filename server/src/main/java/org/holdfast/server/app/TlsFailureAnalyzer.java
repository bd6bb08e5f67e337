package org.holdfast.server.app;

import org.holdfast.server.security.tls.TlsSetupException;
import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/** Turns an unusable certificate or key at startup into a short report naming the file and the fix. */
public class TlsFailureAnalyzer extends AbstractFailureAnalyzer<TlsSetupException> {

    @Override
    protected FailureAnalysis analyze(Throwable rootFailure, TlsSetupException cause) {
        return new FailureAnalysis("Holdfast cannot set up TLS: " + cause.getMessage(),
                "Fix the certificate settings (holdfast.tls.certificate and holdfast.tls.private-key, or holdfast.tls.keystore"
                        + " and holdfast.tls.keystore-password), or remove them to use the self-signed certificate in"
                        + " <data-dir>/tls. holdfast.tls.enabled=false turns TLS off on both ports (labs only).", cause);
    }
}
