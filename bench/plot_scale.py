"""The scale curve as an SVG: seconds per GB against input size (stdin: the rows of
bench/scale.sh, `records bytes passes levels runs median run...`), with the mean, the ±10% band
around it and floor2 per GB (argv[1]: floor2 seconds per byte). Standard library only."""

from __future__ import annotations

import sys

W, H, L, R, T, B = 640, 400, 70, 20, 40, 50


def el(tag: str, text: str | None = None, **attrs: object) -> str:
    """One SVG element; attribute names use `_` for `-`."""
    a = " ".join(f'{k.replace("_", "-")}="{v}"' for k, v in attrs.items())
    return f"<{tag} {a}/>" if text is None else f"<{tag} {a}>{text}</{tag}>"


def main() -> None:
    floor_per_byte = float(sys.argv[1])
    pts: list[tuple[float, float]] = []
    for line in sys.stdin:
        f = line.split()
        if len(f) >= 6:
            gb = float(f[1]) / 1e9
            pts.append((gb, float(f[5]) / gb))
    if not pts:
        sys.exit("no rows on stdin")
    mean = sum(p for _, p in pts) / len(pts)
    floor = floor_per_byte * 1e9
    xmax = max(g for g, _ in pts) * 1.05
    ymax = max(max(p for _, p in pts), mean * 1.1, floor) * 1.25

    def x(g: float) -> str:
        return f"{L + g / xmax * (W - L - R):.1f}"

    def y(v: float) -> str:
        return f"{H - B - v / ymax * (H - T - B):.1f}"

    band_h = float(y(mean * 0.9)) - float(y(mean * 1.1))
    right = W - R - 4
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" '
        'font-family="sans-serif" font-size="12">',
        el("rect", width=W, height=H, fill="white"),
        el(
            "text",
            "oxsort two-pass sort: seconds per GB against size",
            x=W / 2,
            y=20,
            text_anchor="middle",
            font_size=14,
        ),
        el("rect", x=L, y=y(mean * 1.1), width=W - L - R, height=f"{band_h:.1f}", fill="#dde8f5"),
        el(
            "line", x1=L, x2=W - R, y1=y(mean), y2=y(mean), stroke="#4477aa", stroke_dasharray="4 3"
        ),
        el(
            "text",
            f"mean {mean:.2f} s/GB, ±10%",
            x=right,
            y=float(y(mean * 1.1)) - 4,
            text_anchor="end",
            fill="#4477aa",
        ),
        el(
            "line",
            x1=L,
            x2=W - R,
            y1=y(floor),
            y2=y(floor),
            stroke="#aa4444",
            stroke_dasharray="2 2",
        ),
        el(
            "text",
            f"disk floor2 {floor:.2f} s/GB",
            x=right,
            y=float(y(floor)) + 14,
            text_anchor="end",
            fill="#aa4444",
        ),
        el("line", x1=L, x2=L, y1=T, y2=H - B, stroke="black"),
        el("line", x1=L, x2=W - R, y1=H - B, y2=H - B, stroke="black"),
        el("text", "input, GB", x=W / 2, y=H - 12, text_anchor="middle"),
        el(
            "text",
            "seconds per GB",
            x=16,
            y=H / 2,
            text_anchor="middle",
            transform=f"rotate(-90 16 {H / 2})",
        ),
    ]
    for i in range(6):
        v = ymax * i / 5
        out.append(el("text", f"{v:.2f}", x=L - 6, y=float(y(v)) + 4, text_anchor="end"))
    path = " ".join(f"{'M' if i == 0 else 'L'}{x(g)},{y(p)}" for i, (g, p) in enumerate(pts))
    out.append(el("path", d=path, fill="none", stroke="black", stroke_width=2))
    for g, p in pts:
        out.append(el("circle", cx=x(g), cy=y(p), r=4))
        out.append(el("text", f"{g:g}", x=x(g), y=H - B + 16, text_anchor="middle"))
        out.append(el("text", f"{p:.2f}", x=float(x(g)) + 6, y=float(y(p)) - 8))
    out.append("</svg>")
    print("\n".join(out))


if __name__ == "__main__":
    main()
