package org.holdfast.common.protocol;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/** The one vocabulary of a start-over's reason: wire code, API name and log words agree, and unknown codes are refused. */
class StartOverReasonTest {

    @Test
    void ofCode_eachWireConstant_givesTheReasonWithItsApiName() {
        assertThat(StartOverReason.ofCode(DedupDone.STARTED_OVER_NEW_MEMBERSHIP)).isEqualTo(StartOverReason.NEW_MEMBERSHIP);
        assertThat(StartOverReason.ofCode(DedupDone.STARTED_OVER_OTHER_ID).apiName()).isEqualTo("other-worker-id");
        assertThat(StartOverReason.ofCode(DedupDone.STARTED_OVER_EPOCH_GAP).apiName()).isEqualTo("epoch-gap");
        assertThat(StartOverReason.ofCode(DedupDone.STARTED_OVER_UNREADABLE_OWNER).apiName()).isEqualTo("unreadable-owner-file");
        assertThat(StartOverReason.NEW_MEMBERSHIP.apiName()).isEqualTo("new-membership");
        for (StartOverReason r : StartOverReason.values()) {
            assertThat(StartOverReason.ofCode(r.code())).isSameAs(r);
            assertThat(r.words()).as("log words of %s", r).isNotBlank();
        }
    }

    @Test
    void ofCode_codeOfNoReason_isRefused() {
        for (int bad : new int[] {0, -1, 5, 9, 255, Integer.MIN_VALUE}) {
            assertThat(StartOverReason.isCode(bad)).as("code %s", bad).isFalse();
            assertThatThrownBy(() -> StartOverReason.ofCode(bad)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessage("no start-over reason " + bad);
        }
    }
}
