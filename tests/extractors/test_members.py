"""Every definition a reader sees is referenceable (issue 23): members of types — TypeScript
properties and enum members, Go fields and interface methods, Rust variants, fields and
impl blocks — each its own anchor; Java overloads by simple type names; Python overloads
by their annotations. What was listed before keeps every fact it had."""

from __future__ import annotations

from moor_extractors.digest import digest_tokens
from moor_extractors.model import AXES
from moor_extractors.symbols import parse_source

from tests.extractors.test_resolve import lines, listed

STORE_TS = """\
export interface PersistOptions<S> {
  /** Where it is kept. */
  name: string
  version?: number
  readonly migrate?: (state: unknown, version: number) => S | Promise<S>
  merge(persisted: unknown, current: S): S
  nested: { depth: number }
}

export type StorageValue<S> = {
  state: S
  version?: number
}

export enum Mode { Idle, Busy = "busy" }

function helper(options: { inline: boolean }): void {}
"""

CLI_GO = """\
package cli

// ExitCoder is an error with an exit code.
type ExitCoder interface {
\terror
\tExitCode() int
}

type Command struct {
\tName, Usage string
\tFlags       []Flag `json:"flags"`
\t*Category
\tHidden struct {
\t\tReason string
\t}
}

type FlagBase[T any, C any, VC ValueCreator[T, C]] struct {
\tValue T
}

func (f *FlagBase[T, C, VC]) Apply(set *flag.FlagSet) error { return nil }

func TestTable(t *testing.T) {
\ttests := []struct{ name string }{{name: "a"}}
\t_ = tests
}
"""

BACKTRACE_RS = """\
pub enum BacktraceStatus {
    Unsupported,
    Disabled,
    Captured,
    Frames { count: usize },
}

pub struct ErrorImpl {
    vtable: &'static ErrorVTable,
    backtrace: Option<Backtrace>,
}

impl ErrorImpl {
    pub fn backtrace(&self) -> &Backtrace {
        self.backtrace.as_ref().unwrap()
    }
}

impl Display for ErrorImpl {
    fn fmt(&self, f: &mut Formatter) -> Result { Ok(()) }
}

fn after() {}

macro_rules! bail {
    ($msg:literal) => { return Err(anyhow!($msg)) };
}
"""

ERROR_IMPLS_RS = """\
use crate::Error;

impl Error {
    pub fn is<E>(&self) -> bool { false }
}

impl Debug for Error {
    fn fmt(&self, f: &mut Formatter) -> Result { Ok(()) }
}
"""


def symbols(language: str, source: str) -> list[str]:
    return [symbol for symbol, _ in listed(language, source)]


def moved(language: str, before: str, after: str, symbol: str) -> set[str]:
    """The axes of `symbol` (its first definition) that differ between two sources."""

    def facts(source: str) -> dict[str, str]:
        parsed = parse_source(language, source.encode())
        site = next(site for site in parsed.sites() if site.qname == symbol)
        return dict(parsed.facts(site).axes)

    old, new = facts(before), facts(after)
    return {axis for axis in AXES if old[axis] != new[axis]}


def place_of(language: str, source: str, qname: str, kind: str) -> str:
    parsed = parse_source(language, source.encode())
    site = next(s for s in parsed.sites() if s.qname == qname and s.kind == kind)
    return parsed.facts(site).axes["place"]


def test_typescript_properties_of_interfaces_and_object_types_and_enum_members_are_listed() -> None:
    assert symbols("typescript", STORE_TS) == [
        "PersistOptions",
        "PersistOptions.name",
        "PersistOptions.version",
        "PersistOptions.migrate",
        "PersistOptions.merge",
        "PersistOptions.nested",
        "PersistOptions.nested.depth",
        "StorageValue",
        "StorageValue.state",
        "StorageValue.version",
        "Mode",
        "Mode.Idle",
        "Mode.Busy",
        "helper",  # a parameter's object type is not a reader's definition
    ]


def test_a_property_type_change_drifts_that_property_and_the_interface_not_a_sibling() -> None:
    changed = STORE_TS.replace("version?: number\n  readonly", "version?: string\n  readonly")
    assert moved("typescript", STORE_TS, changed, "PersistOptions.version") == {
        "signature",
        "text",
    }
    assert moved("typescript", STORE_TS, changed, "PersistOptions.name") == set()
    assert "body" in moved("typescript", STORE_TS, changed, "PersistOptions")
    readonly = STORE_TS.replace("readonly migrate", "migrate")
    assert moved("typescript", STORE_TS, readonly, "PersistOptions.migrate") == {
        "decorators",
        "text",
    }
    assert moved("typescript", STORE_TS, STORE_TS.replace('"busy"', '"working"'), "Mode.Busy") == {
        "body",
        "text",
    }


def test_a_method_signature_keeps_the_place_it_had_before_properties_were_listed() -> None:
    # `merge` was the first definition listed in the interface: its place stays `^`.
    assert place_of("typescript", STORE_TS, "PersistOptions.merge", "method") == digest_tokens(
        ["^"]
    )


