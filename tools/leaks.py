"""Find hidden-test text in notebook outputs, however a student's code encoded it.

Hidden tests run in the student's kernel, whose code can read and print them encoded; HideHiddenTests
(tools/nbgrader_plugins.py) withholds such outputs. ``fingerprints``: k-grams of the normalised hidden
text (lowercase, [a-z0-9]) less those of the rest of the notebook. k = 24, half an assert line:
unrelated texts share a 24-gram with probability ~36**-24, so a false positive needs a phrase shared
with the hidden tests yet absent from the notebook; a smaller k matches idioms ("assertisinstance")
and digit runs, a larger one misses short blocks and partial leaks; leaks under k (one expected
constant) are not found. ``views``: the decodings of a text (reversed, rot13, html, escapes, percent,
base64, urlsafe-base64, base32, base85, ascii85, hex, char codes, zlib/gzip/bz2/lzma), DEPTH steps
deep, under a work budget: a text over MAX_CHARS or over budget is TOO_BIG, withheld like a leak.
``leak`` names the shallowest decoding that holds a fingerprint ("zlib+base64": base64-decoded, then
inflated); ``output_text`` reads an output (PNG: text chunks, not pixels); ``leaking_window`` finds
outputs that leak only when joined (a leak split over prints or cells).
"""

from __future__ import annotations

import base64
import binascii
import bz2
import codecs
import functools
import html
import json
import lzma
import re
import time
import unicodedata
import urllib.parse
import zlib
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

K = 24  # fingerprint length, in normalised characters (see above)
SHORT = 12  # a whole hidden text this long is a fingerprint even when shorter than K
ANCHOR = 8  # _found() looks up one ANCHOR-gram every K - ANCHOR + 1 characters, then confirms
DEPTH = 3  # decoding steps, nested
MAX_CHARS = 1_000_000  # a longer text is not decoded: it is TOO_BIG (1 MB of ordinary text: 1-3 s)
BUDGET = 100_000_000  # units of work (characters scanned or decoded, weighted) per views() call
SECONDS = 10.0  # and a wall-clock bound on top, for pathological texts (a legit 1 MB: 1-3 s)
TOO_BIG = "too big to check"

_ALNUM, _SPACE = re.compile(r"[^a-z0-9]+"), re.compile(r"\s+")
_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)")
_ISLAND = re.compile(r"[\t\n\r\x20-\x7e]{16,}")  # printable runs: where the text decodings look
_B64 = re.compile(r"[A-Za-z0-9+/_-]{16,}")
_B32, _B32_CASE = re.compile(r"[A-Za-z2-7]{16,}"), re.compile(r"[A-Z2-7]{16,}|[a-z2-7]{16,}")
_B85, _A85 = re.compile(r"[0-9A-Za-z!#$%&()*+\-;<=>?@^_`{|}~]{20,}"), re.compile(r"[!-u]{20,}")
_HEX, _HEX_GAPS = re.compile(r"[0-9a-fA-F]{24,}"), re.compile(r"0[xX]|[\s,:;]+")
_B85_MARKS = dict.fromkeys(map(ord, "!#$%&()*+-;<=>?@^_`{|}~"), 0)  # translate() makes them NULs, to count
_B32_MARKS = dict.fromkeys(map(ord, "234567"), 0)
_A85_MARKS = dict.fromkeys(map(ord, "!\"#$%&'()*+,-./:;<=>?@[\\]^_`"), 0)
_INTS, _DIGITS = re.compile(r"(?:\d{1,7}[\s,;\[\]()]+){8,}\d{1,7}"), re.compile(r"\d+")
_ESC = re.compile(r"\\(?:x([0-9a-fA-F]{2})|u([0-9a-fA-F]{4})|U([0-9a-fA-F]{8})|([0-7]{1,3})|(.))", re.S)
_ESC_CHARS = {"n": "\n", "r": "\r", "t": "\t", "a": "\a", "b": "\b", "f": "\f", "v": "\v"}  # others: as is
_HTML, _TAG, _PCT = re.compile(r"<[A-Za-z/!]|&#?[0-9A-Za-z]+;"), re.compile(r"<[^>]*>"), re.compile(r"%[0-9a-fA-F]{2}")
_MAGIC = re.compile(rb"(?P<zlib>\x78[\x01\x5e\x9c\xda])|(?P<gzip>\x1f\x8b\x08)|(?P<bz2>BZh[1-9]1AY&SY)|"
                    rb"(?P<lzma>\xfd7zXZ\x00|\x5d\x00\x00)")
