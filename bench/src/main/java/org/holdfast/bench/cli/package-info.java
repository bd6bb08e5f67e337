/** The bench's commands (picocli): {@code run} and its options. */
package org.holdfast.bench.cli;
