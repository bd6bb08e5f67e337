package org.holdfast.server.store.object;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Random;
import org.holdfast.server.store.object.HostileS3Server.Answer;
import org.holdfast.server.store.object.HostileS3Server.Request;
import org.holdfast.server.store.object.ObjectStoreUnavailableException.Reason;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link S3ObjectStore} against a {@link HostileS3Server}: the odd answers S3Proxy never gives (a HEAD
 * 404 for an object that exists, Range ignored, a missing or malformed Content-Range, a 416 for an
 * empty object, truncated or foreign listings, a 404 NoSuchKey to a DELETE). None of them may make
 * an existing sealed log read as absent, as another size or as other bytes: each is either read
 * right or refused as {@link ObjectStoreUnavailableException}.
 */
@Timeout(60)
class S3ObjectStoreOddAnswersTest {
    private static final String BUCKET = "holdfast-test";
    private static final String OBJECT = "/" + BUCKET + "/p/logs/x";
    private static final byte[] LOG = new byte[70_000];

    static {
        new Random(21).nextBytes(LOG);
    }

    @TempDir
    Path dir;

    private HostileS3Server hostile;
    private S3ObjectStore store;

    @BeforeEach
    void start() throws Exception {
        hostile = new HostileS3Server();
        Path credentials = Files.writeString(dir.resolve("s3.properties"), "access-key=a\nsecret-key=b\n");
        store = S3ObjectStore.connect(S3Settings.of(hostile.endpoint(), "us-east-1", BUCKET, "p/", credentials, true)
                .withRetries(2, Duration.ofMillis(5)));
    }

    @AfterEach
    void stop() throws Exception {
        store.close();
        hostile.close();
    }

    // --- the object as a well-behaved store serves it: HEAD, ranged GET, one page of listing

    private static boolean isList(Request r) {
        return r.method().equals("GET") && r.query().contains("list-type=2");
    }

    private static void correct(Request r, HostileS3Server s, OutputStream out) throws IOException {
        if (isList(r)) {
            listing(s, out, "<IsTruncated>false</IsTruncated>", "p/logs/x");
        } else if (!r.path().equals(OBJECT)) {
            s.s3Error(out, 404, "Not Found", "NoSuchKey");
        } else if (r.method().equals("HEAD")) {
            HostileS3Server.status(out, 200, "OK", "Content-Length: " + LOG.length, "ETag: \"x\"");
        } else if (r.method().equals("GET")) {
            String range = r.header("Range"); // bytes=a-b
            String[] ab = range.substring("bytes=".length()).split("-");
            int a = Integer.parseInt(ab[0]);
            int b = Math.min(LOG.length - 1, Integer.parseInt(ab[1]));
            s.withBody(out, 206, "Partial Content", "application/octet-stream", Arrays.copyOfRange(LOG, a, b + 1),
                    "Content-Range: bytes " + a + "-" + b + "/" + LOG.length);
        } else {
            HostileS3Server.status(out, 204, "No Content");
        }
    }

    private static void listing(HostileS3Server s, OutputStream out, String more, String... keys) throws IOException {
        StringBuilder b = new StringBuilder("<?xml version=\"1.0\" encoding=\"UTF-8\"?><ListBucketResult"
                + " xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"><Name>" + BUCKET + "</Name><Prefix>p/logs/</Prefix><KeyCount>"
                + keys.length + "</KeyCount><MaxKeys>1000</MaxKeys>" + more);
        for (String k : keys) {
            b.append("<Contents><Key>").append(k).append("</Key><Size>").append(LOG.length).append("</Size></Contents>");
        }
        s.withBody(out, 200, "OK", "application/xml", b.append("</ListBucketResult>").toString().getBytes(StandardCharsets.UTF_8));
    }

    /** A HEAD 404 (no body: who sent it cannot be told), then {@code get} for the GET. */
    private static Answer headNotFoundThen(Answer get) {
        return (r, s, out) -> {
            if (r.method().equals("HEAD")) {
                HostileS3Server.status(out, 404, "Not Found");
            } else if (r.method().equals("GET") && !isList(r)) {
                get.write(r, s, out);
            } else {
                correct(r, s, out);
            }
        };
    }

