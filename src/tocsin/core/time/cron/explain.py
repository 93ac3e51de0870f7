"""``explain(spec)``: a cron expression in plain English, for Studio and the CLI.

Examples: ``0 9 * * 1-5`` → "At 09:00 on Monday through Friday"; ``*/15 * * * *`` →
"Every 15 minutes"; ``0 9 15 * 5`` → "At 09:00 on day 15 of the month or on Friday" (the
day-of-month/day-of-week OR rule of SPEC §4.4). The words describe the authored fields, so
lists, ranges and steps read as written.
"""

from __future__ import annotations

from tocsin.core.time.cron.fields import (
    DAY_OF_MONTH,
    DAY_OF_WEEK,
    FIVE_FIELDS,
    HOUR,
    MINUTE,
    MONTH,
    SECOND,
    SEVEN_FIELDS,
    SIX_FIELDS,
    YEAR,
    Field,
)
from tocsin.core.time.cron.spec import CronSpec

DAY_WORDS = ("Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday")
MONTH_WORDS = (
    "", "January", "February", "March", "April", "May", "June", "July", "August",
    "September", "October", "November", "December",
)  # fmt: skip
ORDINALS = ("", "first", "second", "third", "fourth", "fifth")
#: The noun of each field in phrases ("every 2nd day", "hours 9 through 17").
NOUNS = {
    SECOND.name: "second",
    MINUTE.name: "minute",
    HOUR.name: "hour",
    DAY_OF_MONTH.name: "day",
    MONTH.name: "month",
    DAY_OF_WEEK.name: "day of the week",
    YEAR.name: "year",
}
#: At most this many "HH:MM" times are listed before falling back to field-by-field words.
MAX_LISTED_TIMES = 6


def explain(spec: CronSpec) -> str:
    """Plain English for ``spec``: the times of day, then the days, months and years."""
    texts = _field_texts(spec)
    parts = [_time_phrase(spec, texts)]
    days = _day_phrase(spec, texts)
    if days:
        parts.append(days)
    elif parts[0].startswith("At ") and ":" in parts[0]:
        parts.append("every day")
    if not _is_star(texts[MONTH.name]):
        parts.append("in " + _values(texts[MONTH.name], MONTH))
    if YEAR.name in texts and not _is_star(texts[YEAR.name]):
        parts.append("in " + _values(texts[YEAR.name], YEAR))
    return " ".join(parts)


def _field_texts(spec: CronSpec) -> dict[str, str]:
    parts = spec.expression.split()
    layout = {5: FIVE_FIELDS, 6: SIX_FIELDS, 7: SEVEN_FIELDS}[len(parts)]
    return {field.name: text for field, text in zip(layout, parts, strict=True)}


def _is_star(text: str) -> bool:
    return text in ("*", "?")


def _every(text: str) -> int | None:
    """n for ``*/n``, else None."""
    if text.startswith("*/") and text[2:].isdigit():
        return int(text[2:])
    return None


def _time_phrase(spec: CronSpec, texts: dict[str, str]) -> str:
    minute, hour = texts[MINUTE.name], texts[HOUR.name]
    second = texts.get("second", "0")
    listed = len(spec.minutes) * len(spec.hours) <= MAX_LISTED_TIMES
    if listed and "*" not in minute + hour and (second == "0" or second.isdigit()):
        suffix = "" if second == "0" else f":{int(second):02d}"
        return "At " + _join([f"{h:02d}:{m:02d}{suffix}" for h in spec.hours for m in spec.minutes])
    if second != "0":
        return _seconds_phrase(second, minute, hour)
    if _is_star(hour):
        if _is_star(minute):
            return "Every minute"
        if _every(minute):
            return f"Every {_every(minute)} minutes"
        if minute == "0":
            return "Every hour"
        return f"At {_unit(minute, MINUTE)} past every hour"
    if _is_star(minute):
        return f"Every minute during {_unit(hour, HOUR)}"
    if _every(minute):
        return f"Every {_every(minute)} minutes during {_unit(hour, HOUR)}"
    return f"At {_unit(minute, MINUTE)} past {_unit(hour, HOUR)}"


