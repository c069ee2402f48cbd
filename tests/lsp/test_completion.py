"""Completion of `about:` references: workspace paths, then a file's qualified names."""

from __future__ import annotations

import pytest
from lsprotocol import types

from tests.lsp.conftest import Editor

pytestmark = [
    pytest.mark.asyncio,
    pytest.mark.filterwarnings("error::pytest_lsp.LspSpecificationWarning"),
]
CLIENT = "class Client:\n    def send(self):\n        pass\n\n\ndef connect():\n    pass\n"
MEMORY = """---
about:
  - src/ne
  - "src/net/client.py#"
  - ref: src/net/client.py#Client.s
    watch: [sig
---
# Completion

src/
"""


def labels(result: types.CompletionList | None) -> list[str]:
    assert result is not None
    ordered = sorted(result.items, key=lambda item: item.sort_text or item.label)
    return [item.label for item in ordered]


async def test_paths_are_completed_folder_by_folder_folders_first(editor: Editor) -> None:
    ws = editor.ws
    ws.write("moor.toml", 'memory_roots = ["memories"]\nignore = ["build"]\n')
    ws.write("src/net/client.py", CLIENT)
    ws.write("src/netlib.py", "X = 1\n")
    ws.write("src/zeta.py", "Y = 1\n")
    ws.write("build/out.py", "Z = 1\n")
    ws.write("node_modules/x/index.js", "\n")
    ws.write(".moor/keep", "\n")
    ws.write("memories/typing.md", MEMORY)
    await editor.start()
    editor.open("memories/typing.md")

    partial = await editor.complete("memories/typing.md", 2, len("  - src/ne"))
    at_root = await editor.complete("memories/typing.md", 2, len("  - "))
    in_body = await editor.complete("memories/typing.md", 9, len("src/"))
    in_watch = await editor.complete("memories/typing.md", 5, len("    watch: [sig"))

    assert labels(partial) == ["net/", "netlib.py"]  # not zeta.py
    assert partial is not None
    folder = partial.items[0] if partial.items[0].label == "net/" else partial.items[1]
    assert folder.kind == types.CompletionItemKind.Folder
    assert isinstance(folder.text_edit, types.TextEdit)
    # The edit replaces the word at the cursor (what eglot filters on: the whole path,
    # `/` being a word character in Markdown), and the filter text matches it.
    assert folder.text_edit.new_text == folder.filter_text == folder.insert_text == "src/net/"
    assert folder.text_edit.range == types.Range(
        start=types.Position(line=2, character=len("  - ")),
        end=types.Position(line=2, character=len("  - src/ne")),
    )
    root = labels(at_root)
    assert root[:2] == ["memories/", "src/"]
    assert "moor.toml" in root
    for hidden in ("build/", "node_modules/", ".moor/"):
        assert hidden not in root
    assert in_body is None  # the body is no reference list
    assert in_watch is None  # nor is a reference's watch list


async def test_after_a_hash_the_files_qualified_names_are_offered(editor: Editor) -> None:
    ws = editor.ws
    ws.write("src/net/client.py", CLIENT)
    ws.write("docs/guide.md", "# Storage\n\ntext\n\n## Journal  format\n\nmore\n")
    ws.write("memories/typing.md", MEMORY.replace("src/ne\n", "docs/guide.md#Storage > J\n"))
    await editor.start()
    editor.open("memories/typing.md")
    quoted = '  - "src/net/client.py#'

    everything = await editor.complete("memories/typing.md", 3, len(quoted))
    narrowed = await editor.complete(
        "memories/typing.md", 4, len("  - ref: src/net/client.py#Client.s")
    )
    headings = await editor.complete("memories/typing.md", 2, len("  - docs/guide.md#Storage > J"))

    assert everything is not None
    by_label = {item.label: item for item in everything.items}
    assert set(by_label) == {"Client", "Client.send", "connect"}
    send = by_label["Client.send"]
    assert send.kind == types.CompletionItemKind.Method
    assert by_label["Client"].kind == types.CompletionItemKind.Class
    assert by_label["connect"].kind == types.CompletionItemKind.Function
    assert isinstance(send.text_edit, types.TextEdit)
    cursor = types.Position(line=3, character=len(quoted))
    assert send.text_edit.range == types.Range(start=cursor, end=cursor)
    assert labels(narrowed) == ["Client.send"]
    assert narrowed is not None and isinstance(narrowed.items[0].text_edit, types.TextEdit)
    # `.` ends a word: from `s`, `send` (the label still reads the whole name).
    assert narrowed.items[0].text_edit.range.start.character == len(
        "  - ref: src/net/client.py#Client."
    )
    assert narrowed.items[0].text_edit.new_text == narrowed.items[0].filter_text == "send"
    assert labels(headings) == ["Storage > Journal format"]  # the breadcrumb as written


