"""Users, the append-only event log and item look-ups: the low-level faces every review module uses.

Events are written inside the caller's transaction, with the change they record, and chained by hash
(each event's hash covers the previous one), so a store whose log was tampered with shows it. The chain
also covers what was decided: each decision's seal (the sha256 of its own fields and of the text of the
item version it judged) rides in the event of its transaction (`detail.seals`), so a decision edited,
added or deleted behind the tool's back (its triggers dropped) no longer matches the log (`verify_log`).
"""

from __future__ import annotations

import datetime as dt
import json
import os
from dataclasses import dataclass
from typing import Any

from reviewer import __version__
from reviewer.errors import ReviewError
from reviewer.review.decision import Decision
from reviewer.review.rules import ROLES, workflow
from reviewer.review.signing import DECISION_COLS, sign_decision
from reviewer.store import Store, sha256_text

GENESIS = "sha256:" + "0" * 64
#: SQL condition on a decision row `d`: it has not been taken back (by an undo, a reopen or an audit)
EFFECTIVE = "NOT EXISTS (SELECT 1 FROM decisions r WHERE r.retracts = d.id)"
USER_ENV = "REVIEWER_USER"


def now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")


def dumps(value: Any) -> str | None:
    return None if value is None else json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


# ----------------------------------------------------------------------------- users


@dataclass(frozen=True)
class User:
    name: str
    role: str


def user_name(name: str | None) -> str:
    """--user, else REVIEWER_USER."""
    name = name or os.environ.get(USER_ENV)
    if not name:
        raise ReviewError(f"say who is working: --user NAME or {USER_ENV}")
    return name


def os_login() -> str:
    """The OS account this process runs as (its effective uid, not $USER, which anyone can set)."""
    try:
        import pwd

        return pwd.getpwuid(os.geteuid()).pw_name
    except (ImportError, KeyError):  # no pwd module (Windows) or a uid without a passwd entry (containers)
        import getpass

        return getpass.getuser()


def login_bindings(store: Store) -> dict[str, set[str]]:
    """profile -> the OS logins bound to it now (latest row of each pair); empty: the store is one seat."""
    held: dict[tuple[str, str], bool] = {}
    for user, login, bound in store.conn.execute("SELECT user, login, bound FROM user_logins ORDER BY id"):
        held[(user, login)] = bool(bound)
    out: dict[str, set[str]] = {}
    for (user, login), bound in held.items():
        if bound:
            out.setdefault(user, set()).add(login)
    return out


def find_user(store: Store, name: str) -> User:
    """Another person's profile (an annotator to assign, an expert to allow); no login check."""
    row = store.db.execute("SELECT name, role FROM users WHERE name = ?", [name]).fetchone()
    if row is None:
        new = store.conn.execute("SELECT 1 FROM users LIMIT 1").fetchone() is None
        where = f" in {store.path}" if store.path is not None else ""
        why = ", a store with no users yet (a mistyped --db makes a new one)" if new else ""
        raise ReviewError(f"unknown user {name!r}{where}{why} (add one with `reviewer users add NAME --role ROLE`)")
    return User(row[0], row[1])


def get_user(store: Store, name: str | None) -> User:
    """The person acting (--user or REVIEWER_USER). Once the store binds profiles to OS logins, this
    process's login must be bound to the profile it names."""
    user = find_user(store, user_name(name))
    bindings = login_bindings(store)
    if bindings:
        login = os_login()
        if login not in bindings.get(user.name, set()):
            raise ReviewError(
                f"OS login {login!r} may not act as {user.name!r} in this store (its profiles are bound to logins); "
                f"a maintainer can allow it: reviewer users bind {user.name} --login {login}"
            )
    return user


def working_profiles(store: Store) -> list[dict[str, Any]]:
    """The profiles this process's OS login may act as: all of them in a one-seat store."""
    users = list_users(store)
    bindings = login_bindings(store)
    if not bindings:
        return users
    login = os_login()
    return [u for u in users if login in bindings.get(u["name"], set())]


def list_users(store: Store) -> list[dict[str, Any]]:
    bindings = login_bindings(store)
    rows = list(store.query("SELECT name, role, created FROM users ORDER BY name"))
    for r in rows:
        r["logins"] = sorted(bindings.get(r["name"], set()))
    return rows


