"""TypeScript and TSX definitions: JavaScript's plus interfaces, types, enums, namespaces."""

from __future__ import annotations

from textwrap import dedent

import pytest
from moor_extractors.model import AXES, Facts
from moor_extractors.symbols import parse_source

from tests.extractors.axes import assert_only_text_moves_anywhere, tabs_for_spaces

SOURCE = dedent(
    """
    /** A store. */
    @Injectable()
    export abstract class Store<T> extends Base implements Shape {
      private readonly limit: number = 1;

      constructor(private name: string) {
        super();
      }

      public put(key: string, value: T): void {
        const total = (key.length + 1) * 2;
        this.save(total);
      }

      abstract get(key: string): T;

      handle = (event: Event): void => {
        this.put("a", event);
      };
    }

    export class Cache {
      put(key: string): string {
        return key;
      }
    }

    export interface Shape {
      put(key: string, value: unknown): void;
    }

    export type Key = string | number;

    enum Colour { Red = 1, Green }

    namespace Tools {
      export function tool(): void {}
    }

    export const add = (a: number, b: number): number => a + b;

    function over(a: string): string;
    function over(a: number): number;
    function over(a: any): any { return a; }
    """
)

TSX = dedent(
    """
    export function Greeting({ name }: Props): JSX.Element {
      return (
        <div className="greeting">
          Hello, {name}!
        </div>
      );
    }

    export const Button = ({ label }: { label: string }) => <button>{label}</button>;
    """
)


def facts_of(source: str, qname: str, language: str = "typescript") -> Facts:
    parsed = parse_source(language, source.encode())
    [site] = [site for site in parsed.sites() if site.qname == qname]
    return parsed.facts(site)


def moved(before: str, after: str, qname: str, language: str = "typescript") -> set[str]:
    old, new = facts_of(before, qname, language), facts_of(after, qname, language)
    return {axis for axis in AXES if old.axes[axis] != new.axes[axis]}


def test_qualified_names_cover_typescript_declarations() -> None:
    sites = parse_source("typescript", SOURCE.encode()).sites()
    assert [(site.qname, site.kind) for site in sites] == [
        ("Store", "class"),
        ("Store.limit", "field"),
        ("Store.constructor", "method"),
        ("Store.put", "method"),
        ("Store.get", "method"),
        ("Store.handle", "method"),
        ("Cache", "class"),
        ("Cache.put", "method"),
        ("Shape", "interface"),
        ("Shape.put", "method"),
        ("Key", "type"),
        ("Colour", "enum"),
        ("Colour.Red", "constant"),
        ("Colour.Green", "constant"),
        ("Tools", "module"),
        ("Tools.tool", "function"),
        ("add", "function"),
        ("over", "function"),
        ("over", "function"),
        ("over", "function"),
    ]


def test_overload_signatures_are_duplicates_each_with_its_line() -> None:
    sites = parse_source("typescript", SOURCE.encode()).sites()
    lines = [site.line for site in sites if site.qname == "over"]
    assert len(lines) == 3 and lines == sorted(set(lines))


def test_same_named_methods_in_two_classes_resolve_independently() -> None:
    after = SOURCE.replace("    return key;", "    return key.trim();")
    assert moved(SOURCE, after, "Cache.put") == {"body", "text"}
    assert moved(SOURCE, after, "Store.put") == set()
    assert moved(SOURCE, after, "Shape.put") == set()


def test_reformatting_and_comments_leave_every_default_axis_unchanged() -> None:
    cosmetic = SOURCE.replace(
        "  public put(key: string, value: T): void {\n",
        "  public put(\n    key: string,\n    value: T, // the value\n  ): void {\n\n",
    ).replace("this.save(total);", "this.save(total) // persist")
    assert moved(SOURCE, cosmetic, "Store.put") == {"text"}
    assert "body" in moved(
        SOURCE, SOURCE.replace("this.save(total)", "this.drop(total)"), "Store.put"
    )


def test_reindenting_the_whole_file_moves_only_the_text_of_any_definition() -> None:
    assert_only_text_moves_anywhere("typescript", SOURCE, tabs_for_spaces(SOURCE))


def test_a_body_token_change_moves_only_the_body() -> None:
    assert moved(SOURCE, SOURCE.replace("* 2", "* 3"), "Store.put") == {"body", "text"}
    assert moved(SOURCE, SOURCE.replace("string | number", "string"), "Key") == {"body", "text"}
    assert moved(SOURCE, SOURCE.replace("Green }", "Blue }"), "Colour") == {"body", "text"}


def test_parameter_types_and_return_types_move_the_signature() -> None:
    for old, new in [
        ("value: T): void {", "value: T, x: T): void {"),
        ("): void {\n    const", "): T {\n    const"),
    ]:
        assert moved(SOURCE, SOURCE.replace(old, new), "Store.put") == {"signature", "text"}
    extended = SOURCE.replace("implements Shape {", "implements Shape, Other {")
    assert moved(SOURCE, extended, "Store") == {"signature", "text"}


def test_modifiers_decorators_and_export_move_the_decorators() -> None:
    assert moved(SOURCE, SOURCE.replace("  public put", "  private put"), "Store.put") == {
        "decorators",
        "text",
    }
    assert moved(SOURCE, SOURCE.replace("@Injectable()", "@Injectable({ a: 1 })"), "Store") == {
        "decorators",
        "text",
    }
    decorated = SOURCE.replace("  public put(", "  @memo\n  @trace(1)\n  public put(")
    assert moved(SOURCE, decorated, "Store.put") == {"decorators", "text"}
    parsed = parse_source("typescript", decorated.encode())
    [put] = [site for site in parsed.sites() if site.qname == "Store.put"]
    assert parsed.source_text(put).startswith("@memo\n  @trace(1)\n  public put(")
    assert moved(SOURCE, SOURCE.replace("export type Key", "type Key"), "Key") == {
        "decorators",
        "text",
    }
    assert moved(
        SOURCE, SOURCE.replace("  abstract get", "  abstract override get"), "Store.get"
    ) == {
        "decorators",
        "text",
    }


def test_a_doc_comment_edit_moves_only_doc() -> None:
    assert moved(SOURCE, SOURCE.replace("A store.", "A keeper."), "Store") == {"doc"}
    assert moved(SOURCE, SOURCE.replace("A store.", "A  store."), "Store") == set()


def test_place_ignores_line_shifts_but_moves_when_the_preceding_sibling_changes() -> None:
    assert moved(SOURCE, "\n\n" + SOURCE, "Key") == set()
    reordered = SOURCE.replace("export type Key = string | number;\n", "").replace(
        "namespace Tools", "export type Key = string | number;\n\nnamespace Tools"
    )
    assert moved(SOURCE, reordered, "Key") == {"place"}


@pytest.mark.parametrize("language", ["tsx"])
def test_tsx_components_are_found_and_jsx_whitespace_is_cosmetic(language: str) -> None:
    sites = parse_source(language, TSX.encode()).sites()
    assert [(site.qname, site.kind) for site in sites] == [
        ("Greeting", "function"),
        ("Button", "function"),
    ]
    rewrapped = TSX.replace("\n      Hello, {name}!\n    ", "Hello, {name}!")
    assert moved(TSX, rewrapped, "Greeting", language) == {"text"}
    assert moved(TSX, TSX.replace("Hello", "Hi"), "Greeting", language) == {"body", "text"}
    assert moved(TSX, TSX.replace('"greeting"', "'greeting'"), "Greeting", language) == {"text"}
    assert moved(TSX, TSX.replace("{label}</", "{label}!</"), "Button", language) == {
        "body",
        "text",
    }