    private static Answer partial(String contentRange) {
        return (r, s, out) -> {
            if (contentRange == null) {
                s.withBody(out, 206, "Partial Content", "application/octet-stream", new byte[] {LOG[0]});
            } else {
                s.withBody(out, 206, "Partial Content", "application/octet-stream", new byte[] {LOG[0]}, "Content-Range: " + contentRange);
            }
        };
    }

    // --- gap (a): Range ignored

    @Test
    void size_headNotFoundAndRangeIgnored_sizeFromContentLengthBodyNotRead() throws Exception {
        long huge = 256L << 20;
        hostile.answer(headNotFoundThen((r, s, out) -> s.streamedWholeObject(out, huge)));
        assertThat(store.size("logs/x")).as("the 200's Content-Length is the object's size").hasValue(huge);
        hostile.awaitIdle();
        assertThat(hostile.requests()).extracting(Request::method).containsExactly("HEAD", "GET");
        assertThat(hostile.requests().get(1).header("Range")).isEqualTo("bytes=0-0");
        assertThat(hostile.bodyBytesSent()).as("the connection dropped: at most the socket buffers' worth was sent, not the object")
                .isLessThan(32L << 20);
    }

    @Test
    void size_headNotFoundRangeIgnoredWithoutLength_rejectedNotAbsent() throws Exception {
        hostile.answer(headNotFoundThen((r, s, out) -> {
            HostileS3Server.statusWithoutLength(out, 200, "OK", "Content-Type: application/octet-stream");
            out.write(LOG); // delimited by the connection's end
        }));
        assertThatThrownBy(() -> store.size("logs/x")).isInstanceOfSatisfying(ObjectStoreUnavailableException.class,
                e -> assertThat(e.reason()).isEqualTo(Reason.REJECTED)).hasMessageContaining("p/logs/x")
                .hasMessageContaining("no Content-Length");
    }

    @Test
    void getRange_rangeIgnored_rejectedBodyNotRead() throws Exception {
        hostile.answer((r, s, out) -> s.streamedWholeObject(out, 256L << 20));
        assertThatThrownBy(() -> store.getRange("logs/x", 1_000, 100)).as("its first bytes are not the bytes at 1000")
                .isInstanceOfSatisfying(ObjectStoreUnavailableException.class, e -> assertThat(e.reason()).isEqualTo(Reason.REJECTED))
                .hasMessageContaining("Range ignored").hasMessageContaining("p/logs/x");
        hostile.awaitIdle();
        assertThat(hostile.bodyBytesSent()).isLessThan(32L << 20);
        assertThat(store.stats().getBytes()).isZero();
    }

    @Test
    void getRange_contentRangeOfOtherBytes_rejected_shortOnlyAtTheObjectsEnd() throws Exception {
        hostile.answer((r, s, out) -> s.withBody(out, 206, "Partial Content", "application/octet-stream",
                Arrays.copyOfRange(LOG, 0, 100), "Content-Range: bytes 0-99/" + LOG.length));
        assertThatThrownBy(() -> store.getRange("logs/x", 1_000, 100)).isInstanceOf(ObjectStoreUnavailableException.class)
                .hasMessageContaining("'bytes 0-99/70000'");
        hostile.answer((r, s, out) -> s.withBody(out, 206, "Partial Content", "application/octet-stream",
                Arrays.copyOfRange(LOG, 1_000, 1_050), "Content-Range: bytes 1000-1049/" + LOG.length));
        assertThatThrownBy(() -> store.getRange("logs/x", 1_000, 100)).as("short in the middle: not the object's end")
                .isInstanceOf(ObjectStoreUnavailableException.class);
        hostile.answer(S3ObjectStoreOddAnswersTest::correct);
        assertThat(store.getRange("logs/x", LOG.length - 50, 100)).as("short at the end, as S3 answers")
                .isEqualTo(Arrays.copyOfRange(LOG, LOG.length - 50, LOG.length));
        assertThat(store.getRange("logs/x", 1_000, 100)).isEqualTo(Arrays.copyOfRange(LOG, 1_000, 1_100));
    }

    // --- gap (b): a missing or malformed Content-Range

