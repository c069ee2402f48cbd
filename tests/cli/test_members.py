"""Members a reader sees are anchors of their own, through the real `moor` command (issue
23.2): bind a memory about a field, a property, a variant, an interface method, an impl,
an overload; an edit of a sibling leaves it current, an edit of it drifts it. A moor.lock
written before members were listed stays current."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import Workspace

STORE_TS = """\
export interface PersistOptions<S> {
  name: string
  version?: number
  merge(persisted: unknown, current: S): S
}

export type StorageValue<S> = {
  state: S
  version?: number
}

export enum Mode { Idle, Busy = "busy" }
"""

COMMAND_GO = """\
package cli

type ExitCoder interface {
\terror
\tExitCode() int
}

type Command struct {
\tName  string
\tUsage string
}

type FlagBase[T any, C any] struct {
\tValue T
}

func (f *FlagBase[T, C]) Apply(set int) error {
\treturn nil
}

func after() {}
"""

BACKTRACE_RS = """\
pub enum BacktraceStatus {
    Unsupported,
    Captured,
}

pub struct ErrorImpl {
    backtrace: Option<Backtrace>,
}

impl ErrorImpl {
    pub fn backtrace(&self) -> &Backtrace {
        self.backtrace.as_ref().unwrap()
    }
}

fn after() {}

macro_rules! bail {
    ($msg:literal) => { return Err($msg) };
}
"""

ENSURE_RS = """\
impl<A, B> BothDebug for (A, B) {
    fn __dispatch_ensure(self) -> Error {
        render(&self.0, &self.1)
    }
}

impl<A, B> NotBothDebug for &(A, B) {
    fn __dispatch_ensure(self) -> Error {
        Error::msg()
    }
}
"""

ERROR_RS = """\
impl Error {
    pub fn is(&self) -> bool {
        false
    }
}

impl Debug for Error {
    fn fmt(&self) -> Result {
        Ok(())
    }
}
"""

DOCUMENT_JAVA = """\
package org.jsoup.nodes;

public class Document {
    public Document escapeMode(Entities.EscapeMode mode) { return this; }
    public Elements select(String query) { return null; }
    public Elements select(Evaluator evaluator) { return null; }
}
"""

REGISTRY_PY = """\
from typing import overload


@overload
def parse(text: str) -> int: ...
@overload
def parse(text: bytes) -> int: ...
def parse(text):
    return int(text)


def after():
    pass
"""

POINT_RS = """\
pub struct Point(pub i32, String);

impl Point {
    fn x(&self) -> i32 {
        self.0
    }
}
"""

DICT_TS = """\
export interface Dict {
  [key: string]: number
  readonly [index: number]: string
  size: number
}

