/**
 * Verification: reading every block that snapshots reference and checking it against its checksum
 * and fingerprint, like a scrub. A {@link org.holdfast.server.verify.Verifier} runs one pass over a
 * {@link org.holdfast.server.verify.VerifyScope} (everything, one volume or one snapshot);
 * {@link org.holdfast.server.verify.VerifyJobs} runs passes as jobs; {@link
 * org.holdfast.server.verify.DamageReport} answers which volumes and snapshots reference bad blocks.
 * Blocks found damaged go to the store's bad-block registry, where the next upload of the same
 * content repairs them.
 */
package org.holdfast.server.verify;
