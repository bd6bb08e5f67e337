/** What the user sees while the agent works: a one-line progress meter on stderr and human-readable sizes. */
package org.holdfast.client.progress;
