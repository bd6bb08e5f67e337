package org.holdfast.server.security.tls;

import java.nio.file.Path;

/**
 * Where the server's certificate comes from: {@code certificate} + {@code privateKey} (PEM files),
 * or {@code keystore} (PKCS#12, with {@code keystorePassword}), or, with neither, a self-signed
 * certificate kept in {@code selfSignedDir}. {@code hostNames} go into a new self-signed
 * certificate's subject alternative names besides localhost and 127.0.0.1.
 */
public record TlsSettings(Path certificate, Path privateKey, Path keystore, String keystorePassword, Path selfSignedDir,
                          java.util.List<String> hostNames) {
    public TlsSettings {
        hostNames = hostNames == null ? java.util.List.of() : java.util.List.copyOf(hostNames);
        if (selfSignedDir == null) {
            throw new IllegalArgumentException("selfSignedDir is required");
        }
    }

    /** A self-signed certificate in {@code dir} (tests, and the default). */
    public static TlsSettings selfSigned(Path dir) {
        return new TlsSettings(null, null, null, null, dir, java.util.List.of());
    }

    /** {@code toString} without the keystore password. */
    @Override
    public String toString() {
        return "TlsSettings[certificate=" + certificate + ", privateKey=" + privateKey + ", keystore=" + keystore
                + ", keystorePassword=" + (keystorePassword == null ? "none" : "***") + ", selfSignedDir=" + selfSignedDir + "]";
    }
}