_UNPACKERS: dict[str, Callable[[], Any]] = {
    "zlib": lambda: zlib.decompressobj(15), "gzip": lambda: zlib.decompressobj(31),
    "bz2": bz2.BZ2Decompressor, "lzma": lzma.LZMADecompressor}


def normalise(text: str) -> str:
    """Lowercase ``text`` and keep only its ASCII letters and digits."""
    return _ALNUM.sub("", text.lower())


def fingerprints(hidden: str, visible: str, k: int = K) -> set[str]:
    """The k-grams of the normalised ``hidden`` text that the normalised ``visible`` text lacks."""
    secret = normalise(hidden)
    if len(secret) < k:
        return {secret} if len(secret) >= SHORT and secret not in normalise(visible) else set()
    grams = frozenset(secret[i : i + k] for i in range(len(secret) - k + 1))
    return set(grams - _found(normalise(visible), grams, first=False))


class _Budget:
    """Work left to one views() call; ``spend`` says whether there was enough."""

    def __init__(self) -> None:
        self.left, self.until, self.out = BUDGET, time.monotonic() + SECONDS, False

    def spend(self, units: int) -> bool:
        self.left -= units
        self.out = self.out or self.left < 0 or time.monotonic() > self.until
        return not self.out


@functools.lru_cache(maxsize=16)
def _tokens(pattern: re.Pattern[str], text: str) -> tuple[str, ...]:
    """Matches in ``text`` and in ``text`` without whitespace (an encoding wrapped by print)."""
    found = pattern.findall(text)
    compact = (_HEX_GAPS if pattern is _HEX else _SPACE).sub("", text)
    return tuple(dict.fromkeys(found + pattern.findall(compact) if compact != text else found))


def _radix(tokens: Iterable[str], unit: int, decode: Callable[[str], bytes], budget: _Budget, weight: int = 1,
           marks: dict[int, int] | None = None, pad: str = "") -> str:
    """Each token decoded from each of its ``unit`` alignments, by blocks (one that fails is skipped),
    the last one padded with ``pad`` or cut to whole units. With ``marks`` (characters frequent in
    this encoding, rare elsewhere), blocks with under 1 in 12 of them are skipped: not this encoding.
    """
    out, size = [], 64 * unit
    for token in tokens:
        keep = None
        if marks is not None:
            flags = token.translate(marks)
            keep = [flags.count("\x00", i, i + size + unit) * 12 >= size for i in range(0, len(token), size)]
            if not any(keep):
                continue
        if not budget.spend(weight * unit * len(token)):
            return ""
        for offset in range(unit):
            body, parts = token[offset:], []
            for n, i in enumerate(range(0, len(body), size)):
                block = body[i : i + size] if keep is None or keep[n] else ""
                for text in (block + pad * (-len(block) % unit), block[: len(block) - len(block) % unit], ""):
                    try:
                        parts.append(decode(text).decode("latin-1") if text else "\n")
                        break
                    except (ValueError, binascii.Error):
                        continue
            out.append("".join(parts))
    return "\n".join(out)


def _base64(text: str, budget: _Budget, urlsafe: bool) -> str:
    tokens = [t for t in _tokens(_B64, text) if urlsafe == ("-" in t or "_" in t)]
    return _radix([t.translate({45: "+", 95: "/"}) for t in tokens], 4, binascii.a2b_base64, budget, pad="=")