def _seconds_phrase(second: str, minute: str, hour: str) -> str:
    if _is_star(minute) and _is_star(hour):
        if _is_star(second):
            return "Every second"
        if _every(second):
            return f"Every {_every(second)} seconds"
    words = f"At {_unit(second, SECOND)}"
    if not _is_star(minute):
        words += f" of {_unit(minute, MINUTE)}"
    if not _is_star(hour):
        words += f" during {_unit(hour, HOUR)}"
    return words


def _unit(text: str, field: Field) -> str:
    """``text`` of a time field with its unit: "minute 5", "minutes 5 and 35", "every 2nd hour"."""
    words = _values(text, field)
    if words.startswith("every"):
        return words
    plural = "" if text.isdigit() else "s"
    return f"{NOUNS[field.name]}{plural} {words}"


def _day_phrase(spec: CronSpec, texts: dict[str, str]) -> str:
    dom, dow = texts[DAY_OF_MONTH.name], texts[DAY_OF_WEEK.name]
    dom_words = "" if _is_star(dom) else _dom_words(spec, dom)
    dow_words = "" if _is_star(dow) else "on " + _dow_words(spec, dow)
    if dom_words and dow_words:
        if spec.dom_star or spec.dow_star:
            return f"{dom_words} if it is also a {dow_words.removeprefix('on ')}"
        return f"{dom_words} or {dow_words}"
    return dom_words or dow_words


def _dom_words(spec: CronSpec, text: str) -> str:
    items = text.split(",")
    plain = ",".join(item for item in items if item.upper() != "L")
    words = []
    if plain:
        words.append(f"{_unit(plain, DAY_OF_MONTH)} of the month")
    if spec.last_day:
        words.append("the last day of the month")
    return "on " + _join(words)


def _dow_words(spec: CronSpec, text: str) -> str:
    words = []
    plain = [item for item in text.split(",") if "#" not in item and not _last_item(item)]
    if plain:
        words.append(_values(",".join(plain), DAY_OF_WEEK))
    for weekday in spec.last_weekdays:
        words.append(f"the last {DAY_WORDS[weekday]} of the month")
    for weekday, nth in spec.nth_weekdays:
        words.append(f"the {ORDINALS[nth]} {DAY_WORDS[weekday]} of the month")
    return _join(words)


def _last_item(item: str) -> bool:
    """``nL`` (last weekday n) — but not ``L`` alone, which is Saturday."""
    return len(item) > 1 and item.upper().endswith("L") and item.upper()[:-1] not in ("JU", "")


def _values(text: str, field: Field) -> str:
    """The comma list ``text`` of ``field`` in words: "1, 15 and 20", "Monday through Friday"."""
    return _join([_item(item, field) for item in text.split(",")])


def _item(item: str, field: Field) -> str:
    base, _, step = item.partition("/")
    if base in ("*", "?"):
        return (
            f"every {NOUNS[field.name]}"
            if not step
            else f"every {_ordinal(int(step))} {NOUNS[field.name]}"
        )
    first, dash, last = base.partition("-")
    words = _name(first, field) + (f" through {_name(last, field)}" if dash else "")
    if step:
        upto = "" if dash else f" through {_name(str(field.high), field)}"
        return f"every {_ordinal(int(step))} {NOUNS[field.name]} from {words}{upto}"
    return words


def _name(token: str, field: Field) -> str:
    upper = token.upper()
    if field is DAY_OF_WEEK:
        if upper == "L":
            return DAY_WORDS[6]
        names = [name[:3].upper() for name in DAY_WORDS]
        return DAY_WORDS[names.index(upper) if upper in names else int(token) % 7]
    if field is MONTH:
        names = [name[:3].upper() for name in MONTH_WORDS]
        return MONTH_WORDS[names.index(upper) if upper in names else int(token)]
    return token


def _ordinal(number: int) -> str:
    suffix = (
        "th" if 11 <= number % 100 <= 13 else {1: "st", 2: "nd", 3: "rd"}.get(number % 10, "th")
    )
    return f"{number}{suffix}"


def _join(words: list[str]) -> str:
    if len(words) <= 1:
        return "".join(words)
    return ", ".join(words[:-1]) + " and " + words[-1]
