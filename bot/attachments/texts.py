"""What the player is told about a refused file, and the line the model reads about an accepted one."""

from __future__ import annotations

import re

from bot.attachments.box import AttachmentBox, Refusal, StoredAttachment
from bot.vocabulary.particles import particle


def size_text(size: int) -> str:
    if size >= 1024 * 1024:
        return f"{size / (1024 * 1024):.1f} MB"
    if size >= 1024:
        return f"{size / 1024:.0f} KB"
    return f"{size} B"


def refusal_text(refusal: Refusal, locale: str) -> str:
    name = refusal.name
    limit = size_text(refusal.limit)
    if locale == "ko":
        quoted = f"'{name}'"
        if refusal.code == "too_large":
            return f"첨부 파일 {particle(quoted, '은/는')} {size_text(refusal.size)}로 너무 큽니다(최대 {limit}). 파일은 받지 않았고, 메시지에는 답변드릴게요."
        if refusal.code == "unreadable":
            return f"첨부 파일 {particle(quoted, '을/를')} 받지 못했습니다. 다시 보내 주세요. 메시지에는 답변드릴게요."
        if refusal.code == "too_many_pixels":
            return f"이미지 {particle(quoted, '은/는')} 해상도가 너무 큽니다({refusal.size:,} 픽셀, 최대 {refusal.limit:,} 픽셀). 화면 크기 그대로의 스크린샷을 보내 주세요. 메시지에는 답변드릴게요."
        if refusal.code == "quota":
            return f"아직 보내지 않은 첨부 파일이 너무 많아 {particle(quoted, '을/를')} 받지 않았습니다. 올려 둔 파일을 메시지와 함께 보내 주세요(보내지 않은 파일은 잠시 뒤 지워집니다)."
        if refusal.code == "address_quota":
            return f"지금 이 연결에서 올린 첨부 파일이 너무 많아 {particle(quoted, '을/를')} 받지 않았습니다. 잠시 후 다시 보내 주세요."
        if refusal.code == "executable":
            return f"첨부 파일 {particle(quoted, '은/는')} 실행 파일이라 받을 수 없습니다. 스크린샷(PNG, JPEG, WebP, GIF)이나 .txt/.log 파일만 보낼 수 있어요. 메시지에는 답변드릴게요."
        return f"첨부 파일 {particle(quoted, '은/는')} 지원하지 않는 형식입니다. 스크린샷(PNG, JPEG, WebP, GIF)이나 .txt/.log 파일만 보낼 수 있어요. 메시지에는 답변드릴게요."
    if refusal.code == "too_large":
        return f"The attachment '{name}' is {size_text(refusal.size)}, over the {limit} limit. The file was not kept; your message will still be answered."
    if refusal.code == "unreadable":
        return f"The attachment '{name}' could not be received; please send it again. Your message will still be answered."
    if refusal.code == "too_many_pixels":
        return f"The image '{name}' is too large in pixels ({refusal.size:,}; at most {refusal.limit:,}). Send a screenshot at your screen's size. Your message will still be answered."
    if refusal.code == "quota":
        return f"The attachment '{name}' was not kept: you have too many files waiting to be sent. Send them with a message first (unsent files are deleted after a while)."
    if refusal.code == "address_quota":
        return f"The attachment '{name}' was not kept: too many files were uploaded from this connection just now. Please try again later."
    if refusal.code == "executable":
        return f"The attachment '{name}' is a program and cannot be accepted. Send a screenshot (PNG, JPEG, WebP, GIF) or a .txt/.log file. Your message will still be answered."
    return f"The attachment '{name}' is not a supported type. Send a screenshot (PNG, JPEG, WebP, GIF) or a .txt/.log file. Your message will still be answered."


def model_note(item: StoredAttachment) -> str:
    """The line added to the player's message for the model (and the thread's history)."""
    what = "screenshot" if item.kind == "image" else "text file"
    return f"[the player attached a {what}: {item.name}, {size_text(item.size)}]"


MODEL_NOTE_LINE = re.compile(
    r"^\[the player attached an? (?:screenshot|text file): (?P<name>.+), [0-9.]+ (?:B|KB|MB)\]$"
)
"""A `model_note` line (a file name cannot hold a line break: `clean_name` drops control characters)."""


def split_model_notes(text: str) -> tuple[str, list[str]]:
    """(`text` as the player wrote it, the names of the files its `model_note` lines name): the notes are
    for the model only; a page shows the files as files."""
    if "[the player attached a" not in text:
        return text, []
    kept, names = [], []
    for line in text.split("\n"):
        found = MODEL_NOTE_LINE.match(line)
        if found:
            names.append(found["name"])
        else:
            kept.append(line)
    return "\n".join(kept).strip(), names


def without_model_notes(text: str) -> str:
    """`text` as the player wrote it, without the `model_note` lines."""
    return split_model_notes(text)[0]


async def attachment_lines(box: AttachmentBox, thread_id: str) -> list[str]:
    """`/thread show`'s list of the thread's files (the staff console shows them: `/staff/attachments/ID`)."""
    kept = await box.of_thread(thread_id)
    if not kept:
        return []
    lines = [f"첨부 파일 {len(kept)}개 / attachments:"]
    for item in kept[-20:]:
        lines.append(f"- {item.name} ({item.mime.split(';')[0]}, {size_text(item.size)}) id {item.id}")
    return lines
