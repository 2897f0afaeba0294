-- Which OS logins may act as a profile. A store with no binding is one seat: whoever runs the tool names
-- any profile (as before). Once it has a binding, a process whose OS login is not bound to the profile it
-- names is refused. Append-only: a binding is taken back by a later row with bound = 0; the latest row of a
-- (user, login) pair says whether it holds. Every change also has its event.
CREATE TABLE user_logins (
    id INTEGER PRIMARY KEY,
    user TEXT NOT NULL REFERENCES users (name),
    login TEXT NOT NULL CHECK (length(login) BETWEEN 1 AND 256),
    bound INTEGER NOT NULL CHECK (bound IN (0, 1)),
    by TEXT REFERENCES users (name),
    at TEXT NOT NULL
);
CREATE INDEX user_logins_by_pair ON user_logins (user, login, id);

CREATE TRIGGER user_logins_no_update BEFORE UPDATE ON user_logins
BEGIN SELECT RAISE(ABORT, 'login bindings are append-only: unbind with a new row'); END;
CREATE TRIGGER user_logins_no_delete BEFORE DELETE ON user_logins
BEGIN SELECT RAISE(ABORT, 'login bindings are append-only: they cannot be deleted'); END;
