package org.holdfast.server.security;

import java.util.List;
import java.util.Optional;

/** Where users and API tokens are kept durably (the catalog implements it). Every write is synced. */
public interface CredentialStore {
    Optional<UserRecord> user(String name);

    /** All users, by name. */
    List<UserRecord> users();

    /** Creates or replaces the user of that name. */
    void putUser(UserRecord user);

    /** Removes a user; false if there was none. */
    boolean deleteUser(String name);

    Optional<TokenRecord> token(String id);

    /** All tokens (revoked ones included), by id. */
    List<TokenRecord> tokens();

    /** Creates or replaces the token of that id. */
    void putToken(TokenRecord token);
}
