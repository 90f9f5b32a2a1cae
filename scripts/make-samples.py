#!/usr/bin/env python3
"""Generates the images in samples/: ours, made from code, so the project owns them.

    python3 scripts/make-samples.py        (needs numpy and the `vips` command from libvips-tools)

- landscape.jpg  1600×1000 JPEG: sky gradient, sun, hills, a house: colour and fine detail
- badge.png      512×512 RGBA PNG: a soft-edged red disc with a translucent ring on transparency
- pattern.png    800×600 8-bit greyscale PNG: rings and a checker, for scaling artefacts
- rotated.jpg    a 900×1200 portrait scene with an arrow pointing up, stored sideways (1200×900)
                 with EXIF orientation 6, as phones do: it must come out upright
- tall.jpg       600×1400 JPEG: a tall image, so cover crops and contain letterboxes visibly
"""
import os, struct, subprocess, sys, tempfile, zlib
import numpy as np

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "samples")


def png(path, pixels):
    """Writes an 8-bit PNG: pixels is HxW (grey), HxWx3 (RGB) or HxWx4 (RGBA) uint8."""
    h, w = pixels.shape[:2]
    channels = 1 if pixels.ndim == 2 else pixels.shape[2]
    colour_type = {1: 0, 3: 2, 4: 6}[channels]
    raw = b"".join(b"\x00" + pixels[y].tobytes() for y in range(h))
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, colour_type, 0, 0, 0))
                + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b""))


def jpeg(path, rgb, orientation=None):
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "in.png")
        png(src, rgb)
        subprocess.run(["vips", "copy", src, path + "[Q=85,strip]"], check=True)
    if orientation:
        add_exif_orientation(path, orientation)


def add_exif_orientation(path, orientation):
    """Inserts an APP1 Exif segment with one IFD entry, Orientation (0x0112), after SOI."""
    tiff = b"MM\x00\x2a" + struct.pack(">I", 8) + struct.pack(">H", 1) \
        + struct.pack(">HHIHH", 0x0112, 3, 1, orientation, 0) + struct.pack(">I", 0)
    payload = b"Exif\x00\x00" + tiff
    data = open(path, "rb").read()
    assert data[:2] == b"\xff\xd8"
    open(path, "wb").write(data[:2] + b"\xff\xe1" + struct.pack(">H", len(payload) + 2) + payload + data[2:])


def grid(h, w):
    y, x = np.mgrid[0:h, 0:w].astype(np.float32)
    return y / h, x / w


def landscape(h=1000, w=1600):
    y, x = grid(h, w)
    img = np.zeros((h, w, 3), np.float32)
    img[..., 0] = 0.35 + 0.4 * y
    img[..., 1] = 0.55 + 0.3 * y
    img[..., 2] = 0.95 - 0.2 * y
    sun = ((x - 0.75) * w) ** 2 + ((y - 0.25) * h) ** 2 < (0.08 * h) ** 2
    img[sun] = (1.0, 0.85, 0.3)
    for k, (height, colour) in enumerate([(0.62, (0.25, 0.55, 0.2)), (0.72, (0.15, 0.42, 0.12))]):
        ridge = height + 0.06 * np.sin(x * (9 + 5 * k) + k) + 0.02 * np.sin(x * 41)
        img[y > ridge] = colour
    house = (np.abs(x - 0.3) < 0.05) & (y > 0.66) & (y < 0.78)
    img[house] = (0.8, 0.2, 0.15)
    return (np.clip(img, 0, 1) * 255).astype(np.uint8)


def badge(size=512):
    y, x = grid(size, size)
    r = np.hypot(x - 0.5, y - 0.5)
    rgba = np.zeros((size, size, 4), np.float32)
    rgba[..., 0], rgba[..., 1], rgba[..., 2] = 0.9, 0.1, 0.15
    disc = np.clip((0.32 - r) * size / 4, 0, 1)
    ring = np.clip(1 - np.abs(r - 0.42) * size / 6, 0, 1) * 0.5
    rgba[..., 3] = np.maximum(disc, ring)
    rgba[..., 2] = np.where(ring > disc, 0.9, rgba[..., 2])
    return (rgba * 255 + 0.5).astype(np.uint8)


def pattern(h=600, w=800):
    y, x = grid(h, w)
    rings = 0.5 + 0.5 * np.cos(np.hypot((x - 0.5) * w, (y - 0.5) * h) * 0.15)
    checker = ((np.floor(x * 16) + np.floor(y * 12)) % 2) * 0.3
    return (np.clip(rings * 0.7 + checker, 0, 1) * 255).astype(np.uint8)


def portrait_with_arrow(h=1200, w=900):
    y, x = grid(h, w)
    img = np.zeros((h, w, 3), np.float32)
    img[..., 0], img[..., 1], img[..., 2] = 0.2 + 0.6 * y, 0.3, 0.8 - 0.5 * y
    shaft = (np.abs(x - 0.5) < 0.06) & (y > 0.35) & (y < 0.85)
    head = (y > 0.12) & (y < 0.38) & (np.abs(x - 0.5) < (y - 0.12) * 0.9)
    img[shaft | head] = (1.0, 1.0, 1.0)
    return (img * 255).astype(np.uint8)


def tall(h=1400, w=600):
    y, x = grid(h, w)
    img = np.stack([0.5 + 0.5 * np.sin(y * 20), 0.5 + 0.5 * np.cos(x * 12), y], axis=-1)
    return (img * 255).astype(np.uint8)


def main():
    os.makedirs(OUT, exist_ok=True)
    jpeg(os.path.join(OUT, "landscape.jpg"), landscape())
    png(os.path.join(OUT, "badge.png"), badge())
    png(os.path.join(OUT, "pattern.png"), pattern())
    # Stored sideways: rotate the upright portrait 90° anticlockwise; orientation 6 says
    # "rotate 90° clockwise to display", which restores it.
    jpeg(os.path.join(OUT, "rotated.jpg"), np.ascontiguousarray(np.rot90(portrait_with_arrow(), 1)), orientation=6)
    jpeg(os.path.join(OUT, "tall.jpg"), tall())
    for name in sorted(os.listdir(OUT)):
        print(f"{name:16} {os.path.getsize(os.path.join(OUT, name)):>8} bytes")


if __name__ == "__main__":
    sys.exit(main())
