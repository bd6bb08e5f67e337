/**
 * Named kill points: the places where a crash test may make the process die. A {@link
 * org.holdfast.common.kill.KillPoint} is one such place, declared once in {@link
 * org.holdfast.common.kill.KillPoints} with what has just become durable there; code marks it with
 * {@code KillPoints.hit(...)}, and a test or a child JVM arms one point by name.
 */
package org.holdfast.common.kill;
