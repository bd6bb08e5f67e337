package org.holdfast.client.net;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import org.holdfast.client.ExitCode;
import org.junit.jupiter.api.Test;

class WrongPortSnifferTest {
    private static final ServerAddress ADDRESS = ServerAddress.parse("backup.example:8080");

    @Test
    void recognise_httpStatusLine_networkFailureNamingTheAgentPort() {
        ByteBuf b = Unpooled.copiedBuffer("HTTP/1.1 400 \r\nContent-Length: 0\r\n\r\n", StandardCharsets.US_ASCII);
        WrongPortException e = WrongPortSniffer.recognise(b, ADDRESS, true);
        assertThat(e).isNotNull();
        assertThat(e.exitCode()).isEqualTo(ExitCode.NETWORK);
        assertThat(e.getMessage()).contains("this is the server's HTTP port").contains("the agent port is 7070 by default");
        assertThat(e.hint()).contains("--server backup.example:7070");
        assertThat(b.readerIndex()).as("nothing consumed").isZero();
        b.release();
    }

    @Test
    void recognise_tlsRecordOnPlainConnection_saysDropNoTls() {
        ByteBuf alert = Unpooled.wrappedBuffer(new byte[] {21, 3, 3, 0, 2, 2, 40});
        WrongPortException e = WrongPortSniffer.recognise(alert, ADDRESS, false);
        assertThat(e).isNotNull();
        assertThat(e.hint()).contains("without --no-tls");
        assertThat(WrongPortSniffer.recognise(alert, ADDRESS, true)).as("expected on a TLS connection").isNull();
    }

    @Test
    void recognise_holdfastFrame_nothingWrong() {
        // a HELLO_OK frame starts with its length (small) and the version byte
        ByteBuf frame = Unpooled.wrappedBuffer(new byte[] {0, 0, 0, 12, 2, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0});
        assertThat(WrongPortSniffer.recognise(frame, ADDRESS, false)).isNull();
        assertThat(WrongPortSniffer.recognise(Unpooled.wrappedBuffer(new byte[] {'H', 'T'}), ADDRESS, false)).isNull();
    }
}
