"""Observing custom anchors for one session: each declared command runs at most once (a
check observes every anchor once however many memories share it), and only when the
workspace is trusted (`trust.py`); otherwise nothing runs and the anchor is unverified."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path

from moor_extractors.model import Failure, Reason
from moor_extractors.reference import ANCHOR_PREFIX, Reference
from moor_store.journal import utc_now

from moor_engine.anchors import facts
from moor_engine.anchors.declarations import Declaration
from moor_engine.anchors.trust import Trust, decide
from moor_engine.grounding.observe import Observation


class CommandObserver:
    def __init__(
        self,
        root: Path,
        declarations: Mapping[str, Declaration],
        flag: bool | None,
        host: Mapping[str, str] | None = None,
    ) -> None:
        self.root = root
        self.declarations = declarations
        self.flag = flag  # the person's word for this run (`trust.decide`)
        self._trust: Trust | None = None
        self.host = dict(os.environ if host is None else host)
        self._seen: dict[str, Observation] = {}
        self._fresh: set[str] = set()  # looked at (run, or refused) and not journalled yet
        self.runs = 0  # commands started by this observer, for tests and benchmarks
        self.seconds: dict[str, float] = {}  # each command's own run time
        self.texts: dict[str, str] = {}  # the facts seen, as text, by their address
        self.max_input_size = 2 * 1024 * 1024  # the workspace's max_file_size (Session.open)

    @property
    def trust(self) -> Trust:
        """Decided at the first command anchor: a workspace without one never asks."""
        if self._trust is None:
            self._trust = decide(self.root, self.flag, self.host)
        return self._trust

    def observe(self, ref: Reference) -> Observation:
        assert ref.anchor is not None
        name = ref.anchor
        if name not in self._seen:
            self._seen[name] = self._observe(name)
            self._fresh.add(ANCHOR_PREFIX + name)
        return self._seen[name]

    def take_fresh(self) -> set[str]:
        """The anchors looked at since the last call: what a check may journal. A live
        check commits after every refresh, and a refresh that ran no command must not add
        an observation (a streak counts runs, memory: command-anchors-move-after-their-streak)."""
        fresh, self._fresh = self._fresh, set()
        return fresh

    def forget(self, names: Iterable[str] | None = None) -> None:
        """Observe these commands (None: every one) again on the next look (the editor's
        next round, `anchors.cadence`)."""
        if names is None:
            self._seen.clear()
        for name in names or ():
            self._seen.pop(name, None)

    def _observe(self, name: str) -> Observation:
        declaration = self.declarations.get(name)
        if declaration is None:
            declared = ", ".join(sorted(self.declarations)) or "none"
            return Failure(
                Reason.UNEVALUABLE,
                "undeclared_anchor",
                f"anchor:{name} is not declared in moor.toml ([anchors.{name}]); "
                f"declared: {declared}",
            )
        if not self.trust.trusted:
            return Failure(
                Reason.UNREACHABLE,
                "workspace_not_trusted",
                f"anchor:{name}: {self.trust.how}; nothing was run",
            )
        # Imported here: a workspace without command anchors never pays for it.
        from moor_engine.anchors import probe

        self.runs += 1
        output = probe.run(self.root, declaration, self.host)
        if isinstance(output, Failure):
            return output
        self.seconds[name] = output.seconds
        value = facts.parse(declaration, output.stdout)
        if isinstance(value, Failure):
            return value
        inputs = facts.inputs_digest(self.root, declaration, self.max_input_size)
        if isinstance(inputs, Failure):
            return inputs
        state = None
        if declaration.rules:
            from moor_engine.anchors import rules

            text = rules.state_text(rules.as_object(value), name)
            if isinstance(text, Failure):
                return text
            state = (text, utc_now())
        observation = facts.observation(declaration, value, inputs, state)
        self.texts[observation.address] = facts.text(declaration, value)
        return observation

    def seals(self, address: str) -> list[tuple[str, str]]:
        """What a bind or reaffirm seals of a command anchor observed at `address`: its
        facts as text, so `moor diff` can show what changed since."""
        text = self.texts.get(address)
        return [] if text is None else [(address, text)]