export type Flags = { [flag: string]: boolean }
"""

SHAPE_RS = """\
pub enum Shape {
    Circle(f64),
    /// A rectangle.
    Rect(u32, #[serde(default)] String),
    Unit,
}
"""

SOURCES = {
    "src/store.ts": STORE_TS,
    "src/point.rs": POINT_RS,
    "src/shape.rs": SHAPE_RS,
    "src/dict.ts": DICT_TS,
    "cli/command.go": COMMAND_GO,
    "src/backtrace.rs": BACKTRACE_RS,
    "src/error.rs": ERROR_RS,
    "src/ensure.rs": ENSURE_RS,
    "src/Document.java": DOCUMENT_JAVA,
    "src/registry.py": REGISTRY_PY,
}

# Each case: a new kind's reference, an edit of a sibling (stays current), an edit of it.
CASES = [
    (
        "src/store.ts",
        "src/store.ts#PersistOptions.version",
        ("name: string", "name: String"),
        ("version?: number\n  merge", "version?: string\n  merge"),
    ),
    (
        "src/store.ts",
        "src/store.ts#StorageValue.state",
        ("version?: number\n}\n\nexport enum", "version?: bigint\n}\n\nexport enum"),
        ("  state: S\n", "  state: S | null\n"),
    ),
    ("src/store.ts", "src/store.ts#Mode.Busy", ("Idle,", "Idle = 0,"), ('"busy"', '"working"')),
    (
        "cli/command.go",
        "cli/command.go#Command.Name",
        ("Usage string", "Usage []string"),
        ("Name  string", "Name  []byte"),
    ),
    (
        "cli/command.go",
        "cli/command.go#ExitCoder.ExitCode",
        ("\terror\n", "\terror\n\tfmt.Stringer\n"),
        ("ExitCode() int", "ExitCode() int64"),
    ),
    (
        "cli/command.go",
        "cli/command.go#FlagBase[T, C].Apply",
        ("func after() {}", "func after() { _ = 1 }"),
        ("return nil", "return errNone"),
    ),
    (
        "src/backtrace.rs",
        "src/backtrace.rs#BacktraceStatus.Captured",
        ("    Unsupported,", "    Unsupported = 2,"),
        ("    Captured,", "    Captured = 1,"),
    ),
    (
        "src/backtrace.rs",
        "src/backtrace.rs#bail!",
        ("fn after() {}", "fn after() { let _ = 1; }"),
        ("return Err($msg)", "return Err(anyhow!($msg))"),
    ),
    (
        "src/error.rs",
        "src/error.rs#Error(Debug)",
        ("        false", "        true"),
        ("Ok(())", "Err(Error)"),
    ),
    (
        "src/ensure.rs",
        "src/ensure.rs#<(A, B) as BothDebug>::__dispatch_ensure",
        ("Error::msg()", 'Error::msg("x")'),
        ("render(&self.0, &self.1)", "render(&self.1, &self.0)"),
    ),
    (
        "src/Document.java",
        "src/Document.java#Document.escapeMode(EscapeMode)",
        ("String query) { return null; }", "String query) { return Elements.empty(); }"),
        ("{ return this; }", "{ this.mode = mode; return this; }"),
    ),
    (
        "src/Document.java",
        "src/Document.java#Document.select(java.lang.String)",
        ("Evaluator evaluator) { return null; }", "Evaluator evaluator) { return none(); }"),
        ("String query) { return null; }", "String query) { return none(); }"),
    ),
    (
        "src/point.rs",
        "src/point.rs#Point.0",
        ("pub i32, String", "pub i32, Vec<u8>"),
        ("pub i32,", "pub i64,"),
    ),
    ("src/point.rs", "src/point.rs#Point.1", ("pub i32,", "i32,"), ("String)", "Box<str>)")),
    # A tuple-like variant's field, as a tuple struct's: its type and its attributes.
    ("src/shape.rs", "src/shape.rs#Shape.Rect.1", ("(u32,", "(u64,"), ("String)", "Box<str>)")),
    (
        "src/shape.rs",
        "src/shape.rs#Shape.Rect.0",
        ("(default)", '(rename = "r")'),
        ("(u32,", "(i32,"),
    ),
    (
        "src/dict.ts",
        "src/dict.ts#Dict.[string]",
        ("]: string", "]: bigint"),
        ("]: number\n", "]: unknown\n"),
    ),
    (
        "src/dict.ts",
        "src/dict.ts#Flags.[string]",
        ("size: number", "size: bigint"),
        ("boolean", "number"),
    ),
    (
        "src/registry.py",
        "src/registry.py#parse(str)",
        ("text: bytes) -> int", "text: bytes) -> float"),
        ("text: str) -> int", "text: str) -> float"),
    ),
]


@pytest.mark.parametrize(
    ("path", "ref", "sibling", "own"), CASES, ids=[case[1].split("#")[1] for case in CASES]
)
def test_a_member_is_its_own_anchor_a_sibling_edit_leaves_it_current(
    ws: Workspace, path: str, ref: str, sibling: tuple[str, str], own: tuple[str, str]
) -> None:
    source = SOURCES[path]
    ws.write(path, source)
    ws.memory("member", [ref])
    assert ws.moor("bind").code == 0, ws.moor("check").out
    assert ws.state("memories/member.md") == "current"
    assert sibling[0] in source and own[0] in source
    ws.write(path, source.replace(*sibling))
    assert ws.state("memories/member.md") == "current"  # a sibling's edit is not its drift
    ws.write(path, source.replace(*sibling).replace(*own))
    anchor = ws.anchor("memories/member.md")
    assert anchor["state"] == "drifted", anchor


def test_moor_symbols_lists_the_new_kinds(ws: Workspace) -> None:
    for path, text in SOURCES.items():
        ws.write(path, text)
    listed = {path: ws.moor("symbols", path, check=True).out.splitlines() for path in SOURCES}
    assert "src/store.ts#PersistOptions.version" in listed["src/store.ts"]
    assert "src/store.ts#StorageValue.state" in listed["src/store.ts"]
    assert "src/store.ts#Mode.Busy" in listed["src/store.ts"]
    assert "cli/command.go#Command.Name" in listed["cli/command.go"]
    assert "cli/command.go#ExitCoder.ExitCode" in listed["cli/command.go"]
    assert "src/backtrace.rs#BacktraceStatus.Captured" in listed["src/backtrace.rs"]
    assert "src/backtrace.rs#ErrorImpl.backtrace(field)" in listed["src/backtrace.rs"]
    assert listed["src/error.rs"][:3] == [
        "src/error.rs#Error",
        "src/error.rs#Error(impl)",
        "src/error.rs#Error(Debug)",
    ]
    assert "src/Document.java#Document.escapeMode" in listed["src/Document.java"]
    assert "src/Document.java#Document.select(String)" in listed["src/Document.java"]
    assert "src/registry.py#parse(bytes)" in listed["src/registry.py"]
    assert listed["src/point.rs"] == [
        "src/point.rs#Point",
        "src/point.rs#Point(impl)",
        "src/point.rs#Point.0",
        "src/point.rs#Point.1",
        "src/point.rs#Point.x",
    ]
    assert listed["src/shape.rs"] == [
        "src/shape.rs#Shape",
        "src/shape.rs#Shape.Circle",
        "src/shape.rs#Shape.Circle.0",
        "src/shape.rs#Shape.Rect",
        "src/shape.rs#Shape.Rect.0",
        "src/shape.rs#Shape.Rect.1",
        "src/shape.rs#Shape.Unit",
    ]
    assert listed["src/dict.ts"] == [
        "src/dict.ts#Dict",
        "src/dict.ts#Dict.[string]",
        "src/dict.ts#Dict.[number]",
        "src/dict.ts#Dict.size",
        "src/dict.ts#Flags",
        "src/dict.ts#Flags.[string]",
    ]


def test_a_type_defined_elsewhere_is_named_by_its_impls_and_did_you_mean_offers_it(
    ws: Workspace,
) -> None:
    ws.write("src/error.rs", ERROR_RS)
    ws.memory("impls", ["src/error.rs#Error"])
    assert ws.moor("bind").code == 0
    ws.write("src/error.rs", ERROR_RS.replace("Ok(())", "Err(Error)"))
    assert ws.state("memories/impls.md") == "drifted"  # the impls together are the anchor
    ws.memory("typo", ["src/error.rs#Eror"])
    detail = ws.anchor("memories/typo.md")["detail"]
    assert "src/error.rs#Error" in detail, detail


# What moor before issue 23 (commit a105e55) wrote into moor.lock for these anchors, every
# axis watched: a lock bound before members were listed. Generated once by that moor.
OLD_ABOUT = [
    "src/store.ts#PersistOptions.merge",
    "src/store.ts#StorageValue",
    "cli/command.go#Command",
    "cli/command.go#FlagBase.Apply",
    "src/backtrace.rs#ErrorImpl.backtrace",
    "src/backtrace.rs#after",
    "src/error.rs#Error.is",
    "src/Document.java#Document.escapeMode(Entities.EscapeMode)",
    "src/registry.py#parse",
]
EVERY_AXIS = ["kind", "signature", "decorators", "body", "doc", "place"]
OLD_LOCK = Path(__file__).with_name("members_old.lock")


def test_a_lock_bound_before_members_were_listed_stays_current(ws: Workspace) -> None:
    for path, text in SOURCES.items():
        ws.write(path, text)
    ws.memory("before", OLD_ABOUT, watch=EVERY_AXIS)
    ws.write("moor.lock", OLD_LOCK.read_text(encoding="utf-8"))
    run = ws.moor("check")
    assert run.code == 0, run.out
    assert "re-baselined" not in run.out
    assert ws.read("moor.lock") == OLD_LOCK.read_text(encoding="utf-8")
    # Positive control: the same lock does see a change to one of those anchors.
    ws.write("src/store.ts", STORE_TS.replace("merge(persisted", "merge(stored"))
    anchors = ws.states()["memories/before.md"]["anchors"]
    assert [a["state"] for a in anchors].count("drifted") == 1


def test_a_field_follows_its_type_into_another_file_in_a_git_workspace(ws: Workspace) -> None:
    ws.git("init", "-q", "-b", "main")
    ws.write("cli/command.go", COMMAND_GO)
    ws.memory("field", ["cli/command.go#Command.Name"])
    ws.moor("bind", check=True)
    ws.git("add", "-A")
    ws.git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "bound")
    start = COMMAND_GO.index("type Command struct")
    end = COMMAND_GO.index("type FlagBase")
    ws.write("cli/command.go", COMMAND_GO[:start] + COMMAND_GO[end:])
    ws.write("cli/types.go", "package cli\n\n" + COMMAND_GO[start:end])
    anchor = ws.anchor("memories/field.md")
    assert (anchor["state"], anchor["moved_to"]) == ("moved", "cli/types.go#Command.Name")
