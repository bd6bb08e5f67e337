package org.holdfast.common.tls;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.HexFormat;
import org.junit.jupiter.api.Test;

class CertificateFingerprintTest {
    private static final String HEX = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";

    @Test
    void parse_colonsUpperCase_printsTheSame() {
        String printed = HexFormat.ofDelimiter(":").withUpperCase().formatHex(HexFormat.of().parseHex(HEX));
        CertificateFingerprint f = CertificateFingerprint.parse(printed);
        assertThat(f.toString()).isEqualTo(printed).hasSize(95);
    }

    @Test
    void parse_withoutColonsLowerCaseOrPrefixed_equalsTheColonForm() {
        CertificateFingerprint colons = CertificateFingerprint.parse(HexFormat.ofDelimiter(":").formatHex(HexFormat.of().parseHex(HEX)));
        assertThat(CertificateFingerprint.parse(HEX)).isEqualTo(colons);
        assertThat(CertificateFingerprint.parse(HEX.toUpperCase())).isEqualTo(colons);
        assertThat(CertificateFingerprint.parse("SHA256:" + HEX)).isEqualTo(colons);
        assertThat(CertificateFingerprint.parse("sha256=" + colons)).isEqualTo(colons);
    }

    @Test
    void parse_wrongLengthOrNotHex_saysWhatIsWrong() {
        assertThatThrownBy(() -> CertificateFingerprint.parse(HEX.substring(2))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("64 hex digits");
        assertThatThrownBy(() -> CertificateFingerprint.parse(HEX.replace('a', 'x'))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("not a hex");
        assertThat(CertificateFingerprint.parse(HEX)).isNotEqualTo(CertificateFingerprint.parse(HEX.replace('f', 'e')));
    }
}
