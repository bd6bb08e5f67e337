/**
 * Block fingerprints: SHA-256 of each block written into packed arrays
 * ({@link org.holdfast.common.hash.BlockHasher}), and the zero-block test that replaces hashing for
 * all-zero blocks ({@link org.holdfast.common.hash.ZeroBlocks}).
 */
package org.holdfast.common.hash;
