"""The reasons of ``cron schedule invalid: <reason>`` (SPEC §4.4), one formatter per rejection.

Every reason names the field and quotes the offending token, then the whole expression.
The ``cron schedule invalid: `` prefix itself is :func:`tocsin.messages.cron_invalid`.
"""

from __future__ import annotations

STRICT_FIELDS = "minute hour day-of-month month day-of-week"


def empty_expression() -> str:
    return "the expression is empty; expected 5 fields (" + STRICT_FIELDS + ")"


def bad_separator(char: str, expr: str) -> str:
    return (
        f"U+{ord(char):04X} ({char!r}) is not a field separator in {expr!r}; "
        "separate fields with ASCII spaces or tabs"
    )


def field_count_strict(got: int, expr: str) -> str:
    extra = ""
    if got > 5:
        extra = "; a seconds or sixth field is not allowed in the strict dialect"
    return f"expected 5 fields ({STRICT_FIELDS}), got {got} in '{expr}'{extra}"


def field_count_extended(got: int, expr: str) -> str:
    return (
        "expected 5, 6 (seconds first) or 7 (seconds first, year last) fields, "
        f"got {got} in '{expr}'"
    )


def macro(token: str, expr: str) -> str:
    return f"macro '{token}' is not supported in '{expr}'; write the fields out"


def empty_item(field: str, text: str, expr: str) -> str:
    return f"{field} list '{text}' has an empty item in '{expr}'"


def not_a_number(field: str, token: str, expr: str) -> str:
    return f"{field} value '{token}' is not a number in '{expr}'"


def out_of_range(field: str, token: str, low: int, high: int, expr: str) -> str:
    return f"{field} value '{token}' out of range {low}-{high} in '{expr}'"


def name_not_allowed(field: str, token: str, expr: str) -> str:
    return f"{field} name '{token}' is not allowed in the strict dialect (use numbers) in '{expr}'"


def name_wrong_field(field: str, token: str, expr: str) -> str:
    return f"{field} value '{token}' is a name that {field} does not accept in '{expr}'"


def symbol_not_allowed(field: str, symbol: str, token: str, dialect: str, expr: str) -> str:
    return f"{field} '{symbol}' in '{token}' is not allowed in the {dialect} dialect in '{expr}'"


def question_not_alone(field: str, text: str, expr: str) -> str:
    return f"{field} '?' must stand alone, not in the list '{text}' in '{expr}'"


def reversed_range(field: str, token: str, expr: str) -> str:
    return f"{field} range '{token}' is reversed (start > end) in '{expr}'"


def step_on_value(field: str, token: str, expr: str) -> str:
    return f"{field} step '{token}' is on a single value; use '*' or a range before '/' in '{expr}'"


def step_not_positive(field: str, token: str, expr: str) -> str:
    return f"{field} step '{token}' must be a positive number in '{expr}'"


def nth_out_of_range(field: str, token: str, expr: str) -> str:
    return f"{field} occurrence '{token}' out of range: '#' takes 1-5 in '{expr}'"


def never_fires(expr: str, day_fields: dict[str, str]) -> str:
    listed = ", ".join(f"{name} '{text}'" for name, text in day_fields.items())
    return f"'{expr}' can never fire: no calendar date matches {listed}"


def too_long(length: int, limit: int) -> str:
    return (
        f"the expression is {length} characters long; at most {limit} are taken "
        "(use ranges and steps, such as 0-30/5, instead of long lists)"
    )


def not_text(expr: object) -> str:
    return f"the expression must be text, got {type(expr).__name__}"
