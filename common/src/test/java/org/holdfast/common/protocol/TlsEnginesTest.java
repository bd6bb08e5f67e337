package org.holdfast.common.protocol;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.buffer.UnpooledByteBufAllocator;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** Engine choice with and without OpenSSL, and the JDK engine's heap cumulation. */
class TlsEnginesTest {

    @Test
    void choose_autoWithOpenSsl_picksOpenSsl() {
        assertThat(TlsEngines.choose("auto", true)).isEqualTo(TlsEngines.Engine.OPENSSL);
        assertThat(TlsEngines.choose(null, true)).isEqualTo(TlsEngines.Engine.OPENSSL);
    }

    @Test
    void choose_autoWithoutOpenSsl_fallsBackToJdk() {
        assertThat(TlsEngines.choose("auto", false)).isEqualTo(TlsEngines.Engine.JDK);
        assertThat(TlsEngines.choose(" ", false)).isEqualTo(TlsEngines.Engine.JDK);
    }

    @Test
    void choose_opensslWhereItDoesNotLoad_failsNamingTheWayOut() {
        assertThatThrownBy(() -> TlsEngines.choose("openssl", false))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("use auto or jdk");
    }

    @Test
    void choose_jdkOrUnknown_jdkOrClearError() {
        assertThat(TlsEngines.choose("JDK", true)).isEqualTo(TlsEngines.Engine.JDK);
        assertThatThrownBy(() -> TlsEngines.choose("boringssl", true))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("auto, openssl or jdk");
    }

    @Test
    void heapCumulator_directReads_concatenatedInAHeapBufferAndReleased() {
        ByteBufAllocator alloc = UnpooledByteBufAllocator.DEFAULT;
        byte[] all = new byte[300_000];
        new Random(7).nextBytes(all);
        ByteBuf cumulation = Unpooled.EMPTY_BUFFER;
        ByteBuf[] reads = new ByteBuf[10];
        for (int i = 0; i < reads.length; i++) {
            reads[i] = alloc.directBuffer(30_000).writeBytes(all, i * 30_000, 30_000);
            cumulation = TlsEngines.HEAP_CUMULATOR.cumulate(alloc, cumulation, reads[i]);
            if (i == 4) {
                cumulation.skipBytes(1000); // the decoder consumed some: the rest stays in order
            }
        }
        try {
            assertThat(cumulation.isDirect()).isFalse();
            byte[] got = new byte[cumulation.readableBytes()];
            cumulation.readBytes(got);
            assertThat(got).isEqualTo(java.util.Arrays.copyOfRange(all, 1000, all.length));
            for (ByteBuf r : reads) {
                assertThat(r.refCnt()).as("every read buffer released").isZero();
            }
        } finally {
            cumulation.release();
        }
    }
}
