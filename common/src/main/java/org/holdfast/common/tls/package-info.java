/**
 * What server and agent must agree on about TLS: the SHA-256 fingerprint of the server's
 * certificate, as the server logs it and as the agent pins it ({@code --fingerprint}) and remembers
 * it in its known-servers file.
 */
package org.holdfast.common.tls;
