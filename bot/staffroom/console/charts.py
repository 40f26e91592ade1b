"""Server-rendered SVG charts for the dashboard (no JavaScript, no charting library)."""

from __future__ import annotations

from markupsafe import Markup, escape

BAR_COLOR = "#2f6fdf"
OVER_COLOR = "#c0392b"
CAP_COLOR = "#b36b00"


LABEL_CHARS = 40
"""A label longer than this is shortened with "…" (the whole label is the bar's tooltip)."""


def _text_width(text: str) -> float:
    """About how wide `text` is drawn at the charts' font size: Hangul and other wide characters take
    about twice a Latin letter's room."""
    return sum(13.0 if ord(ch) > 0x2E80 else 7.2 for ch in text)


def _short(label: str) -> str:
    return label if len(label) <= LABEL_CHARS else label[: LABEL_CHARS - 1] + "…"


def _label(label: str) -> Markup:
    """The label as drawn; a shortened one carries its whole text as a tooltip."""
    if len(label) <= LABEL_CHARS:
        return escape(label)
    return Markup(f"<title>{escape(label)}</title>{escape(_short(label))}")


def bars(
    data: dict[str, int | float],
    *,
    title: str,
    unit: str = "",
    width: int = 560,
    cap: float | None = None,
    cap_label: str = "",
) -> Markup:
    """A horizontal bar chart of `data` (label → value); an empty chart says so. With `cap`, a dashed
    line marks it (labelled `cap_label`) and bars above it are drawn in red."""
    items = list(data.items())
    # The label column fits the longest label (a policy section's name, a result code), so none is cut
    # at the chart's left edge; the chart grows instead of squeezing the bars.
    label_w = int(min(320.0, max(110.0, max((_text_width(_short(str(k))) for k in data), default=0) + 14)))
    width = max(width, label_w + 300)
    row, pad = (26 if len(items) <= 14 else 18), 8  # a month of days stays readable
    top_pad = pad + (18 if cap is not None else 0)
    height = max(1, len(items)) * row + top_pad + pad
    parts = [
        f'<svg class="chart" role="img" viewBox="0 0 {width} {height}" width="100%" '
        f'aria-label="{escape(title)}" xmlns="http://www.w3.org/2000/svg"><title>{escape(title)}</title>'
    ]
    if not items:
        parts.append(f'<text x="{pad}" y="{top_pad + 16}" class="empty">—</text>')
    top = max([float(v) for _, v in items] + [float(cap or 0)], default=0) or 1.0
    bar_w = width - label_w - 90
    for i, (label, value) in enumerate(items):
        y = top_pad + i * row
        w = max(1.0, bar_w * float(value) / top) if value else 0
        shown = f"{value:,}" if isinstance(value, int) else f"{value:.3g}"
        color = OVER_COLOR if cap is not None and float(value) > cap else BAR_COLOR
        parts.append(
            f'<text x="{label_w - 6}" y="{y + row - 9}" text-anchor="end">{_label(str(label))}</text>'
            f'<rect x="{label_w}" y="{y + 3}" width="{w:.1f}" height="{row - 6}" fill="{color}" rx="3"/>'
            f'<text x="{label_w + w + 6:.1f}" y="{y + row - 9}">{escape(shown)}{escape(unit)}</text>'
        )
    if cap is not None:
        x = label_w + bar_w * float(cap) / top
        anchor = "end" if x > width / 2 else "start"
        parts.append(
            f'<g class="cap"><line x1="{x:.1f}" y1="{pad + 10}" x2="{x:.1f}" y2="{height - pad}" '
            f'stroke="{CAP_COLOR}" stroke-width="2" stroke-dasharray="5 4"/>'
            f'<text x="{x:.1f}" y="{pad + 6}" text-anchor="{anchor}" fill="{CAP_COLOR}">'
            f"{escape(cap_label)}</text></g>"
        )
    parts.append("</svg>")
    return Markup("".join(parts))


def gauge(share: float, *, title: str, width: int = 260) -> Markup:
    """A 0-100 % bar for a share in [0, 1]."""
    share = min(1.0, max(0.0, float(share or 0)))
    inner = (width - 4) * share
    return Markup(
        f'<svg class="gauge" role="img" viewBox="0 0 {width} 22" width="{width}" height="22" '
        f'aria-label="{escape(title)} {share:.0%}" xmlns="http://www.w3.org/2000/svg">'
        f"<title>{escape(title)}</title>"
        f'<rect x="0" y="0" width="{width}" height="22" rx="4" fill="#e4e8ef"/>'
        f'<rect x="2" y="2" width="{inner:.1f}" height="18" rx="3" fill="{BAR_COLOR}"/>'
        f'<text x="{width / 2:.0f}" y="15" text-anchor="middle">{share:.0%}</text></svg>'
    )
