"""Taking a message's attachments in: each file checked and kept (or refused with a reply in the player's
language), the kept ones linked to the thread and named in the text the model reads. The message's text
is answered either way."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field

from bot.attachments.box import MAX_PER_MESSAGE, AttachmentBox, Refusal, StoredAttachment
from bot.attachments.texts import model_note, refusal_text
from bot.attachments.uploads import Upload
from bot.vocabulary.language import detect_language

log = logging.getLogger(__name__)


@dataclass
class Admitted:
    """What a message's attachments became."""

    text: str
    """The player's text with one line per kept file (what the model and the history see)."""
    kept: list[StoredAttachment] = field(default_factory=list)
    refused: list[Refusal] = field(default_factory=list)

    @property
    def images(self) -> list[StoredAttachment]:
        return [a for a in self.kept if a.kind == "image"]


async def admit(
    box: AttachmentBox,
    items: Sequence[Upload | StoredAttachment],
    *,
    text: str,
    thread_id: str,
    owner: str,
    reply: Callable[[str], Awaitable[None]],
    audit: Callable[..., Awaitable[None]] | None = None,
) -> Admitted:
    """Check and keep `items` (web uploads arrive already kept), tell the player about each refused one,
    link the kept ones to `thread_id`, and add a line for each to `text`."""
    admitted = Admitted(text)
    for item in list(items)[:MAX_PER_MESSAGE]:
        if isinstance(item, StoredAttachment):
            admitted.kept.append(item)
            continue
        try:
            got = await box.take(item, owner=owner)
        except Exception:  # the download or the disk: the edge, caught once
            log.exception("could not take an attachment in")
            got = Refusal("unreadable", item.name, item.size, box.max_bytes)
        (admitted.refused if isinstance(got, Refusal) else admitted.kept).append(got)  # type: ignore[arg-type]
    locale = detect_language(text) if text.strip() else "ko"
    for refusal in admitted.refused:
        if audit is not None:
            await audit(
                actor=owner,
                action="attachment.refused",
                thread_id=thread_id,
                code=refusal.code,
                detail={"name": refusal.name, "size": refusal.size},
            )
        await reply(refusal_text(refusal, locale))
    await box.link(admitted.kept, thread_id)
    if admitted.kept:
        notes = [model_note(a) for a in admitted.kept]
        admitted.text = "\n".join([text.strip(), *notes]).strip()
    return admitted
