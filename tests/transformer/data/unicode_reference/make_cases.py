# Writes the fixture that test_utf8.cpp and test_pre_tokenize.cpp read, from Python itself:
#   utf8_cases.json  byte strings (hand-picked: every boundary of UTF-8's table, truncated 2, 3 and
#                    4-byte sequences, lone continuation bytes, overlong forms, surrogates, code
#                    points above U+10FFFF, bytes F5..FF; and random ones, some of them valid UTF-8
#                    with a byte changed, dropped or cut off), each with what bytes.decode('utf-8',
#                    errors='replace') makes of it, encoded as UTF-8 again, and where the strict
#                    decoder's first error is ([start, end] of its UnicodeDecodeError, or []).
#                    Bytes are written in hex.
#   classes.json     code points by the class GPT-2's pattern gives them under the regex module
#                    (\p{L}, \p{N}, \s, or none of them: Other): every code point where the class
#                    changes, its neighbours, and random ones from all planes.
#
# Not run by the build. To regenerate (needs Python 3 and the regex module):
#   cd tests/transformer/data/unicode_reference && python3 make_cases.py
import json
import random

import regex

rng = random.Random(5)


def decoded(data):
    try:
        data.decode("utf-8")
        error = []
    except UnicodeDecodeError as e:
        error = [e.start, e.end]
    return {"bytes": data.hex(), "replaced": data.decode("utf-8", errors="replace").encode("utf-8").hex(),
            "error": error}


hand_picked = [
    b"", b"abc", "é".encode(), "日本".encode(), "😀".encode(),
    # The first and last code point of each row of UTF-8's table.
    b"\x00", b"\x7f", b"\xc2\x80", b"\xdf\xbf", b"\xe0\xa0\x80", b"\xe0\xbf\xbf", b"\xe1\x80\x80", b"\xec\xbf\xbf",
    b"\xed\x80\x80", b"\xed\x9f\xbf", b"\xee\x80\x80", b"\xef\xbf\xbf", b"\xf0\x90\x80\x80", b"\xf0\xbf\xbf\xbf",
    b"\xf1\x80\x80\x80", b"\xf3\xbf\xbf\xbf", b"\xf4\x80\x80\x80", b"\xf4\x8f\xbf\xbf",
    # Truncated sequences: at the end, before ASCII, before another lead byte.
    b"\xc3", b"\xe6\x97", b"\xe6", b"\xf0\x9f\x98", b"\xf0\x9f", b"\xf0", b"a\xc3", b"\xc3x", b"\xe6\x97x",
    b"\xf0\x9f\x98x", b"\xf0\x9f\x98\xc3\xa9", b"\xe6\x97\xe6\x97\xa5", b"\xc3\xc3\xa9",
    # Lone continuation bytes.
    b"\x80", b"\xbf", b"\x80\x80\x80", b"a\x80b", b"\xc3\xa9\xa9",
    # Overlong forms.
    b"\xc0\x80", b"\xc1\xbf", b"\xe0\x80\x80", b"\xe0\x9f\xbf", b"\xf0\x80\x80\x80", b"\xf0\x8f\xbf\xbf",
    b"\xc0\xaf", b"\xe0\x80\xaf",
    # Surrogates, alone and as a pair (CESU-8).
    b"\xed\xa0\x80", b"\xed\xbf\xbf", b"\xed\xa0\x80\xed\xb0\x80", b"\xed\xa0",
    # Above U+10FFFF and the bytes that never occur.
    b"\xf4\x90\x80\x80", b"\xf4\xbf\xbf\xbf", b"\xf5\x80\x80\x80", b"\xf7\xbf\xbf\xbf", b"\xf8\x88\x80\x80\x80",
    b"\xfc\x84\x80\x80\x80\x80", b"\xfe", b"\xff", b"\xfe\xff", b"\xf5", b"\xff\xfe\x00",
    # A valid 3-byte sequence with its last byte out of range, then valid text.
    b"\xe6\x97\x41\xc3\xa9", b"\xe6\x41\x97",
]


def random_code_point():
    plane = rng.choice([0x80, 0x800, 0x10000, 0x110000])
    while True:
        c = rng.randrange(plane)
        if not 0xD800 <= c <= 0xDFFF:
            return c


def random_cases():
    out = []
    for _ in range(150):  # bytes of every value, weighted toward the ones that start sequences
        out.append(bytes(rng.choice([rng.randrange(256), rng.randrange(0x80, 0xC0), rng.randrange(0xC0, 0x100),
                                     rng.randrange(0x20, 0x7F)]) for _ in range(rng.randrange(1, 12))))
    for _ in range(250):  # valid UTF-8 of all planes, then changed
        data = bytearray("".join(chr(random_code_point()) for _ in range(rng.randrange(1, 6))).encode())
        change = rng.randrange(4)
        if change == 0 and data:
            data[rng.randrange(len(data))] = rng.randrange(256)
        elif change == 1 and data:
            del data[rng.randrange(len(data))]
        elif change == 2:
            data = data[:rng.randrange(len(data) + 1)]
        out.append(bytes(data))
    return out


def classes():
    patterns = [("Letter", regex.compile(r"\p{L}")), ("Number", regex.compile(r"\p{N}")),
                ("Space", regex.compile(r"\s"))]

    def class_of(c):
        return next((name for name, p in patterns if p.fullmatch(chr(c))), "Other")

    every = [class_of(c) for c in range(0x110000)]
    picked = set(rng.randrange(0x110000) for _ in range(3000)) | set(range(0x100))
    for c in range(1, 0x110000):
        if every[c] != every[c - 1]:
            picked |= {c - 2, c - 1, c, c + 1}
    picked = sorted(c for c in picked if 0 <= c < 0x110000)
    out = {name: [] for name in ["Letter", "Number", "Space", "Other"]}
    for c in picked:
        out[every[c]].append(c)
    return out


cases = [decoded(b) for b in hand_picked + random_cases()]
with open("utf8_cases.json", "w") as f:
    f.write("[\n" + ",\n".join(json.dumps(c) for c in cases) + "\n]\n")
by_class = classes()
with open("classes.json", "w") as f:
    f.write("{\n" + ",\n".join(f'"{name}": {json.dumps(cps)}' for name, cps in by_class.items()) + "\n}\n")
print(len(cases), "byte strings,", sum(c["error"] != [] for c in cases), "not UTF-8;",
      ", ".join(f"{name} {len(cps)}" for name, cps in by_class.items()), "code points")