def test_go_struct_fields_embedded_fields_and_interface_methods_are_listed() -> None:
    assert symbols("go", CLI_GO) == [
        "ExitCoder",
        "ExitCoder.ExitCode",
        "Command",
        "Command.Name",
        "Command.Usage",
        "Command.Flags",
        "Command.Category",
        "Command.Hidden",
        "Command.Hidden.Reason",
        "FlagBase",
        "FlagBase.Value",
        "FlagBase.Apply",
        "TestTable",  # an anonymous struct in code (a test table) lists nothing
    ]


def test_a_go_field_tag_or_type_change_drifts_that_field_only() -> None:
    tagged = CLI_GO.replace('`json:"flags"`', '`json:"flags,omitempty"`')
    assert moved("go", CLI_GO, tagged, "Command.Flags") == {"signature", "text"}
    assert moved("go", CLI_GO, tagged, "Command.Name") == set()
    assert "body" in moved("go", CLI_GO, tagged, "Command")
    result = CLI_GO.replace("ExitCode() int", "ExitCode() int64")
    assert moved("go", CLI_GO, result, "ExitCoder.ExitCode") == {"signature", "text"}


def test_a_go_receiver_written_with_its_type_parameters_names_the_method() -> None:
    assert lines("go", CLI_GO, "FlagBase[T, C, VC].Apply") == [22]
    assert lines("go", CLI_GO, "(*FlagBase[T, C, VC]).Apply") == [22]
    assert lines("go", CLI_GO, "FlagBase.Missing") is None  # positive control of the lookup


def test_rust_variants_fields_and_impls_are_listed_and_the_bare_names_keep_their_meaning() -> None:
    assert symbols("rust", BACKTRACE_RS) == [
        "BacktraceStatus",
        "BacktraceStatus.Unsupported",
        "BacktraceStatus.Disabled",
        "BacktraceStatus.Captured",
        "BacktraceStatus.Frames",
        "BacktraceStatus.Frames.count",
        "ErrorImpl",
        "ErrorImpl(impl)",
        "ErrorImpl(Display)",
        "ErrorImpl.vtable",
        "ErrorImpl.backtrace",
        "ErrorImpl.backtrace(field)",
        "ErrorImpl.fmt",
        "after",
        "bail",
    ]
    # The bare names mean what they meant: the struct, the method (not the field).
    assert lines("rust", BACKTRACE_RS, "ErrorImpl") == [8]
    assert lines("rust", BACKTRACE_RS, "ErrorImpl.backtrace") == [14]
    assert lines("rust", BACKTRACE_RS, "ErrorImpl.backtrace(field)") == [10]
    assert lines("rust", BACKTRACE_RS, "ErrorImpl(Display)") == [19]
    assert lines("rust", BACKTRACE_RS, "bail!") == [25]


def test_a_variant_change_drifts_that_variant_and_the_enum_not_a_sibling() -> None:
    changed = BACKTRACE_RS.replace("Frames { count: usize }", "Frames { count: u64 }")
    assert moved("rust", BACKTRACE_RS, changed, "BacktraceStatus.Frames") == {"body", "text"}
    assert moved("rust", BACKTRACE_RS, changed, "BacktraceStatus.Captured") == set()
    assert "body" in moved("rust", BACKTRACE_RS, changed, "BacktraceStatus")


def test_an_impl_of_a_type_defined_elsewhere_is_named_by_the_type() -> None:
    assert symbols("rust", ERROR_IMPLS_RS) == [
        "Error",
        "Error(impl)",
        "Error(Debug)",
        "Error.is",
        "Error.fmt",
    ]
    assert lines("rust", ERROR_IMPLS_RS, "Error") == [3, 7]
    assert lines("rust", ERROR_IMPLS_RS, "Error(Debug)") == [7]


def test_methods_and_items_after_an_impl_keep_the_places_they_had() -> None:
    # Before impls were definitions, a method's place was the item before the impl (or the
    # method before it), and the item after an impl followed its last method.
    rust = "rust"
    assert place_of(rust, BACKTRACE_RS, "ErrorImpl.backtrace", "method") == digest_tokens(
        ["ErrorImpl"]
    )
    assert place_of(rust, BACKTRACE_RS, "ErrorImpl.fmt", "method") == digest_tokens(
        ["ErrorImpl.backtrace"]
    )
    assert place_of(rust, BACKTRACE_RS, "after", "function") == digest_tokens(["ErrorImpl.fmt"])


JSOUP_JAVA = """\
package org.jsoup.nodes;

public class Document {
    public Document escapeMode(Entities.EscapeMode mode) { return this; }
    public Entities.EscapeMode escapeMode() { return null; }
    public Elements select(String query) { return null; }
    public Elements select(Evaluator evaluator) { return null; }
    public Stream<Element> selectStream(String query) { return null; }
    void load(a.Source source) {}
    void load(b.Source source) {}
}
"""