    @Test
    void size_headNotFoundContentRangeMissingOrMalformed_rejectedNamingKeyAndHeader() {
        for (String bad : Arrays.asList(null, "bytes 0-0/7x", "bytes 0-0/-5", "bytes 0-0/*", "bytes=0-0/70000", "bytes 5-5/70000",
                "bytes 0-0/0", "bytes 0-0/99999999999999999999", "0-0/70000")) {
            hostile.answer(headNotFoundThen(partial(bad)));
            assertThatThrownBy(() -> store.size("logs/x")).as("Content-Range %s", bad)
                    .isInstanceOfSatisfying(ObjectStoreUnavailableException.class, e -> assertThat(e.reason()).isEqualTo(Reason.REJECTED))
                    .hasMessageContaining("p/logs/x").hasMessageContaining("Content-Range " + (bad == null ? "missing" : "'" + bad + "'"));
        }
        hostile.answer(headNotFoundThen(partial("bytes 0-0/70000")));
        assertThat(store.size("logs/x")).hasValue(LOG.length);
    }

    // --- gap (c): 416 for an empty object

    @Test
    void size_headNotFoundEmptyObjectAnswers416_zeroNotAbsent() {
        hostile.answer(headNotFoundThen((r, s, out) -> s.s3Error(out, 416, "Requested Range Not Satisfiable", "InvalidRange",
                "Content-Range: bytes */0")));
        assertThat(store.size("logs/x")).as("InvalidRange with bytes */0: exists, empty").hasValue(0);
        hostile.answer(headNotFoundThen((r, s, out) -> s.s3Error(out, 416, "Requested Range Not Satisfiable", "InvalidRange")));
        assertThat(store.size("logs/x")).as("the store's InvalidRange alone").hasValue(0);
        hostile.answer(headNotFoundThen((r, s, out) -> s.withBody(out, 416, "Requested Range Not Satisfiable", "text/html",
                "<html>416</html>".getBytes(StandardCharsets.UTF_8))));
        assertThatThrownBy(() -> store.size("logs/x")).as("a 416 naming neither: not a size").isInstanceOf(ObjectStoreUnavailableException.class)
                .hasMessageContaining("416");
        hostile.answer(headNotFoundThen((r, s, out) -> s.s3Error(out, 416, "Requested Range Not Satisfiable", "InvalidRange",
                "Content-Range: bytes */500")));
        assertThatThrownBy(() -> store.size("logs/x")).as("500 bytes cannot refuse byte 0").isInstanceOf(ObjectStoreUnavailableException.class)
                .hasMessageContaining("'bytes */500'");
    }

    // --- the rest of "is it there": HEAD without a length, listings, DELETE

    @Test
    void size_headWithoutContentLength_confirmedByGet() {
        hostile.answer((r, s, out) -> {
            if (r.method().equals("HEAD")) {
                HostileS3Server.statusWithoutLength(out, 200, "OK", "ETag: \"x\"");
            } else {
                correct(r, s, out);
            }
        });
        assertThat(store.size("logs/x")).hasValue(LOG.length);
        assertThat(hostile.requests()).extracting(Request::method).containsExactly("HEAD", "GET");
    }

    @Test
    void list_pagesFollowedByTheirTokens_allKeysOneRequestEach() {
        hostile.answer((r, s, out) -> {
            if (!r.query().contains("continuation-token")) {
                listing(s, out, "<IsTruncated>true</IsTruncated><NextContinuationToken>t1</NextContinuationToken>", "p/logs/a", "p/logs/b");
            } else if (r.query().contains("continuation-token=t1")) {
                listing(s, out, "<IsTruncated>true</IsTruncated><NextContinuationToken>t2</NextContinuationToken>", "p/logs/c");
            } else {
                listing(s, out, "<IsTruncated>false</IsTruncated>", "p/logs/x");
            }
        });
        assertThat(store.list("logs/")).containsExactly("logs/a", "logs/b", "logs/c", "logs/x");
        assertThat(store.stats().lists()).isEqualTo(3);
    }

