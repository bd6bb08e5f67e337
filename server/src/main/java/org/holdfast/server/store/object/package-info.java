/**
 * Object stores behind the data store (issue 17): the {@link org.holdfast.server.store.object.ObjectStore}
 * abstraction and its S3 implementation. The AWS SDK's types stay in this package.
 */
package org.holdfast.server.store.object;
