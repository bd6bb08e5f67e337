/** Small text helpers shared by every module: the "did you mean ...?" advice for misspelt names. */
package org.holdfast.common.text;
