package org.holdfast.bench.workload;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;

class ExtentAllocatorTest {
    @Test
    void allocate_afterRelease_reusesTheLowestFreeBlocks() {
        ExtentAllocator a = new ExtentAllocator(0, 100);
        List<Extent> first = a.allocate(10);
        List<Extent> second = a.allocate(10);
        a.release(first);

        assertThat(a.allocate(5)).containsExactly(new Extent(0, 5));
        assertThat(second).containsExactly(new Extent(10, 10));
        assertThat(a.freeBlocks()).isEqualTo(85);
    }

    @Test
    void allocate_noRunBigEnough_fragmentsAcrossRuns() {
        ExtentAllocator a = new ExtentAllocator(0, 30);
        List<Extent> x = a.allocate(10);
        a.allocate(10);
        a.release(x);

        assertThat(a.allocate(15)).containsExactly(new Extent(0, 10), new Extent(20, 5));
        assertThat(a.allocate(100)).isEmpty();
    }

    @Test
    void release_twice_isRejected() {
        ExtentAllocator a = new ExtentAllocator(0, 30);
        List<Extent> x = a.allocate(10);
        a.release(x);

        assertThatThrownBy(() -> a.release(x)).isInstanceOf(IllegalStateException.class);
    }
}
