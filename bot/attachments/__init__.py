"""Attachments players send with a message: screenshots (PNG, JPEG, WebP, GIF) and text files, checked by
content, kept content-addressed under the data dir, linked to the thread, shown to staff and — for a model
that declares `vision` — sent to the model as image parts."""

from bot.attachments.box import AttachmentBox, Refusal, StoredAttachment
from bot.attachments.kinds import Sniffed, sniff
from bot.attachments.uploads import Upload

__all__ = ["AttachmentBox", "Refusal", "Sniffed", "StoredAttachment", "Upload", "sniff"]
