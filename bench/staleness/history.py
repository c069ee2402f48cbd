"""A public repository's history, read at run time: its Python files at two commits, the
functions each defines, and an oracle of which changed — `ast`, not moor.

Nothing of the repository is kept in moor's tree: `export` writes a commit's files into a
temporary workspace with `git archive`, from a git directory already on the machine.
"""

from __future__ import annotations

import ast
import io
import re
import subprocess
import tarfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

_HUMP = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z])")
MIN_DOC_WORDS = 6


@dataclass(frozen=True)
class Function:
    rel: str  # workspace-relative file, '/'-separated
    qname: str  # Class.method or function
    doc: str  # the docstring's first paragraph, on one line ("" when none)
    shape: str  # ast.dump of the definition without its docstring: what the oracle compares

    @property
    def ref(self) -> str:
        return f"{self.rel}#{self.qname}"

    @property
    def words(self) -> list[str]:
        """The qualified name as words (`Command.get_help_option` -> command get help option)."""
        return [w.lower() for part in re.split(r"[._]", self.qname) for w in _HUMP.findall(part)]


def git(git_dir: Path, *args: str) -> bytes:
    return subprocess.run(
        ["git", f"--git-dir={git_dir}", "-c", "core.hooksPath=/dev/null", *args],
        check=True,
        capture_output=True,
        stdin=subprocess.DEVNULL,
    ).stdout


def repository_name(git_dir: Path) -> str:
    """Who the history is of, as `owner/name` where the git directory says: its `origin`
    remote's last two parts; else a mirror's folder (`owner+name/repo`); else the folder's
    own name (a checkout's, for its `.git`)."""
    found = subprocess.run(
        ["git", f"--git-dir={git_dir}", "config", "--get", "remote.origin.url"],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        check=False,
    )
    url = found.stdout.strip().removesuffix("/").removesuffix(".git")
    parts = [part for part in re.split(r"[/:]", url) if part]
    if found.returncode == 0 and len(parts) >= 2:
        return f"{parts[-2]}/{parts[-1]}"
    where = git_dir.resolve()
    if where.name in (".git", "repo"):
        where = where.parent
    owner, plus, name = where.name.partition("+")
    if plus and owner and name:
        return f"{owner}/{name}"
    return where.name.removesuffix(".git")


def commit_of(git_dir: Path, rev: str) -> tuple[str, str]:
    """The commit `rev` names and its committer date (YYYY-MM-DD)."""
    line = git(git_dir, "log", "-1", "--format=%H %cs", f"{rev}^{{commit}}").decode().split()
    return line[0], line[1]


def export(git_dir: Path, rev: str, prefix: str, into: Path) -> list[str]:
    """Write the Python files under `prefix` at `rev` into `into` (replacing what is there
    of them: a file deleted at `rev` is removed); the files written, relative."""
    data = git(git_dir, "archive", "--format=tar", rev, "--", prefix)
    written: list[str] = []
    for old in (
        sorted(into.joinpath(prefix).rglob("*.py")) if into.joinpath(prefix).exists() else []
    ):
        old.unlink()
    with tarfile.open(fileobj=io.BytesIO(data)) as archive:
        for member in archive.getmembers():
            rel = PurePosixPath(member.name)
            if not member.isfile() or rel.suffix != ".py" or ".." in rel.parts:
                continue
            source = archive.extractfile(member)
            assert source is not None
            target = into / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(source.read())
            written.append(str(rel))
    return sorted(written)


def changed_files(git_dir: Path, a: str, b: str, prefix: str) -> set[str]:
    """The files under `prefix` whose bytes differ between `a` and `b` (git's own diff):
    what a "file changed since" rule sees."""
    out = git(git_dir, "diff", "--name-only", "--no-renames", a, b, "--", prefix)
    return set(out.decode().split())


def functions(root: Path, rels: list[str]) -> dict[str, Function]:
    """Each top-level function and method of a top-level class, by reference; a name
    defined twice in one scope (overloads, redefinitions) is left out: it names no one
    definition."""
    found: dict[str, Function] = {}
    twice: set[str] = set()
    for rel in rels:
        try:
            tree = ast.parse((root / rel).read_text(encoding="utf-8"))
        except (SyntaxError, UnicodeDecodeError):
            continue
        scopes: list[tuple[str, list[ast.stmt]]] = [("", tree.body)]
        scopes += [(n.name + ".", n.body) for n in tree.body if isinstance(n, ast.ClassDef)]
        for prefix, body in scopes:
            for node in body:
                if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                    continue
                function = _function(rel, prefix + node.name, node)
                if function.ref in found:
                    twice.add(function.ref)
                found[function.ref] = function
    return {ref: f for ref, f in found.items() if ref not in twice}


def _function(rel: str, qname: str, node: ast.FunctionDef | ast.AsyncFunctionDef) -> Function:
    doc = ast.get_docstring(node) or ""
    paragraph = " ".join(doc.strip().split("\n\n")[0].split())
    body = node.body
    first = body[0] if body else None
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
        body = body[1:] if isinstance(first.value.value, str) else body
    bare = type(node)(
        name=node.name,
        args=node.args,
        body=body,
        decorator_list=node.decorator_list,
        returns=node.returns,
        type_comment=None,
        **({"type_params": node.type_params} if hasattr(node, "type_params") else {}),
    )
    return Function(rel, qname, paragraph, ast.dump(bare, include_attributes=False))


def first_sentence(text: str) -> str:
    return _SENTENCE.split(text, 1)[0]


def eligible(function: Function) -> bool:
    """A subject a memory can be written about and asked after: a docstring that says
    something, and a name of two words or more (one word is not how a person names it)."""
    return len(function.doc.split()) >= MIN_DOC_WORDS and len(function.words) >= 2
