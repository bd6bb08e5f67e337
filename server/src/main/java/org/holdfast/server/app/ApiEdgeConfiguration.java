package org.holdfast.server.app;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.List;
import org.apache.catalina.core.StandardHost;
import org.holdfast.server.api.ConsoleHeaders;
import org.holdfast.server.api.FirewallProblems;
import org.holdfast.server.api.RequestBodyLimit;
import org.springframework.boot.web.embedded.tomcat.TomcatServletWebServerFactory;
import org.springframework.boot.web.server.WebServerFactoryCustomizer;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.MediaType;
import org.springframework.http.converter.HttpMessageConverter;
import org.springframework.security.config.annotation.web.configuration.WebSecurityCustomizer;
import org.springframework.web.servlet.config.annotation.WebMvcConfigurer;

/**
 * The HTTP edge outside the controllers, so that every error is a problem detail: the request
 * body cap (413), the firewall's refusals (400 instead of a 500), Tomcat's own refusals (a problem
 * detail instead of its HTML page), the console's security and caching headers, and the
 * connection abort an image download needs when a block fails its check after the body started.
 * The API speaks JSON only, whatever XML library a dependency brings onto the class path.
 */
@Configuration(proxyBeanMethods = false)
public class ApiEdgeConfiguration {
    /** Before Spring Security's chain (order -100): an oversized body is refused before anyone reads it. */
    static final int BODY_LIMIT_ORDER = -200;

    @Bean
    FilterRegistrationBean<RequestBodyLimit> requestBodyLimit(ObjectMapper json) {
        FilterRegistrationBean<RequestBodyLimit> r = new FilterRegistrationBean<>(new RequestBodyLimit(json));
        r.setOrder(BODY_LIMIT_ORDER);
        r.addUrlPatterns("/*");
        return r;
    }

    /** The console's security and caching headers (CSP, no caching of index.html, a year for hashed assets). */
    @Bean
    FilterRegistrationBean<ConsoleHeaders> consoleHeaders() {
        FilterRegistrationBean<ConsoleHeaders> r = new FilterRegistrationBean<>(new ConsoleHeaders());
        r.setOrder(BODY_LIMIT_ORDER + 1);
        r.addUrlPatterns("/*");
        return r;
    }

    @Bean
    WebSecurityCustomizer firewallProblems(ObjectMapper json) {
        return web -> web.requestRejectedHandler(new FirewallProblems(json));
    }

    @Bean
    WebServerFactoryCustomizer<TomcatServletWebServerFactory> connectionAbort() {
        return f -> {
            f.addContextValves(new ConnectionAbortValve());
            // Tomcat's HTML error page, for what it refuses before any servlet runs, becomes a problem detail
            f.addContextCustomizers(context -> {
                if (context.getParent() instanceof StandardHost host) {
                    host.setErrorReportValveClass(ProblemReportValve.class.getName());
                }
            });
        };
    }

    /**
     * No XML converters: the API is JSON (an {@code Accept: application/xml} gets 406 as a problem
     * detail), even when a library on the class path (the S3 test server's Jackson XML) would make
     * Spring add one.
     */
    @Bean
    WebMvcConfigurer jsonOnly() {
        return new WebMvcConfigurer() {
            @Override
            public void extendMessageConverters(List<HttpMessageConverter<?>> converters) {
                converters.removeIf(ApiEdgeConfiguration::speaksXml);
            }
        };
    }

    static boolean speaksXml(HttpMessageConverter<?> c) {
        return c.getSupportedMediaTypes().stream()
                .anyMatch(m -> !m.isWildcardSubtype() && (m.getSubtype().equals("xml") || m.getSubtype().endsWith("+xml")))
                && c.getSupportedMediaTypes().stream().noneMatch(m -> m.isCompatibleWith(MediaType.APPLICATION_JSON));
    }
}
