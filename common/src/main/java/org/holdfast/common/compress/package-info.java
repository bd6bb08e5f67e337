/** Block payload compression on the wire and on disk: zstd with a hard output bound ({@link org.holdfast.common.compress.BlockCodec}). */
package org.holdfast.common.compress;
