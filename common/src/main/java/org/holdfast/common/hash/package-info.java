/**
 * Block fingerprints: SHA-256 of each block written into packed arrays
 * ({@link org.holdfast.common.hash.BlockHasher}), and the zero-block test that replaces hashing for
 * all-zero blocks ({@link org.holdfast.common.hash.ZeroBlocks}), and the possession fingerprint and
 * per-session tag that prove an agent holds a block's content ({@link org.holdfast.common.hash.PossessionProof}).
 */
package org.holdfast.common.hash;
