"""The workspace and the checks shared by the real-Neovim and real-Emacs end-to-end tests.

`build` makes a real workspace (a git repository, Python code, four memories, `moor bind`,
then the code changed so that one memory is drifted and one moved) and writes
`scenario.json`, which tells the editor script the paths it opens and the external rewrite
it makes. The editor script drives the editor through the scenario and writes what the
editor showed to a results file; the `check_*` functions read it. Every expectation is
computed here from the files, never copied from an editor's output.

The scenario, in the order the scripts run it:

1. open `drifted.md`, `moved.md` and `external.md`; wait for the first two's diagnostics
   (`external.md` is current: it must have none — the control for step 2);
2. rewrite `src/app.py` from outside the editor (Server.start changed): wait for
   `external.md`'s drifted diagnostic; then `moor reaffirm` it on the command line: wait
   for the diagnostic to go;
3. reaffirm `drifted.md` with a typed reason through the set-up's command
   (`:MoorReaffirm`, `M-x moor-reaffirm`): wait for its diagnostics to go;
4. open `late.md` (after start-up): wait for its diagnostic;
5. ask for the code actions on `late.md`'s and `moved.md`'s diagnostics and execute every
   one: reading ones first, then the reaffirm quick fix (answering the server's question
   with its first choice), then follow; record each answer, the question, and the
   `moved.md` buffer and file right after follow answered;
6. open `wrong.md` (current) and run the code action "Forget memories/wrong.md: it never
   held…" on its first line: answer the server's question with Cancel (the file stays),
   run it again and answer "Write my own reason…", write the reason on the line the server
   puts in the buffer, and run "Forget with the reason written here" on that line: the
   file is gone, tombstoned with that reason, and the line gone from the buffer;
7. rewrite `src/app.py` again (external.md drifted), put reaffirm's reason line in
   `external.md`'s buffer, write the reason there and run "Reaffirm with the reason written
   here": the buffer is left as saved (unmodified, the file's text, the line gone).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from moor_store.lockfile import parse_lock

REPO = Path(__file__).resolve().parents[2]
MOOR = REPO / ".venv" / "bin" / "moor"
REASON = "still holds: checked by the editor end-to-end test"
FORGET_REASON = "never held: forgotten by the editor end-to-end test"

# Größe before the drifted reference on its line: a column the editor must convert
# (UTF-8 bytes in Neovim, characters in Emacs, UTF-16 on the wire).
APP_BOUND = """\
class Größe:
    def version(self):
        return "1"


class Client:
    def send(self, payload):
        return self.transport.write(payload)

    def close(self):
        self.transport.close()


class Server:
    def start(self, port):
        self.port = port
        return self


def helper(values):
    total = 0
    for value in values:
        total += value
    return total
