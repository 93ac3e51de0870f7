"""Template substitution, never evaluation (SPEC §10, §4.5)."""

from __future__ import annotations

from datetime import UTC, datetime

from tocsin import messages
from tocsin.core.config.templates import TemplateContext, has_row_tokens, render

WHEN = datetime(2026, 8, 27, 5, 0, tzinfo=UTC)
ROW = {"Name": "Case 7", "Due Date": "2026-09-01", "Due": "x", "Amount": 12.5, "案件名稱": "合約"}
CTX = TemplateContext(
    row=ROW, record_id="rec-1", trigger_id="trg_1", run_id="run_1", scheduled_for=WHEN
)
RECORDLESS = TemplateContext(row=None, trigger_id="trg_1", run_id="run_1", scheduled_for=WHEN)


def test_row_tokens() -> None:
    assert render("Hi $row.Name!", CTX) == "Hi Case 7!"
    assert render("id=$row.id", CTX) == "id=rec-1"
    assert render("due $row.Due Date soon", CTX) == "due 2026-09-01 soon"  # longest column
    assert render("${row.Due Date}|${row.Due}", CTX) == "2026-09-01|x"
    assert render("案件明天到期：$row.案件名稱", CTX) == "案件明天到期：合約"


def test_run_and_trigger_tokens() -> None:
    assert render("$trigger.id/$run.id", CTX) == "trg_1/run_1"
    assert render("at $run.scheduled_for", CTX) == "at 2026-08-27T05:00:00+00:00"
    assert render("$run.scheduled_for", TemplateContext(row=None)) == ""


def test_run_and_trigger_tokens_end_at_a_hyphen() -> None:
    assert render("key-$run.id-$trigger.id-v1", CTX) == "key-run_1-trg_1-v1"
    assert render("$run.identity", CTX) == "$run.identity"  # not a token: left as written


def test_whole_token_keeps_the_cell_type() -> None:
    assert render("$row.Amount", CTX) == 12.5
    assert render("total $row.Amount", CTX) == "total 12.5"


def test_recordless_renders_row_tokens_empty() -> None:
    assert render("Hi $row.Name, id $row.id ${row.Due Date}.", RECORDLESS) == "Hi , id  ."
    assert render("$row.Amount", RECORDLESS) == ""
    assert render("run $run.id", RECORDLESS) == "run run_1"


def test_unknown_column_renders_empty() -> None:
    assert render("[$row.Nope]", CTX) == "[]"


def test_no_evaluation() -> None:
    assert render("$row.__class__ {{ 7*7 }} ${row.Name.upper()}", CTX) == " {{ 7*7 }} "
    assert render("$unknown.thing $trigger.name $ 5", CTX) == "$unknown.thing $trigger.name $ 5"


def test_recursive_over_structures() -> None:
    value = {"a": ["$row.Name", {"$row.Name": "$trigger.id"}], "n": 3, "b": None, "t": True}
    assert render(value, CTX) == {
        "a": ["Case 7", {"$row.Name": "trg_1"}],
        "n": 3,
        "b": None,
        "t": True,
    }


def test_embedded_non_text_values() -> None:
    row = {"Flag": True, "Empty": None, "List": [1, "a"]}
    ctx = TemplateContext(row=row)
    assert render("$row.Flag/$row.Empty/$row.List", ctx) == 'true//[1,"a"]'


def test_has_row_tokens() -> None:
    assert has_row_tokens("$row")
    assert has_row_tokens("x $row.Name")
    assert has_row_tokens("${row.Due Date}")
    assert has_row_tokens({"values": {"a": ["$row.id"]}})
    assert not has_row_tokens("$rows and $trigger.id")
    assert not has_row_tokens({"$row.Name": "static"})
    assert not has_row_tokens(["plain", 3, None])


def test_scheduled_for_of_any_shape_never_raises() -> None:
    naive = TemplateContext(row=None, scheduled_for=datetime(2026, 8, 27, 5))
    assert render("$run.scheduled_for", naive) == "2026-08-27T05:00:00"
    text = TemplateContext(row=None, scheduled_for="2026-08-27T05:00:00+00:00")  # type: ignore[arg-type]
    assert render("$run.scheduled_for", text) == "2026-08-27T05:00:00+00:00"


def test_recordless_action_texts_are_verbatim() -> None:
    """The §4.5 runtime texts the actions raise for interval/daily runs."""
    assert messages.invoke_command_row_input("case") == (
        "invoke_command input 'case': \"$row\" tokens require record context — "
        "interval/daily schedule triggers fire with no record"
    )
    assert messages.DELETE_RECORD_NEEDS_ROW == (
        "delete_record requires record context — "
        "interval/daily schedule triggers fire with no record"
    )


def test_braced_id_is_the_record_id() -> None:
    ctx = TemplateContext(row={"id": "column value"}, record_id="rec-9")
    assert render("${row.id} $row.id", ctx) == "rec-9 rec-9"
