package org.holdfast.server.ingest.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Arrays;
import org.junit.jupiter.api.Test;

/** The DATA_FAILED message that tells a damaged block from a failing or unreachable worker. */
class DamagedBlockAnswerTest {
    @Test
    void parse_messageOfADamagedBlock_givesItsPbnFingerprintAndProblem() {
        byte[] fp = new byte[32];
        Arrays.fill(fp, (byte) 0xab);
        DamagedBlockAnswer a = DamagedBlockAnswer.parse(DamagedBlockAnswer.message(281474976710663L, fp,
                "stored bytes checksum (CRC32C) mismatch (log-00000001.hfl, record at offset 28928)"));
        assertThat(a.pbn()).isEqualTo(281474976710663L);
        assertThat(a.fingerprint()).isEqualTo(fp);
        assertThat(a.problem()).isEqualTo("stored bytes checksum (CRC32C) mismatch (log-00000001.hfl, record at offset 28928)");
    }

    @Test
    void parse_unknownFingerprint_readsAsAllZero() {
        DamagedBlockAnswer a = DamagedBlockAnswer.parse(DamagedBlockAnswer.message(9, null, "no location"));
        assertThat(a.fingerprint()).isEqualTo(new byte[32]);
    }

    @Test
    void parse_otherFailures_areNoDamagedBlock() {
        assertThat(DamagedBlockAnswer.parse("DATA_READ failed on the worker: the data store in /x was created for PBN range [1, 2)"))
                .isNull();
        assertThat(DamagedBlockAnswer.parse("DATA_READ refused: PBN 5 is outside this worker's range [1, 2); damaged PBN 5"))
                .isNull();
    }
}
