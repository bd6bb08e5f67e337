package org.holdfast.common.protocol;

import io.netty.channel.EventLoopGroup;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollEventLoopGroup;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.ServerSocketChannel;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import java.util.Locale;
import java.util.concurrent.ThreadFactory;

/**
 * The Netty transport every Holdfast socket uses: Linux's native epoll where its library loads
 * (less CPU per byte than NIO's selector and JDK socket layer), else NIO. One choice per process,
 * read from the JVM property {@value #PROPERTY}: {@code auto} (the default), {@code nio} or
 * {@code epoll} (refused with the reason where it cannot load). The wire is the same on both.
 */
public final class NettyTransport {
    /** The JVM property that chooses the transport ({@code -Dholdfast.transport=nio} forces NIO). */
    public static final String PROPERTY = "holdfast.transport";

    private static volatile NettyTransport process;

    private final boolean epoll;
    private final String fallback;

    private NettyTransport(boolean epoll, String fallback) {
        this.epoll = epoll;
        this.fallback = fallback;
    }

    /** This process's transport, chosen by {@value #PROPERTY} on first use. */
    public static NettyTransport process() {
        NettyTransport t = process;
        if (t == null) {
            t = named(System.getProperty(PROPERTY, "auto"));
            process = t;
        }
        return t;
    }

    /** The transport {@code name} chooses ({@code auto}, {@code nio}, {@code epoll}); throws naming what to do for another name. */
    public static NettyTransport named(String name) {
        switch (name.trim().toLowerCase(Locale.ROOT)) {
            case "auto":
                return Epoll.isAvailable() ? new NettyTransport(true, null) : new NettyTransport(false, "epoll unavailable: " + cause());
            case "nio":
                return new NettyTransport(false, PROPERTY + "=nio");
            case "epoll":
                if (!Epoll.isAvailable()) {
                    throw new IllegalStateException("-D" + PROPERTY + "=epoll, but epoll is unavailable here: " + cause()
                            + "; use -D" + PROPERTY + "=auto (or nio)");
                }
                return new NettyTransport(true, null);
            default:
                throw new IllegalArgumentException("-D" + PROPERTY + " must be auto, nio or epoll, not '" + name + "'");
        }
    }

    private static String cause() {
        Throwable c = Epoll.unavailabilityCause();
        return c == null ? "unknown reason" : c.toString();
    }

    /** Whether this is the native epoll transport. */
    public boolean isEpoll() {
        return epoll;
    }

    /** An event loop group of {@code threads} threads made by {@code factory}. */
    public EventLoopGroup group(int threads, ThreadFactory factory) {
        return epoll ? new EpollEventLoopGroup(threads, factory) : new NioEventLoopGroup(threads, factory);
    }

    /** The client socket class for a {@code Bootstrap}. */
    public Class<? extends SocketChannel> socketChannel() {
        return epoll ? EpollSocketChannel.class : NioSocketChannel.class;
    }

    /** The listening socket class for a {@code ServerBootstrap}. */
    public Class<? extends ServerSocketChannel> serverChannel() {
        return epoll ? EpollServerSocketChannel.class : NioServerSocketChannel.class;
    }

    /** The event loop and socket classes a first connection initialises (for the agent's start-up warm-up). */
    public java.util.List<String> classNames() {
        return epoll ? java.util.List.of(EpollEventLoopGroup.class.getName(), EpollSocketChannel.class.getName())
                : java.util.List.of(NioEventLoopGroup.class.getName(), NioSocketChannel.class.getName());
    }

    /** For log lines: {@code epoll transport}, or {@code NIO transport (why)}. */
    @Override
    public String toString() {
        return epoll ? "epoll transport" : "NIO transport (" + fallback + ")";
    }
}
