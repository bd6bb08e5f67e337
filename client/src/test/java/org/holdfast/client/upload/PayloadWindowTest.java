package org.holdfast.client.upload;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class PayloadWindowTest {
    private static final int BS = 4096;
    private static final int SLAB = 4 << 20;

    @Test
    void slabsAreMadeOnFirstNeed_andReusedOnceFree() {
        PayloadWindow w = new PayloadWindow(4L * SLAB, BS);
        SessionFailure failure = new SessionFailure();
        assertThat(w.slabsCreated()).isZero();
        assertThat(w.allReturned()).isTrue();

        PayloadWindow.Slab a = w.acquire(failure);
        assertThat(w.slabsCreated()).isEqualTo(1);
        assertThat(a.data).hasSize(SLAB);
        assertThat(w.allReturned()).isFalse();
        w.release(a);
        assertThat(w.allReturned()).isTrue();

        PayloadWindow.Slab again = w.acquire(failure);
        assertThat(again).isSameAs(a);
        assertThat(again.refs.get()).isEqualTo(1);
        assertThat(again.used).isZero();
        assertThat(w.slabsCreated()).isEqualTo(1);
    }

    @Test
    void neverMoreSlabsThanTheWindowHolds_aFullWindowWaitsForARelease() throws Exception {
        PayloadWindow w = new PayloadWindow(2L * SLAB, BS);
        SessionFailure failure = new SessionFailure();
        PayloadWindow.Slab a = w.acquire(failure);
        PayloadWindow.Slab b = w.acquire(failure);
        assertThat(b).isNotSameAs(a);

        CompletableFuture<PayloadWindow.Slab> third = CompletableFuture.supplyAsync(() -> w.acquire(failure));
        Thread.sleep(300);
        assertThat(third).as("no third slab while both are in use").isNotDone();
        w.release(b);
        assertThat(third.get(10, TimeUnit.SECONDS)).isSameAs(b);
        assertThat(w.slabsCreated()).isEqualTo(2);
    }

    @Test
    void aFailedSessionStopsTheWait() {
        PayloadWindow w = new PayloadWindow(2L * SLAB, BS);
        SessionFailure failure = new SessionFailure();
        w.acquire(failure);
        w.acquire(failure);
        failure.fail(new IllegalStateException("server gone"));
        assertThatThrownBy(() -> w.acquire(failure)).hasMessage("server gone");
    }
}