async def test_completion_offers_what_moor_symbols_lists_overload_spellings_included(
    editor: Editor,
) -> None:
    ws = editor.ws
    ws.write(
        "src/Registry.java",
        "class Registry {\n    Object lookup(Key k) { return null; }\n"
        "    Object lookup(String s, int d) { return null; }\n    void lookup() {}\n"
        "    void drop() {}\n    void drop() {}\n}\n",
    )
    ws.write("memories/typing.md", MEMORY.replace("src/ne\n", "src/Registry.java#Registry.l\n"))
    await editor.start()
    editor.open("memories/typing.md")
    offered = await editor.complete(
        "memories/typing.md", 2, len("  - src/Registry.java#Registry.l")
    )
    assert labels(offered) == [
        "Registry.lookup",
        "Registry.lookup()",
        "Registry.lookup(Key)",
        "Registry.lookup(String, int)",
    ]
    listed = ws.moor("symbols", "src/Registry.java", check=True).out.splitlines()
    spelled = [r.removeprefix("src/Registry.java#") for r in listed if "lookup" in r]
    assert sorted(spelled) == labels(offered)
    # Control: the file's other names are offered too; the twice-declared `drop` (two equal
    # parameter lists are no overloads) only by ordinal, never by its ambiguous bare name.
    everything = await editor.complete("memories/typing.md", 2, len("  - src/Registry.java#"))
    assert "Registry" in labels(everything)
    assert [label for label in labels(everything) if "drop" in label] == [
        "Registry.drop@1",
        "Registry.drop@2",
    ]


async def test_completion_offers_members_fields_and_variants(editor: Editor) -> None:
    ws = editor.ws
    ws.write(
        "src/store.ts",
        "export interface PersistOptions {\n  name: string\n  version?: number\n}\n"
        "export function persist(): void {}\n",
    )
    ws.write("cli/command.go", "package cli\n\ntype Command struct {\n\tName string\n}\n")
    ws.write("src/status.rs", "pub enum BacktraceStatus {\n    Disabled,\n    Captured,\n}\n")
    ws.write(
        "memories/typing.md",
        MEMORY.replace(
            "src/ne\n",
            "src/store.ts#PersistOptions.\n  - cli/command.go#Command.\n"
            "  - src/status.rs#BacktraceStatus.\n",
        ),
    )
    await editor.start()
    editor.open("memories/typing.md")

    properties = await editor.complete(
        "memories/typing.md", 2, len("  - src/store.ts#PersistOptions.")
    )
    fields = await editor.complete("memories/typing.md", 3, len("  - cli/command.go#Command."))
    variants = await editor.complete(
        "memories/typing.md", 4, len("  - src/status.rs#BacktraceStatus.")
    )

    assert "PersistOptions.version" in labels(properties)
    assert "PersistOptions.name" in labels(properties)
    assert "persist" not in labels(properties)  # control: the filter is the typed prefix
    assert "Command.Name" in labels(fields)
    assert "BacktraceStatus.Captured" in labels(variants)
    assert "BacktraceStatus.Disabled" in labels(variants)


async def test_completion_offers_tuple_variant_fields_and_only_a_types_own_methods(
    editor: Editor,
) -> None:
    ws = editor.ws
    ws.write("src/shape.rs", "pub enum Shape {\n    Rect(u32, String),\n    Unit,\n}\n")
    ws.write(
        "src/methods.ts",
        "export type Pending = Promise<{ settle(): void }>\n"
        "export type Handlers = { onLoad(): void }\n",
    )
    ws.write(
        "memories/typing.md",
        MEMORY.replace(
            "src/ne\n",
            "src/shape.rs#Shape.Rect.\n  - src/methods.ts#Pending.\n  - src/methods.ts#Handlers.\n",
        ),
    )
    await editor.start()
    editor.open("memories/typing.md")

    fields = await editor.complete("memories/typing.md", 2, len("  - src/shape.rs#Shape.Rect."))
    pending = await editor.complete("memories/typing.md", 3, len("  - src/methods.ts#Pending."))
    handlers = await editor.complete("memories/typing.md", 4, len("  - src/methods.ts#Handlers."))

    assert {"Shape.Rect.0", "Shape.Rect.1"} <= set(labels(fields))
    assert "Pending.settle" not in labels(pending)  # a generic argument's method: no member
    assert "Handlers.onLoad" in labels(handlers)  # control: the type's own shape's method


async def test_past_the_first_segment_each_item_matches_the_word_typed_as_the_client_filters(
    editor: Editor,
) -> None:
    ws = editor.ws
    ws.write("src/flask/sessions.py", "class SessionInterface:\n    pass\n")
    ws.write("src/flask/app.py", "X = 1\n")
    ws.write("memories/typing.md", MEMORY.replace("src/ne\n", "src/flask/sess\n"))
    await editor.start()
    editor.open("memories/typing.md")
    typed = "  - src/flask/sess"

    offered = await editor.complete("memories/typing.md", 2, len(typed))

    assert offered is not None and labels(offered) == ["sessions.py"]
    [item] = offered.items
    assert isinstance(item.text_edit, types.TextEdit)
    start = item.text_edit.range.start.character
    written = typed[start:]  # what the client filters on: the edit's range, as typed
    assert written == "src/flask/sess"
    assert item.filter_text is not None and item.filter_text.startswith(written)
    assert typed[:start] + item.text_edit.new_text == "  - src/flask/sessions.py"
