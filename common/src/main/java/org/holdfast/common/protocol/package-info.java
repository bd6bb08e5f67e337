/**
 * Protocol v2 between agent and server (docs/protocol.md): one record per frame type under the
 * sealed {@link org.holdfast.common.protocol.Message}, the limits every length is checked against
 * ({@link org.holdfast.common.protocol.ProtocolLimits}), and the Netty codecs
 * ({@link org.holdfast.common.protocol.FrameDecoder}, {@link org.holdfast.common.protocol.FrameEncoder}).
 * A violation is a {@link org.holdfast.common.protocol.ProtocolException} carrying the
 * {@link org.holdfast.common.protocol.ErrorCode} to answer with before closing; every port closes
 * through {@link org.holdfast.common.protocol.ErrorLinger}, which drains the peer's input for a
 * bounded time so that the ERROR is not lost to a reset.
 */
package org.holdfast.common.protocol;