def test_java_overloads_are_listed_and_named_by_simple_type_names() -> None:
    assert symbols("java", JSOUP_JAVA) == [
        "Document",
        "Document.escapeMode",
        "Document.escapeMode(EscapeMode)",
        "Document.escapeMode()",
        "Document.select",
        "Document.select(String)",
        "Document.select(Evaluator)",
        "Document.selectStream",
        "Document.load",
        "Document.load(a.Source)",
        "Document.load(b.Source)",
    ]
    assert lines("java", JSOUP_JAVA, "Document.escapeMode(EscapeMode)") == [4]
    # As written (a lock bound before) and fully qualified: the same overload.
    assert lines("java", JSOUP_JAVA, "Document.escapeMode(Entities.EscapeMode)") == [4]
    assert lines("java", JSOUP_JAVA, "Document.select(java.lang.String)") == [6]
    # A simple name two overloads share picks neither; the written one picks one.
    assert str(lines("java", JSOUP_JAVA, "Document.load(Source)")).startswith("ambiguous")
    assert lines("java", JSOUP_JAVA, "Document.load(b.Source)") == [10]
    assert lines("java", JSOUP_JAVA, "Document.select(Integer)") is None


OVERLOADS_PY = """\
from typing import overload


class Registry:
    @overload
    def get(self, key: int) -> int: ...
    @overload
    def get(self, key: str, *rest: bytes, **options: int) -> str: ...
    def get(self, key, *rest, **options):
        return key

    @staticmethod
    @overload
    def make(kind: int) -> None: ...
    @staticmethod
    @overload
    def make(kind: str) -> None: ...
    @staticmethod
    def make(kind):
        pass


def f(x):
    pass


def f(x, y):
    pass
"""


def test_python_overload_variants_are_picked_by_their_annotations() -> None:
    assert listed("python", OVERLOADS_PY) == [
        ("Registry", 1),
        ("Registry.get", 3),
        ("Registry.get(int)", 1),
        ("Registry.get(str, *bytes, **int)", 1),
        ("Registry.get(Any, *Any, **Any)", 1),
        ("Registry.make", 3),
        ("Registry.make(int)", 1),
        ("Registry.make(str)", 1),
        ("Registry.make(Any)", 1),
        ("f", 1),  # a plain redefinition keeps the rebinding rule: no spelling
        ("f@1", 1),
    ]
    assert lines("python", OVERLOADS_PY, "Registry.get(str, *bytes, **int)") == [7]
    assert lines("python", OVERLOADS_PY, "Registry.get") == [5, 7, 9]
    assert lines("python", OVERLOADS_PY, "f") == [27]


def test_a_python_overload_change_drifts_that_variant_only() -> None:
    changed = OVERLOADS_PY.replace("key: int) -> int", "key: int) -> bool")

    def signature(source: str, line: int) -> str:
        parsed = parse_source("python", source.encode())
        site = next(s for s in parsed.sites() if s.line == line)
        return parsed.facts(site).axes["signature"]

    assert signature(OVERLOADS_PY, 5) != signature(changed, 5)
    assert signature(OVERLOADS_PY, 7) == signature(changed, 7)


CONTEXT_PY = """\
@t.overload
def current(silent: t.Literal[False] = False) -> Context: ...
@t.overload
def current(silent: bool = ...) -> Context | None: ...
def current(silent: bool = False) -> Context | None:
    return None
"""


def test_overloads_spelled_alike_are_listed_by_their_ordinals() -> None:
    assert symbols("python", CONTEXT_PY) == [
        "current",
        "current(t.Literal[False])",
        "current@2",
        "current@3",
    ]
    assert lines("python", CONTEXT_PY, "current@2") == [3]
    assert str(lines("python", CONTEXT_PY, "current(bool)")).startswith("ambiguous")


ENSURE_RS = """\
pub trait BothDebug {
    fn __dispatch_ensure(self, msg: &'static str) -> Error;
}

impl<A, B> BothDebug for (A, B) {
    fn __dispatch_ensure(self, msg: &'static str) -> Error {
        render(msg, &self.0, &self.1)
    }
}

impl<A, B> NotBothDebug for &(A, B) {
    fn __dispatch_ensure(self, msg: &'static str) -> Error {
        Error::msg(msg)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result { Ok(()) }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result { Ok(()) }
}
"""


def test_rusts_own_qualified_path_names_a_trait_method_of_a_tuple_or_a_type() -> None:
    assert lines("rust", ENSURE_RS, "<(A, B) as BothDebug>::__dispatch_ensure") == [6]
    assert lines("rust", ENSURE_RS, "<&(A, B) as NotBothDebug>::__dispatch_ensure") == [12]
    assert lines("rust", ENSURE_RS, "<Error as fmt::Display>::fmt") == [18]
    # The trait by its name where the impl writes its path, as Java types by simple names.
    assert lines("rust", ENSURE_RS, "<Error as Debug>::fmt") == [22]
    assert lines("rust", ENSURE_RS, "Error.fmt(Debug)") == [22]
    assert lines("rust", ENSURE_RS, "<Error as Hash>::fmt") is None  # control
