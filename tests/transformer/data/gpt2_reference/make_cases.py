# Writes the GPT-2 reference fixture that test_gpt2_reference.cpp reads: a small encoder.json and
# vocab.bpe in GPT-2's formats (the 256 byte characters in GPT-2's order, then merges learned from
# a random text of common English words, numbers, contractions, punctuation and runs of whitespace,
# and of words, digits, emoji, punctuation and spaces of other scripts (so that merges join the
# bytes of non-ASCII characters too), shuffled so that ranks differ from frequency order, then
# "<|endoftext|>"), and cases.json: texts, ASCII and not, with the pre-tokens GPT-2's pattern cuts
# them into and the ids GPT-2's algorithm gives them. The Encoder below follows OpenAI's
# gpt-2/src/encoder.py step for step (bytes_to_unicode, get_pairs, bpe, encode), with the same
# pattern run by Python's regex module: an implementation independent of the C++ one.
#
# Not run by the build. To regenerate (needs Python 3 and the regex module):
#   cd tests/transformer/data/gpt2_reference && python3 make_cases.py
import json
import random
from collections import Counter

import regex as re

# --- OpenAI gpt-2 src/encoder.py, step for step ---
def bytes_to_unicode():
    bs = list(range(ord("!"), ord("~")+1))+list(range(ord("¡"), ord("¬")+1))+list(range(ord("®"), ord("ÿ")+1))
    cs = bs[:]
    n = 0
    for b in range(2**8):
        if b not in bs:
            bs.append(b); cs.append(2**8+n); n += 1
    return dict(zip(bs, [chr(n) for n in cs]))
def get_pairs(word):
    pairs = set(); prev = word[0]
    for c in word[1:]:
        pairs.add((prev, c)); prev = c
    return pairs
class Encoder:
    def __init__(self, encoder, bpe_merges):
        self.encoder = encoder; self.byte_encoder = bytes_to_unicode()
        self.bpe_ranks = dict(zip(bpe_merges, range(len(bpe_merges))))
        self.pat = re.compile(r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+""")
    def bpe(self, token):
        word = tuple(token); pairs = get_pairs(word)
        if not pairs: return token
        while True:
            bigram = min(pairs, key=lambda p: self.bpe_ranks.get(p, float('inf')))
            if bigram not in self.bpe_ranks: break
            first, second = bigram; new_word = []; i = 0
            while i < len(word):
                try:
                    j = word.index(first, i); new_word.extend(word[i:j]); i = j
                except:
                    new_word.extend(word[i:]); break
                if word[i] == first and i < len(word)-1 and word[i+1] == second:
                    new_word.append(first+second); i += 2
                else:
                    new_word.append(word[i]); i += 1
            word = tuple(new_word)
            if len(word) == 1: break
            pairs = get_pairs(word)
        return ' '.join(word)
    def encode(self, text):
        out = []
        for token in re.findall(self.pat, text):
            token = ''.join(self.byte_encoder[b] for b in token.encode('utf-8'))
            out.extend(self.encoder[t] for t in self.bpe(token).split(' '))
        return out
# --- The fixture: merges (in byte characters) learned from a random text ---
be = bytes_to_unicode()
order = list(be.keys())  # GPT-2's order: printable first, then the moved bytes
random.seed(7)
words = "the of and to in is it that was he for on are as with his they I at be this have from or one had by word but not what all were we when your can said there use an each which she do how their if will up other about out many then them these so some her would make like him into time has look two more write go see number no way could people my than first water been call who oil its now find long down day did get come made may part".split()
def rand_text(k):
    parts = []
    for _ in range(k):
        r = random.random()
        if r < 0.7: parts.append(random.choice(words))
        elif r < 0.8: parts.append(str(random.randint(0, 99999)))
        elif r < 0.9: parts.append(random.choice(["'s", "'ll", "n't", "'re", "'M", "!", "?!", "...", ",", "--", "$", "(x)"]))
        else: parts.append(random.choice(["\n", "\n\n", "  ", "\t", "   ", " \r\n"]))
    return "".join(random.choice([" ", "", " "]) + p for p in parts)
# Beyond ASCII: words of other scripts, combining marks, numbers that are not 0-9, emoji (with skin
# tones, joined by U+200D, flags), punctuation, and every kind of space, with U+0085 and U+200D.
u_words = ["café", "naïve", "Zürich", "résumé", "l'été", "Straße", "日本語", "のテキスト", "東京", "한국어",
           "안녕하세요", "مرحبا", "العربية", "привет", "мир", "Ελληνικά", "עברית", "हिन्दी", "ไทย",
           "e\u0301", "cafe\u0301", "n\u0303o", "𝔘𝔫𝔦𝔠𝔬𝔡𝔢", "𠀀𠀁", "ǅ", "ꙮ"]
u_numbers = ["٣", "٤٥", "Ⅻ", "½", "²", "१२३", "０１２", "¾", "𝟙𝟚", "①"]
u_symbols = ["😀", "👍🏽", "👨‍👩‍👧‍👦", "🇫🇷", "🇯🇵", "❤️", "🙂", "«", "»", "—", "…", "¿", "¡", "。", "、",
             "“", "”", "’", "€", "£", "©", "\u200d", "\u200b", "\u180e", "\ufeff", "\ue000", "\U0010ffff"]
u_spaces = ["\u00a0", "\u2003", "\u3000", "\u0085", "\u2028", "\u202f", "\u1680", "\x1c", "\x1f",
            " \u00a0", "\u3000 ", "\r\n", "\t", " \t\u2003\n"]
u_contractions = ["'s", "'S", "'ll", "’s", "'t", "'"]
def rand_unicode_text(k, rng):
    parts = []
    for _ in range(k):
        r = rng.random()
        if r < 0.35: parts.append(rng.choice(u_words))
        elif r < 0.45: parts.append(rng.choice(words))
        elif r < 0.55: parts.append(rng.choice(u_numbers + [str(rng.randint(0, 999))]))
        elif r < 0.7: parts.append(rng.choice(u_symbols))
        elif r < 0.8: parts.append(rng.choice(u_contractions))
        else: parts.append(rng.choice(u_spaces))
    return "".join(rng.choice([" ", "", " ", "\u00a0"]) + p for p in parts)
# A character soup: single characters of every class drawn at random, so that classes meet in
# every order, with spaces of every kind between and around them.
u_characters = sorted(set("".join(u_words + u_numbers + u_symbols + u_spaces + u_contractions) + "aZ09 .'s"))
def rand_soup(k, rng):
    return "".join(rng.choice(u_characters) for _ in range(k))
urandom = random.Random(11)
pat = re.compile(r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+""")
corpus = rand_text(20000) + rand_unicode_text(6000, urandom)
wc = Counter(''.join(be[b] for b in t.encode()) for t in pat.findall(corpus))
vocab = [be[b] for b in order]
merges = []
wsplit = {w: list(w) for w in wc}
for _ in range(400):
    pc = Counter()
    for w, c in wc.items():
        s = wsplit[w]
        for a, b in zip(s, s[1:]): pc[(a, b)] += c
    if not pc: break
    (a, b), _ = max(pc.items(), key=lambda kv: (kv[1], kv[0]))
    merges.append((a, b))
    if a + b not in vocab: vocab.append(a + b)
    for w in wsplit:
        s = wsplit[w]; o = []; i = 0
        while i < len(s):
            if i + 1 < len(s) and s[i] == a and s[i+1] == b: o.append(a+b); i += 2
            else: o.append(s[i]); i += 1
        wsplit[w] = o
