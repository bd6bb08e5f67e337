/**
 * The REST surface (/api/v1): read-only views of volumes and snapshots for now. Errors are RFC 9457
 * problem details with stable type URIs ({@link org.holdfast.server.api.ProblemTypes}), mapped in
 * one place ({@link org.holdfast.server.api.ProblemAdvice}); domain exceptions never carry HTTP codes.
 */
package org.holdfast.server.api;