def add_user(store: Store, name: str, role: str, *, by: str | None = None, logins: list[str] | None = None) -> User:
    """Add a local profile (bound to `logins`, if given). Once a maintainer exists, only a maintainer may add users."""
    if role not in ROLES:
        raise ReviewError(f"role must be one of {', '.join(ROLES)}, not {role!r}")
    if not name or len(name) > 64 or not name.replace("-", "").replace("_", "").replace(".", "").isalnum():
        raise ReviewError(f"user name {name!r}: letters, digits, '-', '_' and '.' only, at most 64")
    with store.transaction() as db:
        has_maintainer = db.execute("SELECT 1 FROM users WHERE role = 'maintainer' LIMIT 1").fetchone()
        actor = None
        if has_maintainer:
            actor = get_user(store, by)
            workflow().require("users_add", actor.role, actor.name)
        if db.execute("SELECT 1 FROM users WHERE name = ?", [name]).fetchone():
            raise ReviewError(f"user {name!r} exists already")
        db.execute("INSERT INTO users (name, role, created) VALUES (?, ?, ?)", [name, role, now()])
        record_event(store, actor.name if actor else None, "user_add", after=role, detail={"name": name})
        for login in logins or []:
            _bind(store, actor.name if actor else name, name, login, bound=True)
        _refuse_lockout(store, actor.name if actor else name)
    return User(name, role)


def bind_login(store: Store, name: str, login: str, *, by: str | None, bound: bool = True) -> None:
    """A maintainer binds (or unbinds) an OS login to a profile. The first binding of a store must leave the
    maintainer making it able to act (their own profile bound to their own login), so nobody locks the
    store's maintainers out by accident."""
    with store.transaction():
        actor = get_user(store, by)
        workflow().require("users_add", actor.role, actor.name)
        person = find_user(store, name)
        _bind(store, actor.name, person.name, login, bound=bound)
        _refuse_lockout(store, actor.name)


def _refuse_lockout(store: Store, actor: str) -> None:
    """Inside the change's transaction: refuse a binding change after which the person making it could no
    longer act (the store binds logins, and theirs is not bound to their profile)."""
    bindings = login_bindings(store)
    me = os_login()
    if bindings and me not in bindings.get(actor, set()):
        raise ReviewError(
            f"this would lock you out: OS login {me!r} would not be bound to {actor!r}; "
            f"bind yourself first: reviewer users bind {actor} --login {me} --user {actor}"
        )


def _bind(store: Store, actor: str, name: str, login: str, *, bound: bool) -> None:
    login = login.strip()
    if not login or len(login) > 256:
        raise ReviewError(f"login {login!r}: an OS account name, 1-256 characters")
    held = login in login_bindings(store).get(name, set())
    if held == bound:
        raise ReviewError(f"login {login!r} is {'already' if bound else 'not'} bound to {name!r}")
    store.db.execute(
        "INSERT INTO user_logins (user, login, bound, by, at) VALUES (?, ?, ?, ?, ?)",
        [name, login, int(bound), actor, now()],
    )
    record_event(
        store, actor, "user_bind" if bound else "user_unbind", after=login, detail={"name": name, "login": login}
    )


# ----------------------------------------------------------------------------- events


def record_event(
    store: Store,
    user: str | None,
    action: str,
    *,
    bank: str | None = None,
    item: int | None = None,
    version: int | None = None,
    before: str | None = None,
    after: str | None = None,
    detail: dict[str, Any] | None = None,
) -> int:
    """Append one event; call inside the transaction of the change it records."""
    conn = store.db.conn
    if not conn.in_transaction:
        raise RuntimeError("events are written in the transaction of their change")
    prev = (
        (store.chain_head,)
        if store.chain_head
        else conn.execute("SELECT hash FROM events ORDER BY id DESC LIMIT 1").fetchone()
    )
    if store.pending_seals:  # the decisions of this change, sealed into the chain by this event
        detail = {**(detail or {}), "seals": {str(k): v for k, v in store.pending_seals.items()}}
        store.pending_seals.clear()
    row = {
        "at": now(),
        "user": user,
        "action": action,
        "bank": bank,
        "item": item,
        "version": version,
        "before": before,
        "after": after,
        "detail": dumps(detail),
        "tool_version": __version__,
    }
    row["hash"] = sha256_text((prev[0] if prev else GENESIS) + "\n" + dumps(row))
    store.chain_head = row["hash"]
    cur = conn.execute(
        "INSERT INTO events (at, user, action, bank, item, version, before, after, detail, tool_version, hash) "
        "VALUES (:at, :user, :action, :bank, :item, :version, :before, :after, :detail, :tool_version, :hash)",
        row,
    )
    return int(cur.lastrowid)


