/**
 * The server's TLS identity, shared by the HTTP port and the agent port: the operator's
 * certificate and key (PEM files or a PKCS#12 keystore), or else a self-signed certificate made at
 * first start and kept in {@code <data-dir>/tls}; its SHA-256 fingerprint, which agents pin; and
 * the JDK {@link javax.net.ssl.SSLContext} both ports serve it with.
 *
 * <p>Spring-free. BouncyCastle is used here only, to build the self-signed certificate and to
 * read and write PEM keys (the JDK has no certificate builder and reads no PEM keys).
 */
package org.holdfast.server.security.tls;
