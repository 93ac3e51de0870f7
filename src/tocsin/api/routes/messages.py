"""A chatroom's message feed, written by ``notify`` actions (SPEC §10). Member read."""

from __future__ import annotations

import uuid
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Path

from ..deps import Credentials, Limit, Skip, TocsinDep
from ..models import Page, error_responses

router = APIRouter(prefix="/private/module/custom_tables/chatroom", tags=["messages"])

ChatroomId = Annotated[uuid.UUID, Path(description="the chatroom's UUID")]


def chatroom_member(chatroom_id: ChatroomId, creds: Credentials, tocsin: TocsinDep) -> str:
    """The chatroom id, if the bearer token is at least a member of that chatroom."""
    token = creds.credentials if creds is not None else None
    tocsin.authorize(token, scope="chatroom", scope_id=str(chatroom_id), role="member")
    return str(chatroom_id)


Chatroom = Annotated[str, Depends(chatroom_member)]


@router.get("/{chatroom_id}/messages", response_model=Page, responses=error_responses(401, 403))
def list_messages(
    chatroom: Chatroom, tocsin: TocsinDep, skip: Skip = 0, limit: Limit = 50
) -> dict[str, Any]:
    """The chatroom's messages, newest first (as runs are)."""
    return tocsin.messages(chatroom, skip=skip, limit=limit)
