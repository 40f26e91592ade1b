"""Server-rendered SVG charts for the dashboard (no JavaScript, no charting library)."""

from __future__ import annotations

from markupsafe import Markup, escape

BAR_COLOR = "#2f6fdf"


def bars(data: dict[str, int | float], *, title: str, unit: str = "", width: int = 560) -> Markup:
    """A horizontal bar chart of `data` (label → value); an empty chart says so."""
    items = list(data.items())
    row, label_w, pad = 26, 170, 8
    height = max(1, len(items)) * row + 2 * pad
    parts = [
        f'<svg class="chart" role="img" viewBox="0 0 {width} {height}" width="100%" '
        f'aria-label="{escape(title)}" xmlns="http://www.w3.org/2000/svg"><title>{escape(title)}</title>'
    ]
    if not items:
        parts.append(f'<text x="{pad}" y="{pad + 16}" class="empty">—</text>')
    top = max((float(v) for _, v in items), default=0) or 1.0
    bar_w = width - label_w - 90
    for i, (label, value) in enumerate(items):
        y = pad + i * row
        w = max(1.0, bar_w * float(value) / top) if value else 0
        shown = f"{value:,}" if isinstance(value, int) else f"{value:.3g}"
        parts.append(
            f'<text x="{label_w - 6}" y="{y + 17}" text-anchor="end">{escape(str(label)[:28])}</text>'
            f'<rect x="{label_w}" y="{y + 4}" width="{w:.1f}" height="{row - 8}" fill="{BAR_COLOR}" rx="3"/>'
            f'<text x="{label_w + w + 6:.1f}" y="{y + 17}">{escape(shown)}{escape(unit)}</text>'
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
