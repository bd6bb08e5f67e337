package org.holdfast.common.protocol;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.util.concurrent.DefaultThreadFactory;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** {@link NettyTransport}: epoll on Linux (the native library is packaged), NIO when forced, and both carry bytes unchanged. */
class NettyTransportTest {

    @Test
    @EnabledOnOs(value = OS.LINUX, architectures = {"amd64", "aarch64"})
    void auto_onLinux_isEpoll_soAMissingNativeLibraryFailsHere() {
        NettyTransport t = NettyTransport.named("auto");
        assertThat(t.isEpoll()).as("%s", t).isTrue();
        assertThat(t.socketChannel()).isEqualTo(EpollSocketChannel.class);
        assertThat(t.toString()).isEqualTo("epoll transport");
    }

    @Test
    void nio_forced_isNio_andSaysWhy() {
        NettyTransport t = NettyTransport.named(" NIO ");
        assertThat(t.isEpoll()).isFalse();
        assertThat(t.socketChannel()).isEqualTo(NioSocketChannel.class);
        assertThat(t.serverChannel()).isEqualTo(NioServerSocketChannel.class);
        assertThat(t.toString()).isEqualTo("NIO transport (holdfast.transport=nio)");
    }

    @Test
    void unknownName_isRefused_namingTheChoices() {
        assertThatThrownBy(() -> NettyTransport.named("kqueue")).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("-Dholdfast.transport must be auto, nio or epoll, not 'kqueue'");
    }

    /** 1 MiB of random bytes through a loopback echo: more than one read or write moves, so they run partial. */
    @ParameterizedTest
    @ValueSource(strings = {"nio", "auto"})
    void loopbackEcho_returnsEveryByteInOrder(String name) throws Exception {
        NettyTransport t = NettyTransport.named(name);
        byte[] sent = new byte[1 << 20];
        new Random(14).nextBytes(sent);
        EventLoopGroup group = t.group(2, new DefaultThreadFactory("transport-test", true));
        try {
            Channel server = new ServerBootstrap().group(group).channel(t.serverChannel())
                    .childHandler(new ChannelInboundHandlerAdapter() {
                        @Override
                        public void channelRead(ChannelHandlerContext ctx, Object msg) {
                            ctx.writeAndFlush(msg);
                        }
                    }).bind("127.0.0.1", 0).sync().channel();
            ByteBuf received = Unpooled.buffer(sent.length);
            CompletableFuture<Void> done = new CompletableFuture<>();
            Channel client = new Bootstrap().group(group).channel(t.socketChannel())
                    .handler(new ChannelInitializer<SocketChannel>() {
                        @Override
                        protected void initChannel(SocketChannel ch) {
                            ch.pipeline().addLast(new SimpleChannelInboundHandler<ByteBuf>() {
                                @Override
                                protected void channelRead0(ChannelHandlerContext ctx, ByteBuf msg) {
                                    received.writeBytes(msg);
                                    if (received.readableBytes() == sent.length) {
                                        done.complete(null);
                                    }
                                }
                            });
                        }
                    }).connect(server.localAddress()).sync().channel();
            client.writeAndFlush(Unpooled.wrappedBuffer(sent));
            done.get(30, TimeUnit.SECONDS);
            assertThat(client.getClass()).isEqualTo(t.socketChannel());
            byte[] got = new byte[sent.length];
            received.readBytes(got);
            received.release();
            assertThat(got).isEqualTo(sent);
            client.close().sync();
            server.close().sync();
        } finally {
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
        }
    }
}
