"""The live check is a pure function of (previous evaluation, changed paths): after any
sequence of edits, what it reports equals a check from scratch (hypothesis, stateful)."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule
from moor_engine.grounding.actions import bind, reaffirm
from moor_engine.grounding.live import LiveCheck
from moor_engine.memory.latch_actions import forget, restore
from moor_engine.session import Session

CODE = {
    "src/a.py": (
        "def f(x):\n    return [item * 2 for item in x if item > 3 and item % 7]\n\n\n"
        "def g():\n    return 2\n",
        "def g():\n    return 2\n",
        "def f(x):\n    return [item * 3 for item in x if item > 3 and item % 7]\n",
        "def f2(x):\n    return [item * 2 for item in x if item > 3 and item % 7]\n",
    ),
    "src/b.py": (
        "def k():\n    return 4\n",
        "def f(x):\n    return [item * 2 for item in x if item > 3 and item % 7]\n",
        "",
    ),
    # Code kept under a memory root: observed as code, never taken for a memory.
    "memories/tools/helper.py": (
        "def util():\n    return {'a': 1}\n",
        "def util():\n    return {'a': 2}\n",
    ),
}
MEMORIES = {
    "memories/f.md": (
        "---\nabout: src/a.py#f\n---\n# F\n\nAbout f.\n",
        "---\nabout: src/a.py#f\n---\n# F\n\nAbout f, edited.\n",
        "---\nabout: [src/a.py#f, src/b.py#k]\n---\n# F\n\nAbout f and k.\n",
    ),
    # A memory about another memory, and one about code under the memory root.
    "memories/meta.md": (
        "---\nabout: memories/f.md\n---\n# Meta\n\nAbout the f memory.\n",
        "---\nabout: 'memories/f.md#F'\n---\n# Meta\n\nAbout its heading.\n",
    ),
    "memories/helper.md": (
        "---\nabout: memories/tools/helper.py#util\n---\n# Helper\n\nAbout util.\n",
        "---\nabout: src/b.py#k\n---\n# Helper\n\nNow about k.\n",
    ),
}
GITIGNORES = ("", "src/b.py\n", "*.pyc\n")
CONFIGS = (
    'memory_roots = ["memories"]\n',
    'memory_roots = ["memories"]\nignore = ["src/b.py"]\n',
)


class LiveEqualsScratch(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.root = Path(tempfile.mkdtemp(prefix="moor-live-"))
        self.live: LiveCheck | None = None
        self.forgotten: dict[str, str] = {}  # memory path -> the text it had when forgotten

    def write(self, rel: str, text: str) -> None:
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if text == "" and rel.startswith("src/b"):
            path.unlink(missing_ok=True)
        else:
            path.write_text(text, encoding="utf-8")

    @initialize()
    def start(self) -> None:
        self.write("moor.toml", CONFIGS[0])
        for rel, versions in {**CODE, **MEMORIES}.items():
            self.write(rel, versions[0])
        with Session.open(self.root) as session:
            bind(session, [])
        self.live = LiveCheck(self.root)
        self.live.refresh(None)

    def refresh(self, changed: set[str]) -> None:
        assert self.live is not None
        self.live.refresh(changed)

    @rule(rel=st.sampled_from(sorted(CODE)), data=st.data())
    def edit_code(self, rel: str, data: st.DataObject) -> None:
        self.write(rel, data.draw(st.sampled_from(CODE[rel])))
        self.refresh({rel})

    @rule(rel=st.sampled_from(sorted(MEMORIES)), data=st.data())
    def edit_memory(self, rel: str, data: st.DataObject) -> None:
        self.write(rel, data.draw(st.sampled_from(MEMORIES[rel])))
        self.refresh({rel})

    @rule(text=st.sampled_from(GITIGNORES))
    def edit_gitignore(self, text: str) -> None:
        self.write(".gitignore", text)
        self.refresh({".gitignore"})

    @rule(text=st.sampled_from(CONFIGS))
    def edit_config(self, text: str) -> None:
        self.write("moor.toml", text)
        self.refresh({"moor.toml"})

    @rule()
    def bind_everything(self) -> None:
        assert self.live is not None
        self.live.commit()
        with Session.open(self.root) as session:
            bind(session, [])
        self.refresh({"moor.lock"})

    @rule(rel=st.sampled_from(sorted(MEMORIES)))
    def reaffirm_one(self, rel: str) -> None:
        assert self.live is not None
        self.live.commit()
        with Session.open(self.root) as session:
            reaffirm(session, str(self.root / rel), "checked by the property test")
        self.refresh({"moor.lock"})

    @rule(rel=st.sampled_from(sorted(MEMORIES)), told_between=st.booleans())
    def forget_then_write_back(self, rel: str, told_between: bool) -> None:
        """Forgotten (file removed, text tombstoned), then the same file saved again, as an
        editor's buffer still holding it does: told of both at once, or one by one."""
        assert self.live is not None
        path = self.root / rel
        if not path.is_file():
            return
        text = path.read_text(encoding="utf-8")
        self.live.commit()
        with Session.open(self.root) as session:
            if not forget(session, rel, "checked by the property test").ok:
                return  # refused (an empty text, a text already tombstoned)
        self.forgotten[rel] = text
        if told_between:
            self.refresh({rel, "moor.lock"})
            assert self.live.verify() == []
        self.write(rel, text)
        self.refresh({rel} if told_between else {rel, "moor.lock"})

    @rule(rel=st.sampled_from(sorted(MEMORIES)))
    def restore_forgotten(self, rel: str) -> None:
        assert self.live is not None
        if rel not in self.forgotten:
            return
        self.live.commit()
        (self.root / rel).unlink(missing_ok=True)  # restore writes the file again itself
        with Session.open(self.root) as session:
            restore(session, rel, "checked by the property test")
        del self.forgotten[rel]
        self.refresh({rel, "moor.lock"})

    @invariant()
    def live_equals_scratch(self) -> None:
        if self.live is not None:
            assert self.live.verify() == []

    def teardown(self) -> None:
        if self.live is not None:
            self.live.close()
        shutil.rmtree(self.root, ignore_errors=True)


LiveEqualsScratch.TestCase.settings = settings(
    max_examples=25,
    stateful_step_count=12,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    derandomize=True,
)
test_random_edit_sequences_keep_the_live_check_equal_to_a_check_from_scratch = (
    LiveEqualsScratch.TestCase
)


def test_the_property_test_can_fail_when_the_live_check_misses_a_change(tmp_path: Path) -> None:
    """Control: a change the live check is not told about makes it differ from scratch."""
    (tmp_path / "moor.toml").write_text(CONFIGS[0], encoding="utf-8")
    for rel, versions in {**CODE, **MEMORIES}.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(versions[0], encoding="utf-8")
    with Session.open(tmp_path) as session:
        bind(session, [])
    live = LiveCheck(tmp_path)
    try:
        live.refresh(None)
        assert live.verify() == []
        (tmp_path / "memories/tools/helper.py").write_text(CODE["memories/tools/helper.py"][1])
        live.refresh(set())  # not told
        assert live.verify() != []
        live.refresh({"memories/tools/helper.py"})
        assert live.verify() == []
    finally:
        live.close()
