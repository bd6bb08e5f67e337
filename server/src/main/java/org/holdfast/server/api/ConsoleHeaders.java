package org.holdfast.server.api;

import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import org.springframework.web.filter.OncePerRequestFilter;
import org.springframework.web.util.UrlPathHelper;

/**
 * Response headers for the console's files. Its page runs scripts from this server only (a
 * Content-Security-Policy without inline scripts or eval: an injected {@code <script>} does not
 * run), is never framed, and is never cached, so a new server version's page is loaded at once;
 * the scripts and styles it names carry a hash of their content in the file name (Vite), so they
 * may be cached for a year. Spring Security adds {@code X-Content-Type-Options: nosniff} and
 * {@code X-Frame-Options: DENY} to every answer.
 */
public final class ConsoleHeaders extends OncePerRequestFilter {
    /**
     * Inline styles stay allowed: Vue and uPlot set element styles, which cannot run code;
     * {@code connect-src 'self'}: the console talks to this server's API only.
     */
    public static final String POLICY = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
            + "img-src 'self' data:; font-src 'self'; connect-src 'self'; object-src 'none'; base-uri 'none'; "
            + "form-action 'self'; frame-ancestors 'none'";
    /** The folder Vite writes the hashed assets to (webui/vite.config.js, {@code assetsDir}). */
    static final String ASSETS = "/console/";

    @Override
    protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
            throws ServletException, IOException {
        // decoded, as the resource handler resolves it: /%69ndex.html is the console page too
        String path = UrlPathHelper.defaultInstance.getPathWithinApplication(request);
        if (path.equals("/") || path.equals("/index.html")) {
            response.setHeader("Content-Security-Policy", POLICY);
            response.setHeader("Referrer-Policy", "no-referrer");
            response.setHeader("Cache-Control", "no-store");
        } else if (path.startsWith(ASSETS)) {
            response.setHeader("Cache-Control", "public, max-age=31536000, immutable");
        }
        chain.doFilter(request, response);
    }
}
