package org.holdfast.server.api;

import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.util.Map;
import org.holdfast.server.catalog.UnknownVolumeException;
import org.holdfast.server.security.AccessPrincipal;
import org.springframework.web.servlet.HandlerInterceptor;
import org.springframework.web.servlet.HandlerMapping;

/**
 * Keeps a scoped principal (an agent token) to its volumes: a request naming a volume outside the
 * scope is answered exactly like one naming no volume (404 unknown volume), so that names do not
 * leak. Looks at the path variables {@code name} and {@code volume} of every route it is registered
 * for (/api/v1/volumes/**), as the handler mapping decoded them.
 */
public final class VolumeScopeInterceptor implements HandlerInterceptor {
    @Override
    public boolean preHandle(HttpServletRequest request, HttpServletResponse response, Object handler) {
        AccessPrincipal p = Caller.principal();
        // Never decided by the raw request URI: /api/v1/%76olumes/b is routed (and authorized) as
        // /api/v1/volumes/b, so a check of the raw text would wave it through.
        if (p == null || p.scope().isAll()) {
            return true;
        }
        @SuppressWarnings("unchecked")
        Map<String, String> vars = (Map<String, String>) request.getAttribute(HandlerMapping.URI_TEMPLATE_VARIABLES_ATTRIBUTE);
        if (vars != null) {
            for (String key : new String[] {"name", "volume"}) {
                String v = vars.get(key);
                if (v != null && !p.mayReach(v)) {
                    throw new UnknownVolumeException(v);
                }
            }
        }
        return true;
    }
}
