package org.holdfast.common.text;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class EditDistanceTest {

    @Test
    void levenshtein_countsInsertionsDeletionsAndSubstitutions() {
        assertThat(EditDistance.levenshtein("--volume", "--volume")).isZero();
        assertThat(EditDistance.levenshtein("--sorce", "--source")).isEqualTo(1); // an insertion
        assertThat(EditDistance.levenshtein("--source", "--sorce")).isEqualTo(1); // a deletion
        assertThat(EditDistance.levenshtein("port", "prot")).isEqualTo(2); // a swap is two substitutions
        assertThat(EditDistance.levenshtein("", "abc")).isEqualTo(3);
        assertThat(EditDistance.levenshtein("kitten", "sitting")).isEqualTo(3);
    }
}
