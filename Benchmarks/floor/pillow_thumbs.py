"""Pillow's contender in `make bench`: each source opened with `draft()` (JPEG DCT scaling to at
least the target size), then fitted (cover, Lanczos) into the four 150x150 formats' modes and
kept in memory as raw bytes, as the bake keeps raw pixels (Pillow has no 5-5-5 packer; the
third output is BGRX).

    python3 pillow_thumbs.py WxH FILE...
"""
import sys
from PIL import Image, ImageOps

width, height = map(int, sys.argv[1].split("x"))
for path in sys.argv[2:]:
    with Image.open(path) as image:
        image.draft("RGB", (width, height))
        fitted = ImageOps.fit(image.convert("RGB"), (width, height), Image.LANCZOS)
        outputs = [fitted.convert("RGBA").tobytes(), fitted.tobytes(), fitted.tobytes("raw", "BGRX"),
                   fitted.convert("L").tobytes()]
print(f"decoded {len(sys.argv) - 2}")
