/**
 * Test support: TCP ports a test hands to a child process, claimed so that test JVMs running side
 * by side (surefire forks, other builds on the machine) never hand out the same one.
 */
package org.holdfast.common.ports;
