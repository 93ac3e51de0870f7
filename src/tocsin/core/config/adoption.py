"""Adoption: which stored trigger an authored trigger is (SPEC §5, §11). Pure.

An authored trigger (an item of a ``PUT …/triggers`` body, or an IaC document) names its stored
counterpart by ``id``. One sent *without* an id that is structurally equal to a stored trigger
no other authored trigger names is that trigger: it is **adopted** and keeps the stored id, and
so its state row and its occurrence ledger. Re-sending an unchanged config without ids therefore
changes nothing instead of retiring every trigger and firing every already-fired record again
under new ids.

Structural equality compares the omit-when-default normal form (:func:`comparable`) with the ids
the authored side leaves out ignored: the trigger's own id, and the id of each action sent
without one. Action ids are adopted the same way (receipts are matched by action id, SPEC §9): an
authored action without ``id`` takes the id of an equal action of its (matched or adopted) stored
trigger that no other authored action names.

Everything here tolerates malformed input (it runs before validation): anything that is not a
list of objects is left as it is, for ``validate_triggers`` to refuse with the right text.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tocsin.core.config.triggers import normalize_trigger


def comparable(trigger: Mapping[str, Any]) -> dict[str, Any]:
    """The form two triggers are compared in: omit-when-default, ``when`` null/``[]`` absent."""
    out = normalize_trigger(trigger)
    when = out.get("when")
    if when is None or (isinstance(when, list) and not when):
        out.pop("when", None)
    return out


def blank_id(value: object) -> bool:
    """An id the author left out (absent, null or empty): a new one is assigned on save."""
    return value is None or value == ""


def _without_id(item: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in item.items() if k != "id"}


def _action_equal(authored: object, stored: object) -> bool:
    if not isinstance(authored, Mapping) or not isinstance(stored, Mapping):
        return authored == stored
    if blank_id(authored.get("id")):
        return _without_id(authored) == _without_id(stored)
    return dict(authored) == dict(stored)


def structurally_equal(authored: Mapping[str, Any], stored: Mapping[str, Any]) -> bool:
    """Whether ``authored`` (which may lack ids) describes exactly ``stored``."""
    mine, theirs = comparable(authored), comparable(stored)
    if blank_id(authored.get("id")):
        mine.pop("id", None)
        theirs.pop("id", None)
    my_actions, their_actions = mine.pop("actions", None), theirs.pop("actions", None)
    if mine != theirs:
        return False
    if not isinstance(my_actions, list) or not isinstance(their_actions, list):
        return bool(my_actions == their_actions)
    if len(my_actions) != len(their_actions):
        return False
    return all(_action_equal(a, s) for a, s in zip(my_actions, their_actions, strict=True))


@dataclass(frozen=True, slots=True)
class Match:
    """Authored trigger ``index`` is stored trigger ``stored`` (None: a new trigger);
    ``adopted`` when it was matched by structure rather than by its id."""

    index: int
    stored: int | None
    adopted: bool


def _stored_id(item: object) -> str | None:
    """The non-empty string id of a trigger or action object, else None (an id of any other
    type is left for validation to refuse)."""
    value = item.get("id") if isinstance(item, Mapping) else None
    return value if isinstance(value, str) and value else None


def match_triggers(authored: Sequence[object], stored: Sequence[object]) -> list[Match]:
    """Pair each authored trigger with its stored trigger: by id first, then by structure
    (each stored trigger at most once, first equal one in stored order)."""
    by_id = {tid: i for i, t in enumerate(stored) if (tid := _stored_id(t)) is not None}
    named = {tid for item in authored if (tid := _stored_id(item)) is not None}
    taken = {i for tid, i in by_id.items() if tid in named}
    matches: list[Match] = []
    for index, item in enumerate(authored):
        if not isinstance(item, Mapping):
            matches.append(Match(index, None, adopted=False))
        elif not blank_id(item.get("id")):
            given = _stored_id(item)  # an id of another type is refused by validation
            found = by_id.get(given) if given is not None else None
            matches.append(Match(index, found, adopted=False))
        else:
            found = _first_equal(item, stored, taken)
            if found is not None:
                taken.add(found)
            matches.append(Match(index, found, adopted=found is not None))
    return matches


def _first_equal(item: Mapping[str, Any], stored: Sequence[object], taken: set[int]) -> int | None:
    for i, candidate in enumerate(stored):
        if i in taken or not isinstance(candidate, Mapping):
            continue
        if structurally_equal(item, candidate):
            return i
    return None


def adopt_action_ids(authored: object, stored: object) -> object:
    """``authored``'s actions with the ids of equal stored actions filled in where left out."""
    if not isinstance(authored, list) or not isinstance(stored, list):
        return authored
    named = {aid for a in authored if (aid := _stored_id(a)) is not None}
    free = [s for s in stored if isinstance(s, Mapping) and _stored_id(s) not in named]
    out: list[object] = []
    for action in authored:
        if isinstance(action, Mapping) and blank_id(action.get("id")):
            twin = next((s for s in free if _action_equal(action, s)), None)
            if twin is not None:
                free.remove(twin)
                action = {"id": twin["id"], **_without_id(action)}
        out.append(action)
    return out


def adopt_ids(raw: object, stored: object) -> object:
    """``raw`` (a triggers config about to be saved) with the stored ids of adopted triggers
    and actions filled in; anything malformed is returned unchanged."""
    if not isinstance(raw, list) or not isinstance(stored, list) or not stored:
        return raw
    out: list[object] = []
    for match in match_triggers(raw, stored):
        item = raw[match.index]
        if isinstance(item, Mapping) and match.stored is not None:
            twin = stored[match.stored]
            assert isinstance(twin, Mapping)  # match_triggers pairs objects only
            item = {**item, "id": twin["id"]}
            if "actions" in item:
                item["actions"] = adopt_action_ids(item["actions"], twin.get("actions"))
        out.append(item)
    return out


__all__ = [
    "Match",
    "adopt_action_ids",
    "adopt_ids",
    "blank_id",
    "comparable",
    "match_triggers",
    "structurally_equal",
]
