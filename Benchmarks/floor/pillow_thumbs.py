"""Pillow's contender in `make bench`: each source opened with `draft()` (JPEG DCT scaling to at
least the target size), then fitted (cover, Lanczos) into the four 150x150 formats' modes and
kept in memory as raw bytes, as the bake keeps raw pixels (Pillow has no 5-5-5 packer; the
third output is BGRX).

    python3 pillow_thumbs.py WxH [--draft-box WxH] FILE...

`--draft-box` gives draft() a larger box than the output (the bake's decode keeps twice the output
size for its resampler, as libvips does; draft() alone keeps as little as covers the output).
"""
import sys
from PIL import Image, ImageOps

width, height = map(int, sys.argv[1].split("x"))
files = sys.argv[2:]
draft = (width, height)
if files[:1] == ["--draft-box"]:
    draft = tuple(map(int, files[1].split("x")))
    files = files[2:]
for path in files:
    with Image.open(path) as image:
        image.draft("RGB", draft)
        fitted = ImageOps.fit(image.convert("RGB"), (width, height), Image.LANCZOS)
        outputs = [fitted.convert("RGBA").tobytes(), fitted.tobytes(), fitted.tobytes("raw", "BGRX"),
                   fitted.convert("L").tobytes()]
print(f"decoded {len(files)}")
