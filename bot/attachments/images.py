"""Screenshots as pictures: their size read from the file's header before anything is decoded (a
decompression bomb — a small file that claims 30,000 × 30,000 pixels — is refused on its header), and the
small thumbnail the staff console shows, made here so no browser ever decodes a player's file to draw it.

Pillow reads the headers and draws the thumbnails: a maintained decoder for PNG, JPEG, GIF and WebP, where
hand-written parsers of four formats would get their corners wrong. Every decode is bounded by our own
pixel limit, checked on the header first, and by Pillow's decompression-bomb check besides.
"""

from __future__ import annotations

import io
import re
import warnings

from PIL import Image

DEFAULT_MAX_PIXELS = 40_000_000
"""Width × height of the largest screenshot taken (`ARCA_ATTACHMENT_MAX_PIXELS`): an 8K screen is 33 MP,
a long scrolling capture 1080 × 30,000 is 32 MP; a bomb claims billions."""
PILLOW_REFUSES = 2 * int(Image.MAX_IMAGE_PIXELS or 89_478_485)
"""Pillow's own decompression-bomb refusal: no image past it is ever opened."""
THUMB_SIDE = 320
"""The thumbnail's longer side, in pixels."""


def image_pixels(data: bytes) -> int | None:
    """Width × height from the header alone; None when the header is not a readable image.

    Pillow itself refuses to open an image past twice its `MAX_IMAGE_PIXELS` (about 179 million pixels):
    that refusal names the count, which is returned (every such image is past our limit, whose highest
    setting is below Pillow's)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)  # the caller judges the size
            with Image.open(io.BytesIO(data)) as image:  # reads the header, decodes no pixel
                return int(image.width) * int(image.height)
    except Image.DecompressionBombError as exc:
        claimed = re.search(r"\((\d+) pixels\)", str(exc))
        return int(claimed.group(1)) if claimed else PILLOW_REFUSES
    except (OSError, ValueError, SyntaxError):
        return None


def thumbnail(data: bytes, *, max_pixels: int = DEFAULT_MAX_PIXELS, side: int = THUMB_SIDE) -> bytes | None:
    """A JPEG of at most `side` × `side` pixels, or None for a file whose header claims more than
    `max_pixels` (never decoded) or that cannot be read."""
    pixels = image_pixels(data)
    if pixels is None or pixels > max_pixels:
        return None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            with Image.open(io.BytesIO(data)) as image:
                image.draft("RGB", (side, side))  # JPEG: decode at a reduced scale straight away
                image.thumbnail((side, side))
                picture = image.convert("RGB")
        out = io.BytesIO()
        picture.save(out, format="JPEG", quality=80, optimize=True)
        return out.getvalue()
    except (Image.DecompressionBombError, Image.DecompressionBombWarning, OSError, ValueError, SyntaxError):
        return None
