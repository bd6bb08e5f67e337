package org.holdfast.server.api;

import jakarta.servlet.http.HttpServletRequest;
import java.security.Principal;

/** The caller of a request, as the authentication layer (Spring Security) left it on the servlet request. */
final class Principals {
    /** Name used for callers without a principal. */
    static final String ANONYMOUS = "anonymous";

    private Principals() {
    }

    /** The principal's name, or {@code anonymous}. */
    static String name(HttpServletRequest request) {
        Principal p = request.getUserPrincipal();
        return p == null || p.getName() == null ? ANONYMOUS : p.getName();
    }

    /** Throws unless the caller has role ADMIN ({@code ROLE_ADMIN} as Spring Security names it). */
    static void requireAdmin(HttpServletRequest request, String what) {
        if (!request.isUserInRole("ADMIN")) {
            throw new AdminRequiredException(what, name(request));
        }
    }
}
