package org.holdfast.common.kill;

/** One named place where a crash test may kill the process; {@code description} says what is durable there. */
public record KillPoint(String name, String description) {
    @Override
    public String toString() {
        return name;
    }
}
