/**
 * Holdfast's garbage collector, free of Spring and of the server: the GC metadata array
 * ({@code gma}), BOSC batching of its updates ({@code bosc}), hybrid reference-count/expiry
 * bookkeeping ({@code bookkeeping}), retention arithmetic ({@code retention}), the sweep
 * ({@code sweep}) and the independent checker ({@code check}). Thesis sections 5.5 to 5.7, with
 * the two corrections of design.md.
 */
package org.holdfast.gc;