def _unpack(text: str, budget: _Budget) -> dict[str, str]:
    """Each compressed stream that starts somewhere in ``text`` (read as bytes), inflated (capped)."""
    if max(text, default="") > "\xff":
        return {}
    data, out = text.encode("latin-1"), dict[str, str]()
    for match in _MAGIC.finditer(data):
        if not budget.spend(4096):
            break
        try:
            found = _UNPACKERS[str(match.lastgroup)]().decompress(memoryview(data)[match.start() :], MAX_CHARS)
        except (zlib.error, OSError, EOFError, ValueError, lzma.LZMAError):
            continue
        budget.spend(len(found))
        out[str(match.lastgroup)] = out.get(str(match.lastgroup), "") + "\n" + found.decode("latin-1")
    return out


_TEXT_STEPS: dict[str, Callable[[str, _Budget], str]] = {
    "reversed": lambda t, b: t[::-1],
    "rot13": lambda t, b: codecs.encode(t, "rot13"),
    "html": lambda t, b: html.unescape(_TAG.sub("", t)) if _HTML.search(t) else "",
    "escapes": lambda t, b: _ESC.sub(lambda m: _ESC_CHARS.get(m[5], m[5]) if m[5] else chr(
        min(int(m[1] or m[2] or m[3] or m[4], 8 if m[4] else 16), 0x10FFFF)), t) if "\\" in t else "",
    "percent": lambda t, b: urllib.parse.unquote(t, encoding="latin-1") if _PCT.search(t) else "",
    "base64": lambda t, b: _base64(t, b, urlsafe=False),
    "urlsafe-base64": lambda t, b: _base64(t, b, urlsafe=True),
    "base32": lambda t, b: _radix([r for x in _tokens(_B32, t) for r in _B32_CASE.findall(x)], 8,
                                  lambda s: base64.b32decode(s, casefold=True), b, 8, _B32_MARKS, "="),
    "base85": lambda t, b: _radix(_tokens(_B85, t), 5, base64.b85decode, b, 8, _B85_MARKS),
    "ascii85": lambda t, b: _radix(_A85.findall(t), 5, base64.a85decode, b, 8, _A85_MARKS),  # not unwrapped
    "hex": lambda t, b: _radix(_tokens(_HEX, t), 2, bytes.fromhex, b),
    "char codes": lambda t, b: "\n".join("".join(chr(n) for n in map(int, _DIGITS.findall(r)) if n < 0x110000)
                                         for r in _INTS.findall(t)),
}
_SKIP = {"reversed": {"reversed", "rot13"}, "rot13": {"rot13"}, "char codes": {"rot13"}}  # step: after these