"""
# Client.send and Client.close changed; helper cut out to src/util.py unchanged.
APP_CHANGED = (
    APP_BOUND.replace("return self.transport.write(payload)", "return self.transport.send(payload)")
    .replace("self.transport.close()", "self.transport.shutdown()")
    .split("\n\ndef helper")[0]
    + "\n"
)
UTIL = "def helper(values):" + APP_BOUND.split("def helper(values):")[1]
# What the editor script writes over src/app.py while the editor runs: Server.start changed.
APP_EXTERNAL = APP_CHANGED.replace("self.port = port", "self.port = int(port)")
# What the Neovim script writes over src/app.py later, to reaffirm external.md again with
# a reason written in its buffer.
APP_REASONED = APP_EXTERNAL.replace("self.port = int(port)", "self.port = int(port or 0)")
OWN_REASON = "still holds: reason written in the buffer by the end-to-end test"

MEMORIES = {
    "drifted": '["src/app.py#Größe.version", "src/app.py#Client.send"]',
    "moved": '["src/app.py#helper"]',
    "external": '["src/app.py#Server.start"]',
    "late": '["src/app.py#Client.close"]',
    "wrong": '["src/app.py#Größe.version"]',
}
OPENED_AT_START = ["drifted", "moved", "external"]
# Partial references typed in a new memory, and the line each completes to.
COMPLETED = {
    "src/ut": "  - src/util.py",  # past the first path segment
    "src/app.py#Client.se": "  - src/app.py#Client.send",  # past a `.` in a symbol
}


# What each memory says; wrong.md says something of its own, since forgetting it refuses
# its text everywhere.
SAYS = {"wrong": "Größe.version returns a number."}


def memory_text(name: str, about: str) -> str:
    return textwrap.dedent(
        f"""\
        ---
        about: {about}
        ---
        # {name}

        {SAYS.get(name, "A decision about this code.")}

        ## When this changes, ask
        - Does it still hold?
        """
    )


def memory_path(root: Path, name: str) -> Path:
    return root / "memories" / f"{name}.md"


def git(root: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=e2e", "-c", "user.email=e2e@example.invalid", *args],
        cwd=root,
        check=True,
        capture_output=True,
    )


def moor(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(MOOR), *args],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "NO_COLOR": "1"},
    )


def build(root: Path) -> Path:
    """The workspace at `root`, bound and then changed; returns its `scenario.json`."""
    root.mkdir(parents=True)
    (root / "moor.toml").write_text('memory_roots = ["memories"]\n', encoding="utf-8")
    (root / "src").mkdir()
    (root / "memories").mkdir()
    (root / "src" / "app.py").write_text(APP_BOUND, encoding="utf-8")
    for name, about in MEMORIES.items():
        memory_path(root, name).write_text(memory_text(name, about), encoding="utf-8")
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "code and memories")
    bound = moor(root, "bind")
    assert bound.returncode == 0, f"moor bind failed:\n{bound.stdout}\n{bound.stderr}"
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "bind")
    (root / "src" / "app.py").write_text(APP_CHANGED, encoding="utf-8")
    (root / "src" / "util.py").write_text(UTIL, encoding="utf-8")
    states = check_states(root)
    expected = {
        "drifted": "drifted",
        "moved": "moved",
        "external": "current",
        "late": "drifted",
        "wrong": "current",
    }
    assert states == expected, f"the workspace is not in its starting state: {states}"
    scenario = {
        "root": str(root),
        "moor": str(MOOR),
        "memories": {name: str(memory_path(root, name)) for name in MEMORIES},
        "open_at_start": OPENED_AT_START,
        "app": str(root / "src" / "app.py"),
        "app_external": APP_EXTERNAL,
        "reason": REASON,
        "forget": {
            "title": "Forget memories/wrong.md: it never held…",
            "write_own": "Write my own reason…",
            "written": "Forget with the reason written here",
            "reason": FORGET_REASON,
        },
        "reaffirm_own": {
            "app": APP_REASONED,
            "write_own": "Write my own reason…",
            "written": "Reaffirm with the reason written here",
            "reason": OWN_REASON,
        },
        "completion": list(COMPLETED),
        "results": str(root.parent / "results.json"),
        "timeout": 30,  # seconds per wait: generous for a loaded 2-core machine
    }
    path = root.parent / "scenario.json"
    path.write_text(json.dumps(scenario, ensure_ascii=False, indent=2), encoding="utf-8")
    return path


def check_states(root: Path) -> dict[str, str]:
    """Each memory's state by name, from the real `moor check --format json`."""
    run = moor(root, "check", "--format", "json")
    assert run.returncode in (0, 1), f"moor check exited {run.returncode}: {run.stderr}"
    report = json.loads(run.stdout)
    return {Path(m["path"]).stem: m["state"] for m in report["memories"]}


@dataclass
class EditorRun:
    """One editor's run through the scenario: its results and how long it took."""

    root: Path
    results: dict[str, Any]
    seconds: float
    log: str

    def get(self, key: str) -> Any:
        """What the script recorded under `key`; fails (with why it stopped) if nothing."""
        value = self.results.get(key)
        assert value is not None, f"the editor recorded no {key!r}\n{self.log}"
        return value


