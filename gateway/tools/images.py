"""Images the model is shown (a Read of one, a command that printed one, a
notebook's plot): recognised by their bytes, checked whole, decoded under a
pixel limit, and made to fit what the API takes — the long edge at most
MAX_EDGE pixels, the bytes within RAW_BUDGET — by resizing and
re-encoding. A small image goes through byte for byte.

Pillow is imported only here, inside the functions that decode: a
``shellgate check`` or ``run`` never pays for it."""

from __future__ import annotations

import io
import threading
from typing import TYPE_CHECKING

from values import valueclass

from ..messages import ImageBlock

if TYPE_CHECKING:
    from PIL.Image import Image

#: magic bytes -> media type: images the model is shown as images
IMAGE_MAGIC = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
)

#: the longest edge sent (the reference's limit; the API scales down past it)
MAX_EDGE = 2000
#: the most bytes sent: 5,000,000 characters of base64, the API's per-image
#: limit — and the size above which the pipeline persists an image instead
RAW_BUDGET = 3_750_000
#: decoded size refused before any pixel is decoded: a 48 MP phone photo
#: passes; a 1 KB PNG that claims 50000x50000 (2.5 G pixels, 10 GB of
#: RGBA) is a decompression bomb, not a picture
MAX_PIXELS = 50_000_000
#: a progressive JPEG's scans at most: each scan is a pass over every block
#: of the image, and a scan can be 75 bytes. Reproducer: a 7000x7000 JPEG
#: with its first AC scan repeated 20,000 times (1.7 MB) kept a Read (or a
#: `cat` of it, or a notebook's plot) decoding for 84 s in the gateway; a
#: camera writes one scan, an encoder's progressive mode about ten
MAX_JPEG_SCANS = 100
#: images decoded at once in this process: a 188-byte WebP of 7000x7000
#: takes 850 MB to decode and resize, and ten parallel Reads of it (one
#: batch) took 8 GB. Past the slots a decode waits its turn
DECODE_SLOTS = 2
_DECODING = threading.BoundedSemaphore(DECODE_SLOTS)
#: the smallest long edge tried when an image will not fit RAW_BUDGET
_MIN_EDGE = 256
#: JPEG qualities tried, best first, when the kept format is too large
_QUALITIES = (85, 70, 55, 40)

#: the EXIF tag of an image's orientation, and its values that turn it
_ORIENTATION = 0x0112
_TURNED = range(2, 9)
_PILLOW_FORMAT = {"image/png": "PNG", "image/jpeg": "JPEG", "image/gif": "GIF",
                  "image/webp": "WEBP"}


def image_type(head: bytes) -> str | None:
    """The media type of an image that starts with ``head``, if it is one."""
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp"
    return next((media for magic, media in IMAGE_MAGIC if head.startswith(magic)), None)


def whole_image(data: bytes) -> str | None:
    """The media type of ``data`` when it is one whole image: the magic at
    the start and the format's end marker at the end. Reproducer (from a
    review): `printf '\\377\\330\\377'; echo text` was sent as a JPEG,
    the text lost and an image the API refuses put on the wire."""
    media = image_type(data)
    body = data.rstrip(b"\n")  # `cat plot.png; echo`
    ends = {
        "image/png": body.endswith(b"IEND\xaeB`\x82") and data[12:16] == b"IHDR",
        "image/jpeg": body.endswith(b"\xff\xd9"),
        "image/gif": body.endswith(b"\x3b"),
        "image/webp": int.from_bytes(data[4:8], "little") + 8 in (len(body), len(body) - 1),
    }
    return media if media is not None and ends.get(media, False) else None


@valueclass
class Fitted:
    """An image as the model is shown it, and what was done to it (empty:
    nothing, the original bytes)."""

    block: ImageBlock
    note: str = ""


class ImageProblem(Exception):
    """Why an image cannot be shown (decoded inside :func:`fit_image`,
    turned into the caller's one-line error)."""


def jpeg_scans(data: bytes) -> int:
    """How many scans a JPEG has, at least: every SOS marker is the bytes
    FF DA, which entropy-coded data never holds (its FF bytes are followed
    by 00), so counting them never undercounts (a thumbnail's add some)."""
    return data.count(b"\xff\xda")


def claimed_pixels(data: bytes, media: str) -> int | None:
    """The pixels the image's header claims (read from the header alone,
    nothing decoded); None when no header can be read."""
    try:
        with _open(data, media, max_pixels=1 << 62) as image:
            width, height = image.size
    except Exception:  # a header that does not parse: the decode will say so
        return None
    return width * height


def fit_image(data: bytes, media: str) -> Fitted | str:
    """``data`` (a whole image of type ``media``) made fit to show, or why
    it cannot be: too many pixels or scans, truncated, corrupt. Never
    raises."""
    if media == "image/jpeg" and jpeg_scans(data) > MAX_JPEG_SCANS:
        return (f"the {media} image has more than {MAX_JPEG_SCANS} scans (each one a pass "
                "over the whole image); it was not decoded (re-encode it with Bash)")
    try:
        with _DECODING:
            return _fit(data, media)
    except ImageProblem as problem:
        return str(problem)
    except Exception as exc:  # a decoder's failure on hostile bytes is data, not a crash
        return f"the {media} image cannot be decoded ({type(exc).__name__}: {str(exc)[:120]})"


def stdout_image(data: bytes) -> Fitted | None:
    """A command's output when it is one whole image that can be shown,
    made fit (Bash calls this on its stdout); None otherwise — the output
    is then binary or text, never an image the API would refuse."""
    media = whole_image(data)
    if media is None:
        return None
    fitted = fit_image(data, media)
    return fitted if isinstance(fitted, Fitted) else None


