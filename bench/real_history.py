"""Replay a public repository's real history against memories bound at an older commit, as a
new user would: `moor init`, one memory per reference, `moor bind`, then for every commit on
the first-parent line that touches a bound file, check out the commit and run `moor check`.

Each verdict is set beside a textual oracle from git itself: did the commit's diff touch the
lines the reference spanned just before it (`moor symbols` gives the span)? Agreement is
counted; every disagreement is printed with its commit so a person reads the diff and labels
it (an equivalent spelling, a comment-only edit, a real miss). After each step the replay
acts as a user: a drifted memory is reaffirmed, a moved one followed, a gone one left gone.

Nothing of the repository is kept in moor's tree: the specs name references only, and the
code is read at run time from a git directory already on the machine (a shared clone in a
temporary folder; the git directory itself is never written).

    .venv/bin/python bench/real_history.py [NAME…] [--mirror DIR] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

MOOR = str(Path(sys.executable).with_name("moor"))
MIRROR = Path("/work/.mirror")
_J = "src/main/java/org/jsoup/"  # jsoup's sources


@dataclass(frozen=True)
class Spec:
    repo: str  # owner/name
    start: str  # commit the memories are written at
    end: str  # last commit replayed
    refs: tuple[str, ...]  # one memory per reference


SPECS: dict[str, Spec] = {
    "click": Spec(
        "pallets/click",
        "1f0e6a2ecd3dd95c22290836981a38922c192596",
        "2c8cd3ac",
        (
            "src/click/core.py#Context.__init__",
            "src/click/core.py#Context.invoke",
            "src/click/core.py#Command.main",
            "src/click/core.py#Command.parse_args",
            "src/click/core.py#Group.resolve_command",
            "src/click/core.py#Parameter.consume_value",
            "src/click/core.py#Parameter.process_value",
            "src/click/core.py#Option.__init__",
            "src/click/core.py#Option.get_default",
            "src/click/core.py#Argument.make_metavar",
            "src/click/termui.py#prompt",
            "src/click/termui.py#confirm",
            "src/click/termui.py#progressbar",
            "src/click/termui.py#echo_via_pager",
            "src/click/_termui_impl.py#ProgressBar.__init__",
            "src/click/_termui_impl.py#pager",
            "src/click/shell_completion.py#ShellComplete.get_completions",
            "src/click/shell_completion.py#_resolve_context",
            "src/click/types.py#Choice.convert",
            "src/click/utils.py#echo",
        ),
    ),
    "zustand": Spec(
        "pmndrs/zustand",
        "15635ab78988425628c1c7e10c8dc456398b1ad0",
        "f094eebe",
        (
            "src/middleware/persist.ts#StorageValue.state",
            "src/middleware/persist.ts#StorageValue.version",
            "src/middleware/persist.ts#PersistOptions.version",
            "src/middleware/persist.ts#PersistOptions.migrate",
            "src/middleware/persist.ts#PersistOptions.merge",
            "src/middleware/persist.ts#createJSONStorage",
            "src/middleware/persist.ts#StorePersist.persist.rehydrate",
            "src/middleware/persist.ts#oldImpl",
            "src/middleware/persist.ts#newImpl",
            "src/middleware/devtools.ts#DevtoolsOptions.name",
            "src/middleware/devtools.ts#DevtoolsOptions.enabled",
            "src/middleware/devtools.ts#Message.payload",
            "src/middleware/devtools.ts#extractConnectionInformation",
            "src/middleware/devtools.ts#devtoolsImpl",
            "src/react.ts#useStore(S)",
            "src/react.ts#createImpl",
            "src/vanilla.ts#StoreApi.setState",
            "src/vanilla.ts#StoreApi.destroy",
            "src/vanilla.ts#createStoreImpl",
            "src/traditional.ts#createWithEqualityFnImpl",
            "src/vanilla/shallow.ts#shallow",
        ),
    ),
    "jsoup": Spec(
        "jhy/jsoup",
        "ac28afe6e5bf96d39fd17c3e0a797a7585e1958c",
        "46b62086",
        (
            _J + "parser/HtmlTreeBuilder.java#HtmlTreeBuilder.process(Token)",
            _J + "parser/HtmlTreeBuilder.java#HtmlTreeBuilder.TagSearchSpecial",
            _J + "parser/HtmlTreeBuilder.java#HtmlTreeBuilder.MaxScopeSearchDepth",
            _J + "parser/HtmlTreeBuilder.java#HtmlTreeBuilder.initialiseParse",
            _J + "parser/HtmlTreeBuilder.java#HtmlTreeBuilder.framesetOk(boolean)",
            _J + "helper/W3CDom.java#W3CDom.convert(Element, Document)",
            _J + "helper/W3CDom.java#W3CDom.W3CBuilder.head",
            _J + "helper/W3CDom.java#W3CDom.W3CBuilder.copyAttributes",
            _J + "helper/W3CDom.java#W3CDom.fromJsoup(Element)",
            _J + "helper/W3CDom.java#W3CDom.namespaceAware(boolean)",
            _J + "parser/XmlTreeBuilder.java#XmlTreeBuilder.insertElementFor",
            _J + "parser/XmlTreeBuilder.java#XmlTreeBuilder.processNamespaces",
            _J + "parser/XmlTreeBuilder.java#XmlTreeBuilder.defaultMaxDepth",
            _J + "parser/XmlTreeBuilder.java#XmlTreeBuilder.popStackToClose",
            _J + "parser/XmlTreeBuilder.java#XmlTreeBuilder.insertCommentFor",
            _J + "helper/HttpConnection.java#HttpConnection.connect(String)",
            _J + "helper/HttpConnection.java#HttpConnection.data(String, String, InputStream)",
            _J + "helper/HttpConnection.java#HttpConnection.Request.proxy(String, int)",
            _J + "helper/HttpConnection.java#HttpConnection.DEFAULT_UA",
            _J + "nodes/Element.java#Element.select(String)",
            _J + "nodes/Element.java#Element.tagName(String, String)",
            _J + "nodes/Element.java#Element.id(String)",
        ),
    ),
    "cli": Spec(
        "urfave/cli",
        "39c9ea06838b2df8747ea8ab3cccc41df585fb23",
        "1305a082",
        (
            "command.go#Command.Name",
            "command.go#Command.Flags",
            "command.go#Command.StopOnNthArg",
            "command.go#Command.Command",
            "command.go#Command.VisibleFlags",
            "command.go#Command.handleExitCoder",
            "command.go#Command.checkRequiredFlags",
            "command_run.go#Command.Run",
            "command_run.go#Command.run",
            "command_run.go#Command.parseArgsFromStdin",
            "help.go#ShowCommandHelp",
            "help.go#DefaultCompleteWithFlags",
            "help.go#printFlagSuggestions",
            "help.go#helpCommandAction",
            "help.go#wrapLine",
            "help.go#checkShellCompleteFlag",
            "command_parse.go#Command.parseFlags",
            "command_setup.go#Command.setupDefaults",
            "command_setup.go#Command.setupSubcommand",
            "flag_impl.go#FlagBase.Set",
            "flag_impl.go#FlagBase.PreParse",
            "flag_impl.go#FlagBase.Validator",
            "flag_impl.go#ValueCreator.ToString",
        ),
    ),
    "anyhow": Spec(
        "dtolnay/anyhow",
        "20a9ff7a3ed56bb2e1cfbbf6cf453f3e656bdbc2",
        "1dbe186",
        (
            "src/lib.rs#Error",
            "src/lib.rs#Context.context",
            "src/lib.rs#Chain",
            "src/lib.rs#__private.format_err",
            "src/lib.rs#StdError",
            "src/error.rs#Error.new",
            "src/error.rs#Error.msg",
            "src/error.rs#Error.construct",
            "src/error.rs#Error.backtrace",
            "src/error.rs#Error.downcast",
            "src/error.rs#Error.fmt(Debug)",
            "src/error.rs#Error(Drop)",
            "src/error.rs#ErrorVTable",
            "src/error.rs#ErrorVTable.object_backtrace",
            "src/error.rs#object_drop",
            "src/error.rs#context_downcast",
            "build.rs#main",
            "build.rs#compile_probe",
            "src/backtrace.rs#capture.BacktraceStatus.Captured",
            "src/backtrace.rs#capture.Capture.frames",
            "src/ensure.rs#render",
            "src/ensure.rs#Buf.write_str",
            "src/context.rs#Option.with_context",
        ),
    ),
}


def run(*args: str, cwd: Path, ok: tuple[int, ...] = (0,)) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(args, cwd=cwd, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    if done.returncode not in ok:
        raise RuntimeError(f"{' '.join(args)} exited {done.returncode}: {done.stderr.strip()}")
    return done


def git(ws: Path, *args: str) -> str:
    return run("git", "-c", "core.hooksPath=/dev/null", *args, cwd=ws).stdout


def slug(ref: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", ref.lower()).strip("-")[:80]


def spans(ws: Path, path: str) -> dict[str, tuple[int, int]]:
    """Every reference `moor symbols` gives for `path`, with its first and last line."""
    if not (ws / path).is_file():
        return {}
    done = run(MOOR, "symbols", path, "--format", "json", cwd=ws, ok=(0, 1, 2))
    if done.returncode != 0:
        return {}
    rows = json.loads(done.stdout)["symbols"]
    return {r["ref"]: (int(r["line"]), int(r["end_line"])) for r in rows}


_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+\d+(?:,\d+)? @@.*$", re.M)
_COMMENT = re.compile(r"^\s*(//|/\*|\*|\*/|$)")
_PY_COMMENT = re.compile(r"^\s*(#|$)")  # elsewhere `#` starts an attribute (`#[cfg]`)


def touched(ws: Path, old: str, new: str, path: str, span: tuple[int, int]) -> str:
    """How the diff old..new of `path` changes the lines of `span` (old side), whitespace
    ignored: "no", "comment" (only comment or blank lines) or "code"."""
    diff = git(ws, "diff", "-U0", "-w", "--no-renames", old, new, "--", path)
    heads = list(_HUNK.finditer(diff))
    found = "no"
    for i, m in enumerate(heads):
        first, count = int(m[1]), int(m[2] if m[2] is not None else 1)
        # a pure insertion (count 0) sits after line `first`: inside only if strictly within
        inside = (
            span[0] <= first < span[1]
            if count == 0
            else first <= span[1] and first + count - 1 >= span[0]
        )
        if not inside:
            continue
        stop = heads[i + 1].start() if i + 1 < len(heads) else len(diff)
        body = [ln[1:] for ln in diff[m.end() + 1 : stop].splitlines() if ln[:1] in "+-"]
        comment = _PY_COMMENT if path.endswith(".py") else _COMMENT
        if any(not comment.match(ln) for ln in body):
            return "code"
        found = "comment"
    return found


@dataclass
class Row:
    commit: str
    ref: str
    verdict: str  # moor's anchor state
    touched: str  # the diff's oracle: "no", "comment" or "code"
    note: str = ""


@dataclass
class Result:
    name: str
    spec: Spec
    commits: int = 0
    steps: int = 0
    memories: int = 0
    unbound: list[str] = field(default_factory=list)
    rows: list[Row] = field(default_factory=list)


def replay(name: str, spec: Spec, mirror: Path) -> Result:
    git_dir = mirror / spec.repo.replace("/", "+") / "repo"
    res = Result(name, spec)
    with tempfile.TemporaryDirectory(prefix=f"moor-trial-{name}-") as tmp:
        ws = Path(tmp) / "ws"
        run("git", "clone", "-q", "--shared", "--no-checkout", str(git_dir), str(ws), cwd=Path(tmp))
        git(ws, "checkout", "-q", "--detach", spec.start)
        run(MOOR, "init", cwd=ws)
        keys = {ref: f"{n:02d}-{slug(ref)}" for n, ref in enumerate(spec.refs)}
        for ref in spec.refs:
            body = f"---\nabout:\n  - {ref}\n---\n# About {ref}\n\nA note.\n"
            body += "\n## When this changes, ask\n- Is the note still true?\n"
            (ws / "memories" / f"{keys[ref]}.md").write_text(body)
        bound = run(MOOR, "bind", "--format", "json", cwd=ws, ok=(0, 1))
        for refusal in json.loads(bound.stdout).get("refused", []):
            res.unbound.append(f"{refusal.get('ref')}: {refusal.get('message')}")
        live = {
            keys[r]: r for r in spec.refs if not any(u.startswith(r + ":") for u in res.unbound)
        }
        res.memories = len(live)
        line = git(ws, "rev-list", "--first-parent", "--reverse", f"{spec.start}..{spec.end}")
        commits = line.split()
        res.commits = len(commits)
        gone: set[str] = set()
        prev = spec.start
        for commit in commits:
            files = {r.split("#")[0] for r in live.values()}
            changed = set(git(ws, "diff", "--name-only", prev, commit, "--", *files).split())
            if not changed:
                prev = commit
                continue
            before = {f: spans(ws, f) for f in changed}
            git(ws, "checkout", "-f", "-q", "--detach", commit)
            res.steps += 1
            report = json.loads(run(MOOR, "check", "--format", "json", cwd=ws, ok=(0, 1)).stdout)
            states = {
                Path(m["path"]).stem: m["anchors"][0] if m["anchors"] else {"state": m["state"]}
                for m in report["memories"]
            }
            for key, ref in list(live.items()):
                path = ref.split("#")[0]
                if path not in changed or key in gone:
                    continue
                anchor = states.get(key, {"state": "current"})
                span = before[path].get(ref)
                hit = "code" if span is None else touched(ws, prev, commit, path, span)
                verdict = str(anchor.get("state", "current"))
                note = str(anchor.get("moved_to") or anchor.get("reason") or "")
                if verdict != "current" or hit != "no":
                    res.rows.append(Row(commit[:10], ref, verdict, hit, note))
                mem = f"memories/{key}.md"
                if verdict == "drifted":
                    run(MOOR, "reaffirm", mem, "--why", "trial", cwd=ws, ok=(0, 1))
                elif verdict == "moved":
                    run(MOOR, "follow", mem, "--why", "trial", cwd=ws, ok=(0, 1))
                    new = anchor.get("moved_to")
                    if isinstance(new, str) and new:
                        live[key] = new
                elif verdict != "current":
                    gone.add(key)
            prev = commit
        shutil.rmtree(ws, ignore_errors=True)
    return res


def summary(res: Result) -> dict[str, object]:
    flagged = [r for r in res.rows if r.verdict != "current"]
    return {
        "name": res.name,
        "repo": res.spec.repo,
        "range": f"{res.spec.start[:8]}..{res.spec.end[:8]}",
        "commits": res.commits,
        "steps": res.steps,
        "memories": res.memories,
        "unbound": res.unbound,
        "flagged": len(flagged),
        "flagged_code": sum(r.touched == "code" for r in flagged),
        "flagged_not_code": [vars(r) for r in flagged if r.touched != "code"],
        "code_not_flagged": [
            vars(r) for r in res.rows if r.touched == "code" and r.verdict == "current"
        ],
        "comment_not_flagged": sum(
            r.touched == "comment" and r.verdict == "current" for r in res.rows
        ),
        "moves": [vars(r) for r in res.rows if r.verdict == "moved"],
        "gone": [vars(r) for r in res.rows if r.verdict not in ("current", "moved", "drifted")],
        "rows": [vars(r) for r in res.rows],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", default=list(SPECS))
    parser.add_argument("--mirror", type=Path, default=MIRROR)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    out = []
    for name in args.names:
        res = replay(name, SPECS[name], args.mirror)
        row = summary(res)
        out.append(row)
        print(json.dumps(row, indent=1), flush=True)
    if args.json:
        args.json.write_text(json.dumps(out, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
