package org.holdfast.server.api;

import jakarta.servlet.http.HttpServletRequest;
import java.time.Instant;
import java.util.List;
import org.holdfast.server.security.Role;
import org.holdfast.server.security.UserDirectory;
import org.holdfast.server.security.UserRecord;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.DeleteMapping;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.PutMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

/** Users who log in with a password (admin only; the URL rules in SecurityConfiguration enforce it). */
@RestController
public class UserController {
    private final UserDirectory users;

    public UserController(UserDirectory users) {
        this.users = users;
    }

    /** A user as the API shows it (never the password hash). */
    public record UserView(String name, String role, Instant createdAt, boolean disabled) {
        static UserView of(UserRecord u) {
            return new UserView(u.name(), u.role().wireName(), Instant.ofEpochMilli(u.createdMillis()), u.disabled());
        }
    }

    /** A new user. */
    public record CreateUser(String name, String role, String password) {
        @Override
        public String toString() {
            return "CreateUser[" + name + ", " + role + "]";
        }
    }

    /** A change: any of password, role, disabled. */
    public record UpdateUser(String password, String role, Boolean disabled) {
        @Override
        public String toString() {
            return "UpdateUser[" + role + ", " + disabled + "]";
        }
    }

    @GetMapping("/api/v1/users")
    public List<UserView> list() {
        return users.list().stream().map(UserView::of).toList();
    }

    @Audited(value = "user.create", byHandler = true)
    @PostMapping("/api/v1/users")
    public ResponseEntity<UserView> create(@RequestBody(required = false) CreateUser body, HttpServletRequest request) {
        if (body == null || body.role() == null) {
            throw new IllegalArgumentException("body must be {\"name\": \"...\", \"role\": \"admin|operator|viewer\", \"password\": \"...\"}");
        }
        UserRecord u = users.create(body.name(), Role.parse(body.role()), body.password(), Caller.require().name(), Caller.source(request));
        return ResponseEntity.status(HttpStatus.CREATED).body(UserView.of(u));
    }

    @GetMapping("/api/v1/users/{name}")
    public UserView get(@PathVariable String name) {
        return UserView.of(users.require(name));
    }

    /** Sets password, role and/or disabled; the user's console sessions end. */
    @Audited(value = "user.update", byHandler = true)
    @PutMapping("/api/v1/users/{name}")
    public UserView update(@PathVariable String name, @RequestBody(required = false) UpdateUser body, HttpServletRequest request) {
        if (body == null) {
            throw new IllegalArgumentException("body must hold any of {\"password\": \"...\", \"role\": \"...\", \"disabled\": true|false}");
        }
        Role role = body.role() == null ? null : Role.parse(body.role());
        return UserView.of(users.update(name, body.password(), role, body.disabled(), Caller.require().name(), Caller.source(request)));
    }

    @Audited(value = "user.delete", byHandler = true)
    @DeleteMapping("/api/v1/users/{name}")
    public ResponseEntity<Void> delete(@PathVariable String name, HttpServletRequest request) {
        users.delete(name, Caller.require().name(), Caller.source(request));
        return ResponseEntity.noContent().build();
    }
}
