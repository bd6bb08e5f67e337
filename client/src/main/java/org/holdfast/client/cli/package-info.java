/**
 * The command line: {@link org.holdfast.client.cli.HoldfastAgent} and one picocli class per
 * subcommand. This is the only place that prints, chooses exit codes, or formats JSON.
 */
package org.holdfast.client.cli;
