package org.holdfast.server.api;

import jakarta.servlet.http.HttpServletRequest;
import org.holdfast.server.security.AccessPrincipal;
import org.springframework.security.core.Authentication;
import org.springframework.security.core.context.SecurityContextHolder;

/** Who is calling and from where, for controllers and audit entries. */
public final class Caller {
    private Caller() {
    }

    /** The authenticated principal of the current request, or null for an anonymous one (login, health). */
    public static AccessPrincipal principal() {
        Authentication a = SecurityContextHolder.getContext().getAuthentication();
        return a instanceof PrincipalAuthentication p ? p.getPrincipal() : null;
    }

    /** The principal, or an exception if the request is anonymous (a URL rule let it through by mistake). */
    public static AccessPrincipal require() {
        AccessPrincipal p = principal();
        if (p == null) {
            throw new IllegalStateException("no authenticated principal for this request");
        }
        return p;
    }

    /** The peer's address without its port: what per-address limits count (each connection has a new port). */
    public static String address(HttpServletRequest request) {
        return request.getRemoteAddr();
    }

    /** {@code address:port} of the peer, as audit entries name it. */
    public static String source(HttpServletRequest request) {
        return request.getRemoteAddr() + ":" + request.getRemotePort();
    }

    /** The bearer credential of the request, or null. */
    static String bearer(HttpServletRequest request) {
        String h = request.getHeader("Authorization");
        if (h == null || !h.regionMatches(true, 0, "Bearer ", 0, 7)) {
            return null;
        }
        return h.substring(7).trim();
    }
}
