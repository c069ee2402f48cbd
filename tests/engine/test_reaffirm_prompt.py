"""What a reaffirm asks a person, and the reasons it offers, come from what changed."""

from __future__ import annotations

from moor_engine.grounding.actions import bind
from moor_engine.grounding.trust import MemoryReport
from moor_engine.grounding.verdicts import reaffirm_prompt
from moor_engine.session import Session

from tests.conftest import Workspace

BOUND = 'class Client:\n    def send(self, data):\n        """Send it."""\n        return data\n'


def report_after(
    ws: Workspace, code: str, memory_text: str | None = None, watch: list[str] | None = None
) -> MemoryReport:
    ws.write("src/client.py", BOUND)
    ws.memory("client", "src/client.py#Client.send", watch=watch)
    with Session.open(ws.root) as session:
        assert not bind(session, []).refused
    ws.write("src/client.py", code)
    if memory_text is not None:
        ws.write("memories/client.md", memory_text)
    with Session.open(ws.root) as session:
        [memory] = session.check(session.select([])).memories
    return memory


def test_a_changed_body_is_named_with_its_symbol_and_offers_review_or_refactor(
    ws: Workspace,
) -> None:
    body = BOUND.replace("return data", "return data * 2")
    prompt = reaffirm_prompt(report_after(ws, body))
    assert prompt.changed == "body of Client.send changed since bound"
    assert prompt.reasons == (
        "Reviewed the change: the memory still holds",
        "Refactor only: behaviour unchanged",
    )


def test_a_documentation_change_offers_other_reasons_than_a_code_change(ws: Workspace) -> None:
    doc = BOUND.replace("Send it.", "Send it, once.")
    prompt = reaffirm_prompt(report_after(ws, doc, watch=["signature", "body", "doc"]))
    assert prompt.changed == "doc of Client.send changed since bound"
    assert prompt.reasons[0] == "Reviewed the documentation change: the memory still holds"


def test_a_rewritten_memory_says_its_own_text_changed(ws: Workspace) -> None:
    report = report_after(ws, BOUND)  # the code as bound: only the memory changed
    assert reaffirm_prompt(report).changed == "nothing changed since bound"  # the control
    text = ws.read("memories/client.md").replace("A decision", "A revised decision")
    prompt = reaffirm_prompt(report_after(ws, BOUND, text))
    assert prompt.changed == "the memory's text changed since bound"
    assert prompt.reasons[0] == "Reviewed the edited memory: it holds for the code as it is"
