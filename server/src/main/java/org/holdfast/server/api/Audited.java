package org.holdfast.server.api;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/** The stable audit action name of a state-changing endpoint (docs/api.md lists them); read by {@link AuditFilter}. */
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.METHOD)
public @interface Audited {
    /** A dotted name, e.g. {@code volume.delete}. */
    String value();

    /**
     * True if the handler writes its own, richer entry (logins, users, tokens): the filter then
     * records only calls refused before the handler ran.
     */
    boolean byHandler() default false;
}
