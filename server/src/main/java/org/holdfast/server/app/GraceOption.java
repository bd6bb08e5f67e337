package org.holdfast.server.app;

import java.time.Duration;
import org.holdfast.server.gc.GcRebuildTool;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.Option;
import picocli.CommandLine.TypeConversionException;

/** The {@code --grace 24h} of the commands that rebuild GC metadata: the node's holdfast.gc.grace. */
final class GraceOption {
    @Option(names = "--grace", paramLabel = "DURATION", defaultValue = "24h", converter = DurationConverter.class, order = 10,
            description = "the node's holdfast.gc.grace: no unreferenced block is freed sooner than this after the run"
                    + " (default: ${DEFAULT-VALUE}; 90m, 2d, PT24H ...)")
    Duration grace;

    /** "24h", "90m", "30s", "2d", "500ms" or ISO-8601, as {@link GcRebuildTool#parseDuration}. */
    static final class DurationConverter implements ITypeConverter<Duration> {
        @Override
        public Duration convert(String value) {
            try {
                return GcRebuildTool.parseDuration(value);
            } catch (IllegalArgumentException e) {
                throw new TypeConversionException(e.getMessage());
            }
        }
    }
}