def _decodings(text: str, last: str, deeper: bool, budget: _Budget) -> Iterator[tuple[str, str]]:
    """(step, decoded) for each decoding of ``text`` that finds something, until the budget is spent."""
    islands = "\n".join(_ISLAND.findall(text.replace("\x00", "")))
    for step in _TEXT_STEPS if islands else ():
        if last in _SKIP.get(step, ()):
            continue
        if not budget.spend(len(islands)):
            return
        decoded = _TEXT_STEPS[step](islands, budget)
        if decoded and decoded not in (text, islands) and (not deeper or budget.spend(len(decoded))):
            yield step, decoded
    if budget.spend(len(text) // 8):
        yield from _unpack(text, budget).items()


def views(text: str) -> Iterator[tuple[str, str]]:
    """(encoding, decoded text): ``text`` as a reader sees it ("plain"), then its decodings, shallowest
    first; (TOO_BIG, "") ends a text over MAX_CHARS (not decoded) or one that spends the budget."""
    if len(text) > MAX_CHARS:
        yield TOO_BIG, ""
        return
    text, budget = _ANSI.sub("", text), _Budget()
    level = [("plain", text if text.isascii() else unicodedata.normalize("NFKC", text), "")]
    yield level[0][:2]
    for depth in range(DEPTH):
        deeper, found = depth + 1 < DEPTH, []
        for name, known, last in level:
            for step, decoded in _decodings(known, last, deeper, budget):
                yield (full := step if name == "plain" else f"{step}+{name}"), decoded
                found += [(full, decoded, step)] if deeper else []
            if budget.out:
                yield TOO_BIG, ""
                return
        level = found


@functools.lru_cache(maxsize=8)
def _index(prints: frozenset[str]) -> list[tuple[int, int, set[str], frozenset[str]]]:
    """For each fingerprint length: the length, anchor length, anchors and fingerprints."""
    index = []
    for length in {len(p) for p in prints}:
        same, a = frozenset(p for p in prints if len(p) == length), min(ANCHOR, length)
        index.append((length, a, {p[i : i + a] for p in same for i in range(length - a + 1)}, same))
    return index


def _found(norm: str, prints: frozenset[str], first: bool) -> set[str]:
    """The fingerprints that occur in the normalised text ``norm`` (with ``first``: the first found)."""
    found: set[str] = set()
    for length, a, anchors, same in _index(prints):
        for i in range(0, len(norm) - a + 1, length - a + 1):  # an occurrence covers one such i
            if norm[i : i + a] in anchors:
                found.update(g for q in range(max(0, i - length + a), i + 1) if (g := norm[q : q + length]) in same)
                if found and first:
                    return found
    return found


def leak(text: str, prints: set[str]) -> str | None:
    """The first encoding in which ``text`` holds a fingerprint (or TOO_BIG), else None."""
    frozen = frozenset(prints)
    for name, decoded in views(text) if frozen else ():
        if name == TOO_BIG or _found(normalise(decoded), frozen, first=True):
            return name
    return None


def _png_text(data: bytes) -> bytes:
    """A PNG less its pixel data (IDAT), compressed text chunks (zTXt, iTXt) inflated."""
    out, at = [], 8
    while at + 8 <= len(data):
        size, kind = int.from_bytes(data[at : at + 4], "big"), data[at + 4 : at + 8]
        body = data[at + 8 : at + 8 + size]
        out += [] if kind == b"IDAT" else [body]
        if kind in (b"zTXt", b"iTXt"):
            out.append(_unpack(body.decode("latin-1"), _Budget()).get("zlib", "").encode("latin-1"))
        at += size + 12
        if kind == b"IEND":
            break
    return b"\n".join([*out, data[at:]])


def _as_text(value: Any) -> str:
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return "".join(value)
    return value if isinstance(value, str) else json.dumps(value, default=str)


def output_text(output: Mapping[str, Any]) -> str:
    """All the text of one output: stream, error, data (a PNG: its chunks but pixels), metadata."""
    parts = [_as_text(output.get(key, "")) for key in ("text", "ename", "evalue")]
    parts += [_as_text(line) for line in output.get("traceback", [])]
    for mime, value in output.get("data", {}).items():
        if mime.startswith("image/") and not mime.endswith("+xml"):
            try:
                raw = binascii.a2b_base64(_as_text(value).encode("ascii", "ignore"))
            except binascii.Error:
                raw = _as_text(value).encode("utf-8")
            parts.append((_png_text(raw) if raw.startswith(b"\x89PNG\r\n\x1a\n") else raw).decode("latin-1"))
        else:
            parts += [mime, _as_text(value)]
    parts.append(_as_text(output["metadata"]) if output.get("metadata") else "")
    return "\n".join(p for p in parts if p)


def leaking_window(texts: list[str], prints: set[str]) -> tuple[int, int, str] | None:
    """(i, j, encoding): ``texts[i:j]`` leak joined (a shortest such run; windows of MAX_CHARS), or None."""
    def check(i: int, j: int) -> str | None:
        return leak("\n".join(texts[i:j]), prints)

    start, end = 0, 0
    while end < len(texts) and prints:
        end, size = start, 0
        while end < len(texts) and (end == start or size + len(texts[end]) < MAX_CHARS):
            size, end = size + len(texts[end]) + 1, end + 1
        if name := check(start, end):
            lo, hi = start + 1, end  # the first end that leaks ...
            while lo < hi:
                mid = (lo + hi) // 2
                lo, hi = (lo, mid) if check(start, mid) else (mid + 1, hi)
            first, last = start, lo  # ... then the last start that still leaks up to it
            while first < last - 1:
                mid = (first + last) // 2
                first, last = (mid, last) if check(mid, lo) else (first, mid)
            narrow = check(first, lo)
            return (first, lo, narrow) if narrow else (start, end, name)
        start = max(start + 1, (start + end) // 2)
    return None
