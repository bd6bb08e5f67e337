package org.holdfast.server.catalog;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.HexFormat;
import java.util.List;
import org.holdfast.server.security.Role;
import org.holdfast.server.security.TokenRecord;
import org.holdfast.server.security.UserRecord;
import org.holdfast.server.security.VolumeScope;
import org.junit.jupiter.api.Test;

/** Golden fixtures of the credential record layouts (docs/architecture.md): a layout change must fail here. */
class CredentialCodecTest {
    private static final HexFormat HEX = HexFormat.of();

    static final UserRecord USER = new UserRecord("alice", Role.OPERATOR, "{bcrypt}$2a$", 0x0102030405060708L, true);
    static final String USER_V1 = "550102010102030405060708000c7b6263727970747d24326124";

    static final byte[] HASH = new byte[32];

    static {
        for (int i = 0; i < 32; i++) {
            HASH[i] = (byte) i;
        }
    }

    static final TokenRecord TOKEN = new TokenRecord("00112233aabbccdd", "h1", Role.AGENT, new VolumeScope(List.of("db1", "w*")),
            "default", 1L, 2L, 3L, 4L, "u:a", HASH);
    static final String TOKEN_V1 = "5401040100000000000000010000000000000002000000000000000300000000000000040001020304050607"
            + "08090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f" + "00026831" + "000764656661756c74" + "0003753a61"
            + "0002" + "0003646231" + "0002772a";

    @Test
    void encodeUser_v1_matchesGoldenBytes() {
        assertThat(HEX.formatHex(CredentialCodec.encodeUser(USER))).isEqualTo(USER_V1);
        assertThat(CredentialCodec.decodeUser("alice", HEX.parseHex(USER_V1))).isEqualTo(USER);
    }

    @Test
    void encodeToken_v1_matchesGoldenBytes() {
        assertThat(HEX.formatHex(CredentialCodec.encodeToken(TOKEN))).isEqualTo(TOKEN_V1);
        TokenRecord back = CredentialCodec.decodeToken("00112233aabbccdd", HEX.parseHex(TOKEN_V1));
        assertThat(back.secretHash()).isEqualTo(HASH);
        assertThat(back.scope()).isEqualTo(TOKEN.scope());
        assertThat(back.revokedMillis()).isEqualTo(3);
        assertThat(back.creator()).isEqualTo("u:a");
    }

    @Test
    void decode_wrongMagicVersionOrLength_refused() {
        byte[] user = HEX.parseHex(USER_V1);
        user[0] = 0x54;
        assertThatThrownBy(() -> CredentialCodec.decodeUser("a", user)).hasMessageContaining("magic");
        byte[] v2 = HEX.parseHex(USER_V1);
        v2[1] = 2;
        assertThatThrownBy(() -> CredentialCodec.decodeUser("a", v2)).hasMessageContaining("version 2");
        byte[] token = HEX.parseHex(TOKEN_V1);
        assertThatThrownBy(() -> CredentialCodec.decodeToken("x", java.util.Arrays.copyOf(token, 40))).hasMessageContaining("truncated");
        assertThatThrownBy(() -> CredentialCodec.decodeToken("x", java.util.Arrays.copyOf(token, token.length + 1)))
                .hasMessageContaining("trailing");
    }
}