    @Test
    void list_isTruncatedLeftOut_lastPageWithoutTokenElseFollowed() {
        hostile.answer((r, s, out) -> {
            if (!r.query().contains("continuation-token")) {
                listing(s, out, "<NextContinuationToken>t1</NextContinuationToken>", "p/logs/a");
            } else {
                listing(s, out, "", "p/logs/b"); // IsTruncated false left out, as some stores do
            }
        });
        assertThat(store.list("logs/")).containsExactly("logs/a", "logs/b");
        assertThat(store.stats().lists()).isEqualTo(2);
    }

    @Test
    void list_truncatedWithoutNewToken_rejectedNotShortened() {
        hostile.answer((r, s, out) -> listing(s, out, "<IsTruncated>true</IsTruncated>", "p/logs/a"));
        assertThatThrownBy(() -> store.list("logs/")).as("the SDK's paginator stops here: the keys after it would be missing")
                .isInstanceOfSatisfying(ObjectStoreUnavailableException.class, e -> assertThat(e.reason()).isEqualTo(Reason.REJECTED))
                .hasMessageContaining("truncated page").hasMessageContaining("no NextContinuationToken");
        hostile.answer((r, s, out) -> listing(s, out, "<IsTruncated>true</IsTruncated><NextContinuationToken>same</NextContinuationToken>",
                "p/logs/a"));
        assertThatThrownBy(() -> store.list("logs/")).as("a token that comes back would list forever")
                .isInstanceOf(ObjectStoreUnavailableException.class).hasMessageContaining("a repeated NextContinuationToken");
    }

    @Test
    void list_webServersPageOrForeignKeys_rejectedNotEmpty() {
        hostile.answer((r, s, out) -> s.withBody(out, 200, "OK", "text/html",
                "<html><body><h1>Welcome to nginx!</h1></body></html>".getBytes(StandardCharsets.UTF_8)));
        assertThatThrownBy(() -> store.list("logs/")).isInstanceOf(ObjectStoreUnavailableException.class)
                .hasMessageContaining("not a listing of the bucket");
        hostile.answer((r, s, out) -> listing(s, out, "<IsTruncated>false</IsTruncated>", "other/thing", "p/logs/x"));
        assertThatThrownBy(() -> store.list("logs/")).isInstanceOf(ObjectStoreUnavailableException.class)
                .hasMessageContaining("'other/thing'").hasMessageContaining("prefix ignored");
    }

    @Test
    void delete_missingKeyAnswered404NoSuchKey_noError_gateways404StillFails() {
        hostile.answer((r, s, out) -> s.s3Error(out, 404, "Not Found", "NoSuchKey"));
        store.delete("logs/gone");
        assertThat(store.stats().deletes()).isEqualTo(1);
        hostile.answer((r, s, out) -> s.withBody(out, 404, "Not Found", "text/html", "<html>404</html>".getBytes(StandardCharsets.UTF_8)));
        assertThatThrownBy(() -> store.delete("logs/gone")).as("not the store's word: the key may still be there")
                .isInstanceOf(ObjectStoreUnavailableException.class).hasMessageContaining("not NoSuchKey");
    }

    // --- trying to lose the data