# Shuffled, so that ranks differ from frequency order (still a valid file).
random.shuffle(merges)
vocab.append("<|endoftext|>")
encoder = {t: i for i, t in enumerate(vocab)}
json.dump(encoder, open("encoder.json", "w"))
open("vocab.bpe", "w", encoding="utf-8").write("#version: 0.2\n" + "".join(f"{a} {b}\n" for a, b in merges))
enc = Encoder(encoder, merges)
texts = [
    "Hello world", "I'm don't we'll they've you're she'd it's", "I'M HERE", "a   b", "a\n\nb",
    "x  ", "abc123 456", "$100.00!!", " 's", "hi  !?", "\t x", "", " ", "1a", "!!'s", "a \n b",
    " the the  the   the", "\r\n\r\nthe end\r\n", "2024-11-25 07:51", "(x) -- y...",
]
texts += [rand_text(random.randint(1, 40)) for _ in range(60)]
texts += [
    "café", "naïve café in Zürich", "Zürich's café'll", "日本語のテキスト", "東京 日本語", "한국어 텍스트입니다",
    "مرحبا بالعالم", "Привет, мир!", "Ελληνικά κείμενα", "e\u0301 cafe\u0301 n\u0303", "\u0301alone",
    "😀", "👍🏽 👍", "👨‍👩‍👧‍👦 family", "🇫🇷🇯🇵 flags", "❤️❤️", "emoji😀in😀words",
    "٣ Ⅻ ½ x² ١٢٣", "١٢٣abc", "abc١٢٣", "Ⅻth ½½ ²³", " ٣", " ½", "१२३ ०",
    "a\u00a0b", "\u00a0word", " \u00a0x", "a\u2003b", "a \u2003b", "\u3000日本", "a \u3000 b", "x\u3000\u3000y",
    "x \t\u2003\n y", "\u2003\u2003 word", "word\u00a0", "\u00a0", "\u3000",
    "\r\n", "line1\r\nline2\r\n", "\r\n\r\n", "\ttabbed\t\ttext\t", "\t\t", "a\tb",
    "it's café's", "naïve'll", "日本's", "l'été", "’s curly", "don’t", "'S café", "é's", " 's é",
    "a\u0085b", "\u0085", "\u0085 x", "x \u0085", "\u200d", "x\u200dy", "\u200b", "a\u200bb", "\u180e x",
    "\x1c\x1d\x1e\x1f", "a\x1cb", "\u2028\u2029", "a\u2028b", "\u202f\u205f\u1680",
    "     ", "  leading and trailing  ", " \u00a0 ", "\u3000 \u3000",
    "«quoted» ¿Qué? ¡Sí!", "résumé—naïve…", "€100 £5 ¥", "𝔘𝔫𝔦𝔠𝔬𝔡𝔢 𝟙𝟚", "𠀀𠀁 ext B",
    "\ue000\U0010ffff\uffff", "\U000e0001tag", "ǅungla ꙮ",
]
texts += [rand_unicode_text(urandom.randint(1, 30), urandom) for _ in range(70)]
texts += [rand_soup(urandom.randint(1, 40), urandom) for _ in range(30)]
cases = [{"text": t, "pre_tokens": pat.findall(t), "ids": enc.encode(t)} for t in texts]
open("cases.json", "w").write("[\n" + ",\n".join(json.dumps(c) for c in cases) + "\n]\n")
print(len(vocab), "tokens,", len(merges), "merges,", len(cases), "cases")
