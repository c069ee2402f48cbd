"""What the code of a memory's anchors looks like now against when they were bound, as
one text (the `moor.showDiff` command). Runs in the engine worker thread.

Plain data in (the workspace root, a workspace-relative memory path, the reference as
written in `about:`), plain data out (the text, and the file it was written to). The text
is never empty: per anchor, a comment header

    # memories/retry.md — src/a.py#g: bound <address> → now <address>

then the unified diff of its normalised source, or a `# moor: …` line saying why there is
none (nothing changed, not bound yet, gone, no snapshot in this clone's journal, …).
Nothing is written to moor.lock or the journal; the text is saved under the workspace's
local state folder (`.moor/diffs/`) only when asked to.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from moor_engine.memory.history import AnchorDiff, memory_diff
from moor_engine.workspace.workspace import STATE_DIR
from moor_store.inside import write_inside
from moor_store.refusal import RefusalError

from moor_lsp.engine import EngineProblem, open_session

DIFFS_DIR = "diffs"


@dataclass(frozen=True)
class DiffText:
    memory: str  # workspace-relative
    text: str
    file: Path | None  # where it was saved, if it was


def diff_file(root: Path, memory_path: str) -> Path:
    """`.moor/diffs/<memory path with / replaced by __>.diff`."""
    return root / STATE_DIR / DIFFS_DIR / (memory_path.replace("/", "__") + ".diff")


def render(memory_path: str, diffs: list[AnchorDiff]) -> str:
    blocks = []
    for diff in diffs:
        bound = diff.bound_address or "(not bound)"
        now = diff.address or "(not found)"
        block = f"# {memory_path} — {diff.ref}: bound {bound} → now {now}\n"
        if diff.diff:
            block += diff.diff if diff.diff.endswith("\n") else diff.diff + "\n"
        else:
            block += f"# moor: {diff.ref}: {diff.note or 'nothing changed since it was bound'}\n"
        blocks.append(block)
    if not blocks:
        return f"# moor: {memory_path} has no references in about: to compare\n"
    return "\n".join(blocks)


def diff_since_bound(
    root: Path,
    memory_path: str,
    ref: str | None,
    save: bool,
    buffers: Mapping[str, bytes] | None = None,
) -> DiffText:
    """The diff of `ref` (every anchor when None) of the memory since it was bound, with
    the code of unsaved editor `buffers` as the editor has it; with `save`, also written to
    `diff_file` (replacing an earlier one)."""
    with open_session(root, buffers) as session:
        try:
            path, diffs = memory_diff(session, str(root / memory_path))
        except RefusalError as error:
            raise EngineProblem(str(error)) from error
        if ref is not None:
            diffs = [d for d in diffs if d.ref == ref]
            if not diffs:
                raise EngineProblem(f"{path} has no reference {ref!r} in about:")
        if save:
            session.observer.flush()  # the observation cache; never in read-only mode
    text = render(path, diffs)
    if not save:
        return DiffText(path, text, None)
    target = diff_file(root, path)
    try:
        # Never through a planted link: `.moor/diffs/x.diff -> ~/.bashrc` is replaced, not
        # written into, and a `.moor` leading outside is refused.
        write_inside(root, target.relative_to(root).as_posix(), text.encode("utf-8"), own=True)
    except OSError as error:
        raise EngineProblem(f"could not save the diff: {error}") from error
    return DiffText(path, text, target)
