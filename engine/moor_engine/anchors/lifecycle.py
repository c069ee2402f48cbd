"""Closing a custom anchor, and superseding it by another (memory:
closing-an-anchor-is-irreversible).

A closure is recorded in moor.lock (`[closed."anchor:NAME"]`: the team's record, reviewed
like code) and journalled (`close`, with its reason). It is irreversible: there is no
command that reopens an anchor, and closing one again is refused. Memories bound to a
closed anchor are `retired`; to a superseded one, `retired` with the successor named.
The closed anchor's command no longer runs.
"""

from __future__ import annotations

from dataclasses import replace

from moor_extractors.model import Failure
from moor_extractors.reference import parse_reference
from moor_store.intent import Change
from moor_store.journal import NewEntry, utc_now
from moor_store.lockfile import Closure, format_lock

from moor_engine.session import Session
from moor_engine.usage import UsageError
from moor_engine.written import Refusal, Written


def close(session: Session, anchor: str, why: str, by: str | None = None) -> Written:
    """Close `anchor` for good, or with `by`, supersede it by that anchor."""
    if not why.strip():
        raise UsageError(f'{"supersede" if by else "close"} needs a reason: --why "..."')
    with session.writing("moor close"):
        return _close(session, anchor, why.strip(), by)


def _known(session: Session, raw: str, what: str, written: Written) -> str | None:
    ref = parse_reference(raw.strip())
    if isinstance(ref, Failure) or ref.anchor is None:
        written.refused.append(
            Refusal("not_an_anchor", f"{what} {raw}: only a custom anchor (anchor:NAME)", ref=raw)
        )
        return None
    canonical = ref.canonical()
    bound = any(canonical in memory.anchors for memory in session.lock.memories.values())
    if ref.anchor not in session.workspace.config.anchors and not bound:
        written.refused.append(
            Refusal(
                "not_found",
                f"{what} {canonical}: neither declared in moor.toml nor bound in moor.lock",
                ref=canonical,
            )
        )
        return None
    return canonical


def _close(session: Session, raw: str, why: str, by_raw: str | None) -> Written:
    written = Written("supersede" if by_raw else "close")
    anchor = _known(session, raw, "close" if by_raw is None else "supersede", written)
    by = _known(session, by_raw, "--by", written) if by_raw is not None else ""
    if anchor is None or by is None:
        return written
    closed = session.lock.closed
    if anchor in closed:
        written.refused.append(
            Refusal(
                "already_closed",
                f"{anchor} was closed on {closed[anchor].at}: {closed[anchor].reason}; "
                "a closed anchor stays closed (declare a new one)",
                ref=anchor,
            )
        )
    elif by == anchor:
        written.refused.append(Refusal("self", f"{anchor} cannot supersede itself", ref=anchor))
    elif by and by in closed:
        written.refused.append(
            Refusal("closed", f"--by {by}: it is closed itself ({closed[by].reason})", ref=by)
        )
    if written.refused:
        return written
    at = utc_now()
    lock = replace(session.lock, closed={**closed, anchor: Closure(anchor, by, why, at)})
    change = Change("moor close")
    change.write("moor.lock", session.lock_bytes, format_lock(lock).encode("utf-8"))
    change.entries = [
        NewEntry(
            "close",
            anchor,
            reason=why,
            code="supersede" if by else "close",
            data={"by": by} if by else None,
        )
    ]
    session.commit(change)
    session.lock = lock
    bound = sorted(p for p, m in lock.memories.items() if anchor in m.anchors)
    said = f"superseded by {by}" if by else "closed"
    written.done.append(f"{anchor}: {said}: {why}")
    written.done.extend(f"{path}: retired with it" for path in bound)
    return written
