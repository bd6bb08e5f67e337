package org.holdfast.client;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.AbstractByteBuf;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.util.ResourceLeakDetector;
import io.netty.util.internal.logging.InternalLoggerFactory;
import io.netty.util.internal.logging.JdkLoggerFactory;
import java.lang.reflect.Field;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.platform.launcher.LauncherSession;
import org.junit.platform.launcher.LauncherSessionListener;

/**
 * Makes Netty's (paranoid) leak detector observable in tests. The agent ships slf4j-nop, which
 * would silence leak reports, so before any test runs this switches Netty's logging to JUL and
 * registers a listener on the ByteBuf leak detector. {@link #assertNoLeaks()} then forces
 * collection and fails on any reported leak.
 */
public final class LeakWatch implements LauncherSessionListener {
    private static final List<String> LEAKS = new CopyOnWriteArrayList<>();
    private static volatile boolean installed;

    @Override
    public void launcherSessionOpened(LauncherSession session) {
        install();
    }

    static synchronized void install() {
        if (installed) {
            return;
        }
        InternalLoggerFactory.setDefaultFactory(JdkLoggerFactory.INSTANCE);
        try {
            Field f = AbstractByteBuf.class.getDeclaredField("leakDetector");
            f.setAccessible(true);
            ResourceLeakDetector<?> d = (ResourceLeakDetector<?>) f.get(null);
            d.setLeakListener((type, records) -> LEAKS.add(type + ": " + records));
            installed = true;
        } catch (ReflectiveOperationException | RuntimeException e) {
            System.err.println("[LeakWatch] cannot hook Netty's leak detector: " + e);
        }
    }

    /** True if leaks can be observed in this JVM. */
    public static boolean installed() {
        return installed;
    }

    /** Collects garbage, lets the detector run, and fails if any ByteBuf leaked. */
    public static void assertNoLeaks() {
        install();
        for (int i = 0; i < 5; i++) {
            System.gc();
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            // The detector reports collected leaks when it tracks the next buffers.
            for (int k = 0; k < 64; k++) {
                ByteBuf b = PooledByteBufAllocator.DEFAULT.buffer(16);
                b.release();
            }
        }
        assertThat(LEAKS).as("Netty ByteBuf leaks").isEmpty();
    }
}