def run_editor(cmd: list[str], scenario: Path, timeout: float, env: dict[str, str]) -> EditorRun:
    spec = json.loads(scenario.read_text(encoding="utf-8"))
    results_path = Path(spec["results"])
    results_path.unlink(missing_ok=True)
    print(f"$ {' '.join(cmd)}", flush=True)
    started = time.monotonic()
    done = subprocess.run(
        cmd,
        cwd=spec["root"],
        env={**os.environ, **env, "MOOR_E2E_SCENARIO": str(scenario)},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    seconds = time.monotonic() - started
    log = f"--- stdout\n{done.stdout[-6000:]}\n--- stderr\n{done.stderr[-6000:]}"
    sys.stdout.write(log + "\n")
    print(f"editor run: {seconds:.1f} s", flush=True)
    assert results_path.is_file(), f"{cmd[0]} wrote no results (exit {done.returncode})\n{log}"
    results = json.loads(results_path.read_text(encoding="utf-8"))
    if results.get("fatal"):
        # Each test fails on the first step it needs that the script did not reach.
        log = f"the editor script stopped: {results['fatal']}\n{log}"
        print(log.splitlines()[0], flush=True)
    return EditorRun(Path(spec["root"]), results, seconds, log)


# --- what each test checks ---------------------------------------------------------------


def reference_range(name: str, ref: str) -> tuple[int, int, int]:
    """(line, first column, end column) of `"ref"` (quotes included) in the memory as the
    scenario wrote it, in characters, 0-based: where moor's diagnostic must be."""
    lines = memory_text(name, MEMORIES[name]).split("\n")
    for number, line in enumerate(lines):
        at = line.find(f'"{ref}"')
        if at >= 0:
            return number, at, at + len(ref) + 2
    raise AssertionError(f"{ref} is not in memories/{name}.md")


def diagnostics(run: EditorRun, step: str, name: str) -> list[dict[str, Any]]:
    seen = run.get(step).get(name)
    assert seen is not None, f"the editor recorded nothing for {name} at {step}:\n{run.log}"
    assert isinstance(seen, list)
    return seen


def check_positions(run: EditorRun) -> None:
    start = "start"
    drifted = diagnostics(run, start, "drifted")
    assert [d["code"] for d in drifted] == ["drifted"], drifted
    # The current reference on the same line has none: the one shown is on the right span.
    assert (drifted[0]["line"], drifted[0]["col"], drifted[0]["end_col"]) == reference_range(
        "drifted", "src/app.py#Client.send"
    ), drifted
    moved = diagnostics(run, start, "moved")
    assert [d["code"] for d in moved] == ["moved"], moved
    assert (moved[0]["line"], moved[0]["col"], moved[0]["end_col"]) == reference_range(
        "moved", "src/app.py#helper"
    ), moved
    assert "src/util.py#helper" in moved[0]["message"], moved


def check_external_change(run: EditorRun) -> None:
    before = diagnostics(run, "start", "external")
    assert before == [], f"external.md had diagnostics before the rewrite: {before}"
    after = diagnostics(run, "external", "external")
    assert [d["code"] for d in after] == ["drifted"], after
    assert (after[0]["line"], after[0]["col"]) == reference_range(
        "external", "src/app.py#Server.start"
    )[:2]


def check_cli_reaffirm(run: EditorRun) -> None:
    answer = run.get("cli_reaffirm")
    assert answer["code"] == 0, answer
    assert [d["code"] for d in diagnostics(run, "external", "external")] == ["drifted"]
    assert diagnostics(run, "cli_reaffirmed", "external") == []


def check_reaffirm(run: EditorRun) -> None:
    answer = run.get("reaffirm")
    assert not answer["error"], f"the reaffirm with a reason failed: {answer}"
    assert "memories/drifted.md: reaffirmed" in answer["message"], answer
    assert diagnostics(run, "reaffirmed", "drifted") == []
    assert check_states(run.root)["drifted"] == "current"
    log = moor(run.root, "log", "memories/drifted.md")
    assert REASON in log.stdout, log.stdout


def check_late_open(run: EditorRun) -> None:
    late = diagnostics(run, "late", "late")
    assert [d["code"] for d in late] == ["drifted"], late
    assert (late[0]["line"], late[0]["col"]) == reference_range("late", "src/app.py#Client.close")[
        :2
    ]


def actions(run: EditorRun) -> list[dict[str, Any]]:
    executed = run.get("actions")
    assert isinstance(executed, list) and executed, f"no code action was executed:\n{run.log}"
    return executed


def check_actions_other_than_reaffirm(run: EditorRun) -> None:
    executed = actions(run)
    commands = {a["command"] for a in executed}
    # What moor offers on a drifted and a moved reference, each at least once.
    assert {"moor.follow", "moor.showDiff", "moor.showCode"} <= commands, executed
    failed = [a for a in executed if a["command"] != "moor.reaffirm" and a.get("error")]
    assert not failed, f"code actions answered errors: {failed}"


def check_follow_diagnostics(run: EditorRun) -> None:
    follow = [a for a in actions(run) if a["command"] == "moor.follow"]
    assert len(follow) == 1 and not follow[0].get("error"), follow
    assert diagnostics(run, "followed", "moved") == []
    text = memory_path(run.root, "moved").read_text(encoding="utf-8")
    assert '"src/util.py#helper"' in text, text
    assert check_states(run.root)["moved"] == "current"


def check_reaffirm_quick_fix(run: EditorRun, asked: bool = True) -> None:
    """`asked`: the server asks the reason (a client that says it can be asked); else the
    prepared reasons are the actions themselves and nothing is asked (eglot)."""
    reaffirm = [a for a in actions(run) if a["command"] == "moor.reaffirm"]
    assert reaffirm, f"the reaffirm quick fix was not offered: {actions(run)}"
    assert not reaffirm[0].get("error"), f"the reaffirm quick fix failed: {reaffirm[0]}"
    questions = [q for q in run.results.get("questions") or [] if "late.md" in q["message"]]
    if asked:
        assert questions, f"the server asked no question (showMessageRequest): {run.results}"
        titles = questions[0]["titles"]
        assert len(titles) >= 4, titles  # prepared reasons, then write my own, then cancel
        assert titles[-2].startswith("Write my own reason"), titles
        assert titles[-1] == "Cancel", titles
    else:
        assert not questions, f"the person was asked: {questions}"
        offered = [o["title"] for o in run.get("offered") if o["memory"] == "late"]
        titles = [t.removeprefix("Reaffirm: ") for t in offered if t.startswith("Reaffirm: ")]
        assert len(titles) >= 2 and reaffirm[0]["title"] == "Reaffirm: " + titles[0], offered
    assert diagnostics(run, "quick_reaffirmed", "late") == []
    assert check_states(run.root)["late"] == "current"
    log = moor(run.root, "log", "memories/late.md")
    assert titles[0] in log.stdout, log.stdout


def check_follow_buffer(run: EditorRun) -> None:
    buffer = run.get("followed_buffer")
    disk = memory_path(run.root, "moved").read_text(encoding="utf-8")
    assert '"src/util.py#helper"' in buffer, f"the open buffer still shows the old text:\n{buffer}"
    assert buffer == disk, f"buffer and file disagree:\n{buffer}\n---\n{disk}"
    # Left as saved: nothing for the person to save, and saving it warns of nothing.
    assert run.get("followed_modified") is False, "follow left the buffer modified"
    assert run.get("followed_write_warning") == "", run.get("followed_write_warning")


def check_forget(run: EditorRun, asked: bool = True, closes: bool = False) -> None:
    """`asked`: as in `check_reaffirm_quick_fix` (False: the action puts the reason line);
    `closes`: the editor closes the forgotten memory's buffer (it takes a DeleteFile edit)."""
    forget = run.get("forget")
    assert not forget.get("error"), f"the forget with the written reason failed: {forget}"
    questions = [q for q in run.results.get("questions") or [] if "wrong.md" in q["message"]]
    if asked:
        # Cancel changed nothing …
        assert forget["cancelled"]["cancelled"] is True, forget
        # … the question offered only the person's own reason …
        [question, *_] = questions
        assert "Forget memories/wrong.md" in question["message"], question
        assert question["titles"] == ["Write my own reason…", "Cancel"], question
        assert "line 4" in forget["asked"]["next"], forget  # under the three-line frontmatter
    else:
        assert not questions, f"the person was asked: {questions}"
    assert forget["kept"] is True, forget  # nothing gone before the reason was given
    assert forget["line"] == "<!-- moor forget because:  -->", forget
    # … and the reason written in the buffer forgot it, with that reason.
    assert forget["done"]["done"], forget
    assert forget["exists"] is False and not memory_path(run.root, "wrong").exists()
    # The control: only that memory went; the others' text is not refused.
    assert check_states(run.root)["late"] == "current"
    [tombstone] = parse_lock((run.root / "moor.lock").read_text(encoding="utf-8")).tombstones
    assert tombstone.path == "memories/wrong.md" and tombstone.reason == FORGET_REASON
    if closes:  # no buffer left for a habitual save to write back
        assert forget["closed"] is True, forget
    else:
        assert forget["after"] == forget["before"], "the reason line stayed in the buffer"


def check_reaffirm_by_reason_line(run: EditorRun) -> None:
    """external.md reaffirmed with the reason written on its reason line: done, and its
    buffer left as saved (unmodified, the file's text), the line gone."""
    reasoned = run.get("reasoned")
    assert not reasoned.get("error") and reasoned["done"]["done"], reasoned
    assert reasoned["line_gone"] is True, reasoned
    assert reasoned["text"] == memory_path(run.root, "external").read_text(encoding="utf-8")
    assert reasoned["modified"] is False, "the reaffirm left the buffer modified"
    # Control: the editor marks a buffer holding the reason line unsaved.
    assert reasoned["modified_with_line"] is True, reasoned
    assert check_states(run.root)["external"] == "current"
    assert OWN_REASON in moor(run.root, "log", "memories/external.md").stdout


def check_code_lenses(run: EditorRun) -> None:
    """Code lenses on src/app.py without a manual refresh: one on each symbol a memory is
    about, on the line of its definition."""
    assert run.results.get("lenses_shown") is True, f"no code lens came:\n{run.log}"
    lines = APP_EXTERNAL.split("\n")
    start = next(i for i, line in enumerate(lines) if line.strip().startswith("def start"))
    assert any(lens["line"] in (start, start - 1) for lens in run.get("lenses")), run.get("lenses")


def check_completion(run: EditorRun) -> None:
    """What the editor's own completion makes of moor's items: the completed line."""
    completion = run.get("completion")
    for typed, line in COMPLETED.items():
        assert line in completion.get(typed, []), (typed, completion)
