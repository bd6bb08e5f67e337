/** Small concurrency helpers shared by every module. */
package org.holdfast.common.concurrent;
