package org.holdfast.server.gc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.URI;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.holdfast.server.store.object.S3Settings;
import org.junit.jupiter.api.Test;

/** The offline tools read the store settings as the server does: arguments first, then Spring-style environment variables. */
class OfflinePropertiesTest {

    @Test
    void argumentsThenEnvironment_s3SettingsAsTheServerReadsThem() {
        List<String> rest = new ArrayList<>();
        OfflineProperties p = OfflineProperties.of(new String[] {"/srv/holdfast", "--holdfast.store.backend=s3",
                "--holdfast.store.s3.bucket=from-args", "--scratch-dir", "/var/tmp"}, rest,
                Map.of("HOLDFAST_STORE_S3_BUCKET", "from-env", "HOLDFAST_STORE_S3_ENDPOINT", "http://rgw.lan:7480",
                        "HOLDFAST_STORE_S3_CREDENTIALSFILE", "/etc/holdfast/s3.properties",
                        "HOLDFAST_STORE_S3_MAXREADREQUESTSPERSECOND", "50", "HOLDFAST_STORE_S3_PATHSTYLE", "false"));
        assertThat(rest).as("the tool's own arguments stay").containsExactly("/srv/holdfast", "--scratch-dir", "/var/tmp");
        S3Settings s = S3Settings.fromProperties(p);
        assertThat(s.bucket()).as("an argument wins over the environment").isEqualTo("from-args");
        assertThat(s.endpoint()).isEqualTo(URI.create("http://rgw.lan:7480"));
        assertThat(s.credentialsFile()).isEqualTo(Path.of("/etc/holdfast/s3.properties"));
        assertThat(s.maxReadsPerSecond()).isEqualTo(50);
        assertThat(s.maxWritesPerSecond()).isZero();
        assertThat(s.pathStyle()).isFalse();
        assertThat(s.checksumsWhenRequired()).as("default").isTrue();
        assertThat(s.region()).isEqualTo("us-east-1");
    }

    @Test
    void backendLocalOrUnset_noStore_badValuesRefusedByName() {
        assertThat(S3Settings.fromProperties(OfflineProperties.of(new String[0], new ArrayList<>(), Map.of()))).isNull();
        assertThat(S3Settings.fromProperties(name -> name.equals("holdfast.store.backend") ? "local" : null)).isNull();
        assertThatThrownBy(() -> S3Settings.fromProperties(name -> name.equals("holdfast.store.backend") ? "ceph" : null))
                .hasMessageContaining("must be 'local' or 's3', not 'ceph'");
        assertThatThrownBy(() -> S3Settings.fromProperties(name -> name.equals("holdfast.store.backend") ? "s3" : null))
                .hasMessageContaining("holdfast.store.s3.bucket must name a bucket");
        Map<String, String> bad = Map.of("holdfast.store.backend", "s3", "holdfast.store.s3.bucket", "b",
                "holdfast.store.s3.max-write-requests-per-second", "fast");
        assertThatThrownBy(() -> S3Settings.fromProperties(bad::get))
                .hasMessageContaining("holdfast.store.s3.max-write-requests-per-second must be a number");
    }
}