    @Test
    void sealedLog_underEveryOddAnswer_neverAbsentNeverOtherBytes() {
        Map<String, Answer> odd = new LinkedHashMap<>();
        odd.put("HEAD 404, GET 404 from a web server", headNotFoundThen((r, s, out) -> s.withBody(out, 404, "Not Found", "text/html",
                "<html>nginx</html>".getBytes(StandardCharsets.UTF_8))));
        odd.put("HEAD 404, GET 200 whole object", headNotFoundThen((r, s, out) -> s.withBody(out, 200, "OK", "application/octet-stream", LOG)));
        odd.put("HEAD 404, GET 206 without Content-Range", headNotFoundThen(partial(null)));
        odd.put("HEAD 404, GET 206 bytes 0-0/7x", headNotFoundThen(partial("bytes 0-0/7x")));
        odd.put("HEAD 404, GET 206 bytes 0-0/-1", headNotFoundThen(partial("bytes 0-0/-1")));
        odd.put("HEAD 404, GET 416 from a proxy", headNotFoundThen((r, s, out) -> HostileS3Server.status(out, 416, "Range Not Satisfiable")));
        odd.put("HEAD 404, GET 503 SlowDown", headNotFoundThen((r, s, out) -> s.s3Error(out, 503, "Slow Down", "SlowDown")));
        odd.put("HEAD 404, GET 403", headNotFoundThen((r, s, out) -> s.s3Error(out, 403, "Forbidden", "AccessDenied")));
        odd.put("HEAD 404, GET 404 NoSuchBucket", headNotFoundThen((r, s, out) -> s.s3Error(out, 404, "Not Found", "NoSuchBucket")));
        odd.put("HEAD 404, GET reset", headNotFoundThen((r, s, out) -> { }));
        odd.put("HEAD without length", (r, s, out) -> {
            if (r.method().equals("HEAD")) {
                HostileS3Server.statusWithoutLength(out, 200, "OK");
            } else {
                correct(r, s, out);
            }
        });
        odd.put("every GET ignores Range", (r, s, out) -> {
            if (r.method().equals("GET") && !isList(r)) {
                s.withBody(out, 200, "OK", "application/octet-stream", LOG);
            } else {
                correct(r, s, out);
            }
        });
        odd.put("LIST truncated without token", (r, s, out) -> {
            if (isList(r)) {
                listing(s, out, "<IsTruncated>true</IsTruncated>");
            } else {
                correct(r, s, out);
            }
        });
        odd.put("LIST answered by a web page", (r, s, out) -> {
            if (isList(r)) {
                s.withBody(out, 200, "OK", "text/html", "<html><body>hello</body></html>".getBytes(StandardCharsets.UTF_8));
            } else {
                correct(r, s, out);
            }
        });
        odd.put("LIST with an empty 200", (r, s, out) -> {
            if (isList(r)) {
                HostileS3Server.status(out, 200, "OK", "Content-Type: application/xml");
            } else {
                correct(r, s, out);
            }
        });
        odd.put("everything reset", (r, s, out) -> { });
        for (var e : odd.entrySet()) {
            hostile.answer(e.getValue());
            Throwable sized = catchThrowable(() -> {
                OptionalLong size = store.size("logs/x");
                assertThat(size).as("%s: size", e.getKey()).hasValue(LOG.length);
            });
            assertThat(sized).as("%s: size is right or the store unavailable", e.getKey())
                    .satisfiesAnyOf(t -> assertThat(t).isNull(), t -> assertThat(t).isInstanceOf(ObjectStoreUnavailableException.class));
            Throwable listed = catchThrowable(() -> assertThat(store.list("logs/")).as("%s: list", e.getKey()).contains("logs/x"));
            assertThat(listed).as("%s: the log is listed or the store unavailable", e.getKey())
                    .satisfiesAnyOf(t -> assertThat(t).isNull(), t -> assertThat(t).isInstanceOf(ObjectStoreUnavailableException.class));
            Throwable read = catchThrowable(() -> assertThat(store.getRange("logs/x", 5_000, 300)).as("%s: bytes", e.getKey())
                    .isEqualTo(Arrays.copyOfRange(LOG, 5_000, 5_300)));
            assertThat(read).as("%s: its bytes or the store unavailable", e.getKey())
                    .satisfiesAnyOf(t -> assertThat(t).isNull(), t -> assertThat(t).isInstanceOf(ObjectStoreUnavailableException.class));
        }
        hostile.answer(S3ObjectStoreOddAnswersTest::correct);
        assertThat(store.size("logs/x")).hasValue(LOG.length);
        assertThat(store.list("logs/")).containsExactly("logs/x");
    }

    @Test
    void contentRange_parsesOnlyTheTwoForms() {
        assertThat(ContentRange.parse("bytes 0-0/12345")).isEqualTo(new ContentRange(0, 0, 12_345));
        assertThat(ContentRange.parse("Bytes 10-19/*")).isEqualTo(new ContentRange(10, 19, ContentRange.UNKNOWN));
        assertThat(ContentRange.parse("bytes */0")).satisfies(c -> assertThat(c.unsatisfied()).isTrue())
                .extracting(ContentRange::total).isEqualTo(0L);
        for (String bad : List.of("", "bytes", "bytes 0-0", "bytes 5-4/10", "bytes 0-10/10", "bytes 0-0/1 2", "bytes -1-0/5")) {
            assertThat(ContentRange.parse(bad)).as(bad).isNull();
        }
    }
}