def write_decision(
    store: Store,
    item: Item,
    user: str,
    decision: Decision,
    *,
    stage: int,
    action: str | None,
    before: str | None = None,
    detail: dict[str, Any] | None = None,
) -> int:
    """Append one decision on the item's current version and, unless `action` is None (the caller's own
    event covers it), its event; call inside a transaction. Returns the decision id.

    `decision.created` is the time the decision was made when that was elsewhere (a review package's decision
    merged on import); default now. In a review package, the decision is signed in the same transaction.
    """
    d = decision
    cur = store.db.execute(
        "INSERT INTO decisions (item, version, user, stage, verdict, reasons, comment, correction, rationale, view, "
        "seconds, retracts, created, confidence) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [
            item.id,
            item.version,
            user,
            stage,
            d.verdict,
            json.dumps(list(d.reasons)),
            d.comment,
            dumps(d.correction) if d.correction is not None else None,
            d.rationale,
            dumps(d.view) if d.view is not None else None,
            d.seconds,
            d.retracts,
            d.created or now(),
            d.confidence,
        ],
    )
    decision_id = int(cur.lastrowid)
    store.pending_seals[decision_id] = _seals(store, "WHERE d.id = ?", [decision_id])[decision_id]
    if store.db.execute("SELECT 1 FROM packages WHERE kind = 'self'").fetchone():
        sign_decision(store, decision_id)
    if action is not None:
        record_event(
            store,
            user,
            action,
            bank=item.bank,
            item=item.id,
            version=item.version,
            before=before,
            after="retracted" if d.verdict == "retract" else d.verdict,
            detail={"decision": decision_id, "stage": stage, **(detail or {})},
        )
    return decision_id


def _seals(store: Store, where: str = "", args: list[Any] | None = None) -> dict[int, str]:
    """decision id -> its seal: sha256 of its own fields (the columns a package signs, signing.DECISION_COLS) and of
    the text of the item version it judged."""
    cols = ", ".join(f"d.{c}" for c in DECISION_COLS)
    rows = store.db.execute(
        f"SELECT {cols}, v.json FROM decisions d LEFT JOIN item_versions v ON v.item = d.item "
        f"AND v.version = d.version {where} ORDER BY d.id",
        args or [],
    ).fetchall()
    out = {}
    for r in rows:
        body = dict(zip(DECISION_COLS, r[: len(DECISION_COLS)], strict=True))
        body["item_version_sha256"] = sha256_text(r[-1]) if r[-1] is not None else None
        out[int(r[0])] = sha256_text(dumps(body) or "")
    return out


def verify_decisions(store: Store) -> tuple[int, int]:
    """(decisions sealed and intact, decisions older than seals); ReviewError naming the first decision that
    no longer matches its seal in the log, was added without one, or is gone."""
    logged: dict[int, tuple[int, str]] = {}
    for event_id, detail in store.db.execute(
        "SELECT id, detail FROM events WHERE detail LIKE '%\"seals\"%' ORDER BY id"
    ).fetchall():
        for decision, seal in (json.loads(detail).get("seals") or {}).items():
            logged[int(decision)] = (event_id, seal)
    actual = _seals(store)
    first_sealed = min(logged, default=None)
    for decision_id, seal in actual.items():
        if decision_id in logged:
            event_id, expected = logged[decision_id]
            if seal != expected:
                raise ReviewError(
                    f"decision {decision_id}: its fields or the item version it judged no longer match the seal in "
                    f"event {event_id} (edited behind the tool's back)"
                )
        elif first_sealed is not None and decision_id > first_sealed:
            raise ReviewError(f"decision {decision_id}: not in the audit log (added behind the tool's back)")
    missing = sorted(set(logged) - set(actual))
    if missing:
        raise ReviewError(
            f"decision {missing[0]}: sealed in event {logged[missing[0]][0]} but no longer in the store (deleted)"
        )
    unsealed = sum(1 for d in actual if d not in logged)
    return len(actual) - unsealed, unsealed


def verify_chain(store: Store) -> tuple[int, str]:
    """(event count, last hash); ReviewError at the first event whose hash does not follow."""
    prev = GENESIS
    n = 0
    cols = "at, user, action, bank, item, version, before, after, detail, tool_version"
    for r in store.db.query(f"SELECT id, {cols}, hash FROM events ORDER BY id"):
        body = {k: r[k] for k in cols.split(", ")}
        if sha256_text(prev + "\n" + dumps(body)) != r["hash"]:
            raise ReviewError(f"event {r['id']}: hash does not follow the event before it (the log was altered)")
        prev = r["hash"]
        n += 1
    return n, prev


