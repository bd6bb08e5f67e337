/** Value types that cross module boundaries: the delta of a snapshot that the GC engine consumes. */
package org.holdfast.common.model;