def _open(data: bytes, media: str, max_pixels: int = MAX_PIXELS) -> Image:
    from PIL import Image as pil  # noqa: PLC0415 -- heavy; only an image needs it
    from PIL import UnidentifiedImageError  # noqa: PLC0415

    try:
        # only the plugin the magic named: no other decoder gets to try
        image = pil.open(io.BytesIO(data), formats=[_PILLOW_FORMAT[media]])
    except pil.DecompressionBombError:
        raise ImageProblem(f"the {media} image claims more than {MAX_PIXELS:,} pixels "
                           "(a decompression bomb?); it was not decoded") from None
    except (UnidentifiedImageError, OSError, ValueError, SyntaxError) as exc:
        raise ImageProblem(f"the {media} image cannot be decoded: corrupt, or only its first "
                           f"bytes look like one ({type(exc).__name__})") from None
    width, height = image.size
    if width * height > max_pixels:
        raise ImageProblem(f"the {media} image is {width}x{height} pixels, over the "
                           f"{max_pixels:,} decoded here; it was not decoded (make a smaller "
                           "copy with Bash)")
    return image


def _fit(data: bytes, media: str) -> Fitted:
    image = _open(data, media)
    width, height = image.size
    animated = bool(getattr(image, "is_animated", False))
    long_edge = max(width, height)
    scale = min(1.0, MAX_EDGE / long_edge)
    if scale < 1.0 and media == "image/jpeg":
        # decode at 1/2, 1/4 or 1/8 scale when that still covers the target:
        # a 48 MP photo never takes its full size in memory
        image.draft(image.mode, (round(width * scale), round(height * scale)))
    try:
        image.load()  # the whole first frame: a truncated file fails here
    except OSError as exc:
        raise ImageProblem(f"the {media} image is truncated or corrupt ({exc})") from None
    if not animated and scale == 1.0 and len(data) <= RAW_BUDGET:
        return Fitted(ImageBlock(media, data))
    return _reencode(_oriented(image), media, (width, height), len(data), animated)


def _oriented(image: Image) -> Image:
    """Turned as its EXIF orientation says: the re-encoded copy has no EXIF,
    and a phone photo would otherwise lie on its side. Upright, the image
    itself: exif_transpose would copy it (200 MB more at the pixel limit)."""
    from PIL import ImageOps  # noqa: PLC0415

    if image.getexif().get(_ORIENTATION, 1) not in _TURNED:
        return image
    return ImageOps.exif_transpose(image)


def _reencode(image: Image, media: str, size: tuple[int, int], old_bytes: int,
              animated: bool) -> Fitted:
    """Resized to MAX_EDGE (or smaller, until the bytes fit) and encoded:
    in the image's own format where that fits, else as JPEG."""
    from PIL import Image as pil  # noqa: PLC0415

    keep = "PNG" if media == "image/gif" else _PILLOW_FORMAT[media]
    if image.mode not in ("RGB", "RGBA", "L"):
        # a palette resizes only by nearest neighbour; 16-bit, CMYK and the
        # rest have no encoder in every format tried
        alpha = image.mode in ("LA", "PA", "RGBa") or "transparency" in image.info
        image = image.convert("RGBA" if alpha else "RGB")
    edge = min(MAX_EDGE, max(size))
    while True:
        scale = edge / max(image.size)
        target = (max(1, round(image.width * scale)), max(1, round(image.height * scale)))
        resized = image if target == image.size else image.resize(
            target, pil.Resampling.LANCZOS, reducing_gap=3.0)
        for fmt, quality in ((keep, 85), *(("JPEG", q) for q in _QUALITIES)):
            blob = _encode(resized, fmt, quality)
            if len(blob) <= RAW_BUDGET:
                return Fitted(ImageBlock(f"image/{fmt.lower()}", blob),
                              _note(size, resized.size, old_bytes, len(blob), fmt, animated))
        if edge <= _MIN_EDGE:
            raise ImageProblem(f"the {media} image does not fit in {RAW_BUDGET:,} bytes even "
                               f"at {edge} pixels")
        edge = max(_MIN_EDGE, edge * 3 // 4)


def _encode(image: Image, fmt: str, quality: int) -> bytes:
    """``image`` (RGB, RGBA or L) encoded as ``fmt``."""
    out = io.BytesIO()
    if fmt == "JPEG":
        if image.mode == "RGBA":
            from PIL import Image as pil  # noqa: PLC0415

            # transparency becomes white, as a viewer shows it on a page
            flat = pil.new("RGB", image.size, "white")
            flat.paste(image, mask=image.getchannel("A"))
            image = flat
        image.save(out, "JPEG", quality=quality, optimize=True)
    elif fmt == "PNG":
        image.save(out, "PNG", optimize=True)
    else:
        image.save(out, fmt, quality=quality)
    return out.getvalue()


def _note(old: tuple[int, int], new: tuple[int, int], old_bytes: int, new_bytes: int,
          fmt: str, animated: bool) -> str:
    first = "the first frame of an animated image; " if animated else ""
    if old == new:
        return (f"[Image: {first}{old[0]}x{old[1]} pixels, re-encoded as {fmt} "
                f"({old_bytes:,} -> {new_bytes:,} bytes) to fit what the model is shown.]")
    return (f"[Image: {first}resized from {old[0]}x{old[1]} to {new[0]}x{new[1]} pixels "
            f"({old_bytes:,} -> {new_bytes:,} bytes, {fmt}) to fit what the model is shown.]")