def verify_log(store: Store) -> dict[str, Any]:
    """The whole audit check: SQLite's integrity check, the event chain, every decision against its seal.
    ReviewError at the first thing that does not hold."""
    problems = [r[0] for r in store.db.execute("PRAGMA integrity_check").fetchall()]
    if problems != ["ok"]:
        shown = "; ".join(problems[:3]) + (f"; and {len(problems) - 3} more" if len(problems) > 3 else "")
        raise ReviewError(f"the store file is damaged (SQLite integrity check: {shown})")
    events, head = verify_chain(store)
    sealed, unsealed = verify_decisions(store)
    return {"events": events, "head": head, "decisions_sealed": sealed, "decisions_before_seals": unsealed}


# ----------------------------------------------------------------------------- items


@dataclass(frozen=True)
class Item:
    id: int
    bank: str
    qid: str
    state: str
    version: int
    gold: bool
    audit: bool
    reference_source: str

    @property
    def key(self) -> str:
        return f"{self.bank}/{self.qid}"


_ITEM_COLS = "id, bank, qid, state, current_version, gold, audit, reference_source"


def _item(row: Any) -> Item:
    return Item(row[0], row[1], row[2], row[3], row[4], bool(row[5]), bool(row[6]), row[7])


def item_by_id(store: Store, item_id: int) -> Item:
    row = store.db.execute(f"SELECT {_ITEM_COLS} FROM items WHERE id = ?", [item_id]).fetchone()
    if row is None:
        raise ReviewError(f"no item with id {item_id}")
    return _item(row)


def items_of(store: Store, bank: str, *, state: str | None = None) -> list[Item]:
    """The reviewed (not gold) items of a bank in line order, optionally in one state: one query."""
    where, args = ("AND state = ?", [bank, state]) if state else ("", [bank])
    rows = store.db.execute(
        f"SELECT {_ITEM_COLS} FROM items WHERE bank = ? AND gold = 0 {where} ORDER BY position", args
    ).fetchall()
    return [_item(r) for r in rows]


def find_item(store: Store, key: str, bank: str | None = None) -> Item:
    """An item by 'BANK/QID', or by QID alone when it is in one bank only."""
    if "/" in key and bank is None:
        bank, key = key.split("/", 1)
    if bank is not None:
        rows = store.db.execute(f"SELECT {_ITEM_COLS} FROM items WHERE bank = ? AND qid = ?", [bank, key]).fetchall()
    else:
        rows = store.db.execute(f"SELECT {_ITEM_COLS} FROM items WHERE qid = ?", [key]).fetchall()
    if not rows:
        raise ReviewError(f"no item {key!r}" + (f" in bank {bank!r}" if bank else "") + " in the store")
    if len(rows) > 1:
        banks = ", ".join(sorted(r[1] for r in rows))
        raise ReviewError(f"item {key!r} is in several banks ({banks}): name it as BANK/{key}")
    return _item(rows[0])


def question(store: Store, item_id: int, version: int) -> dict[str, Any]:
    row = store.db.execute(
        "SELECT json FROM item_versions WHERE item = ? AND version = ?", [item_id, version]
    ).fetchone()
    return json.loads(row[0])


def set_state(store: Store, item: Item, action: str, role: str, user: str | None, **event: Any) -> str:
    """Move an item along a legal transition, with its event; returns the new state."""
    target = workflow().target(action, item.state, role, item=item.key, reason=event.get("detail", {}).get("reason"))
    store.db.execute("UPDATE items SET state = ? WHERE id = ?", [target, item.id])
    record_event(
        store,
        user,
        action,
        bank=item.bank,
        item=item.id,
        version=item.version,
        before=item.state,
        after=target,
        **event,
    )
    return target


def frozen_in(store: Store, item: Item) -> str | None:
    """The latest frozen bank version that holds this item, if any."""
    row = store.db.execute(
        "SELECT b.version FROM bank_items m JOIN banks b ON b.name = m.bank AND b.version = m.version "
        "WHERE m.item = ? AND b.frozen = 1 ORDER BY b.imported_at DESC, b.rowid DESC LIMIT 1",
        [item.id],
    ).fetchone()
    return row[0] if row else None


def require_bank(store: Store, bank: str) -> None:
    if not store.db.execute("SELECT 1 FROM items WHERE bank = ? LIMIT 1", [bank]).fetchone():
        # the name is the bank manifest's, not the folder it was imported from: say which names there are
        names = [r[0] for r in store.db.execute("SELECT DISTINCT bank FROM items ORDER BY bank LIMIT 6")]
        if not names:
            raise ReviewError(
                f"no bank named {bank!r} in the store; it has none yet: import one with `reviewer bank import DIR`"
            )
        listed = ", ".join(names[:5]) + (" ..." if len(names) > 5 else "")
        raise ReviewError(f"no bank named {bank!r} in the store; its banks: {listed}")
