"""SentencePiece-style (llama.cpp "llama" / SPM) tokenizer for kvscope-reasoner.

The vocabulary is learned with BPE on tinygsm training text; each merged token gets
score = -merge_rank, so llama.cpp's SPM rule (merge the adjacent pair whose concatenation is a
vocabulary token with the highest score, leftmost first) replays the merges. encode() below is a
re-implementation of llama.cpp's llm_tokenizer_spm and must give the same ids (checked with
compare_llamacpp.mjs).

Layout: 0 <unk> (type 2), 1 <s>, 2 </s> (type 3 control), 3..258 <0xNN> byte tokens (type 6),
then single characters, then the numbers 0..255 as single tokens (bare and with the space prefix,
so "has 17" is [▁has, ▁17]), optionally the statement markers "(1)".."(9)", then merges (type 1). No merge contains a digit. "\n" has no text token: it is <0x0A>.
"""
import collections
import json

SPACE = "\u2581"
UNK, BOS, EOS = 0, 1, 2
TYPE_NORMAL, TYPE_UNKNOWN, TYPE_CONTROL, TYPE_USER_DEFINED, TYPE_UNUSED, TYPE_BYTE = 1, 2, 3, 4, 5, 6
# The chat convention's tokens (ChatML markers as control tokens; the think block's tags as
# user-defined tokens, as Qwen3 ships them, so they show in decoded text).
CHAT_SPECIALS = (("<|im_start|>", TYPE_CONTROL), ("<|im_end|>", TYPE_CONTROL),
                 ("<think>", TYPE_USER_DEFINED), ("</think>", TYPE_USER_DEFINED))


def dedup(tokens, types):
    """llama.cpp requires distinct token texts. The single digits are both characters and numbers;
    the second copy becomes an unused placeholder (never produced by encode), keeping the ids."""
    seen = set()
    tokens, types = list(tokens), list(types)
    for i, t in enumerate(tokens):
        if t in seen:
            tokens[i], types[i] = "<unused:%d>" % i, TYPE_UNUSED
        seen.add(tokens[i])
    return tokens, types
BASE_CHAR_SCORE = -1e6


def escape(text, add_prefix):
    text = text.replace(" ", SPACE)
    return SPACE + text if add_prefix else text


def chunks(s):
    """Split escaped text before every SPACE and around newlines. No vocabulary token crosses
    these boundaries (tokens hold SPACE only first and never hold a newline), so SPM on the whole
    string equals SPM on each chunk."""
    out, cur = [], ""
    for ch in s:
        if ch == "\n":
            if cur:
                out.append(cur)
            out.append("\n")
            cur = ""
        elif ch == SPACE and cur:
            out.append(cur)
            cur = ch
        else:
            cur += ch
    if cur:
        out.append(cur)
    return out


def _allowed(tok):
    return not any(c.isdigit() for c in tok) and SPACE not in tok[1:] and "\n" not in tok


def train_vocab(texts, n_merges, max_number=255, n_markers=0):
    """texts: iterable of (text, add_prefix). Returns (tokens, scores, types).
    Numbers 0..max_number are single tokens, with and without the SPACE prefix ("17", "▁17");
    every prefix of their digit strings is itself a number, so SPM reaches them by any merge order.
    BPE merges never contain digits."""
    words = collections.Counter()
    chars = set(chr(c) for c in range(32, 127)) - {" "}
    chars.add(SPACE)
    for text, pre in texts:
        for w in chunks(escape(text, pre)):
            if w != "\n":
                words[w] += 1
                chars.update(w)
    chars = sorted(chars)
    # BPE over unique words.
    seqs = {w: list(w) for w in words}
    merges = []
    vocab_set = set(chars)
    while len(merges) < n_merges:
        pairs = collections.Counter()
        for w, f in words.items():
            s = seqs[w]
            for a, b in zip(s, s[1:]):
                if _allowed(a + b):
                    pairs[(a, b)] += f
        if not pairs:
            break
        # Deterministic: highest count, then lexicographic.
        (a, b), cnt = min(pairs.items(), key=lambda kv: (-kv[1], kv[0]))
        if cnt < 2:
            break
        new = a + b
        if new in vocab_set:  # same string reachable by another split; merge but do not re-add
            pass
        else:
            merges.append(new)
            vocab_set.add(new)
        for w in words:
            s = seqs[w]
            i, out = 0, []
            while i < len(s):
                if i + 1 < len(s) and s[i] == a and s[i + 1] == b:
                    out.append(new)
                    i += 2
                else:
                    out.append(s[i])
                    i += 1
            seqs[w] = out
    tokens = ["<unk>", "<s>", "</s>"] + ["<0x%02X>" % i for i in range(256)]
    scores = [0.0] * len(tokens)
    types = [TYPE_UNKNOWN, TYPE_CONTROL, TYPE_CONTROL] + [TYPE_BYTE] * 256
    for c in chars:
        tokens.append(c)
        scores.append(BASE_CHAR_SCORE)
        types.append(TYPE_NORMAL)
    for n in range(max_number + 1):
        for t in (str(n), SPACE + str(n)):
            tokens.append(t)
            scores.append(1000.0 - len(tokens) * 1e-3)
            types.append(TYPE_NORMAL)
    # Statement markers "(1)".."(9)" as single tokens (with and without the space prefix, through
    # their prefixes so SPM reaches them): the slow style copies statement k of the question after
    # writing "(k)", and one token to look up makes that copy an easy induction pattern.
    for k in range(1, n_markers + 1):
        for t in ("(%d" % k, "(%d)" % k, SPACE + "(%d" % k, SPACE + "(%d)" % k):
            tokens.append(t)
            scores.append(2000.0 - len(tokens) * 1e-3)
            types.append(TYPE_NORMAL)
    for r, m in enumerate(merges):
        tokens.append(m)
        scores.append(float(-r))
        types.append(TYPE_NORMAL)
    tokens, types = dedup(tokens, types)
    return tokens, scores, types


class Tokenizer:
    def __init__(self, tokens, scores, types):
        tokens, types = dedup(tokens, types)
        self.tokens, self.scores, self.types = tokens, list(scores), types
        self.id_of = {}
        for i, t in enumerate(self.tokens):
            if types[i] in (TYPE_NORMAL,):
                self.id_of.setdefault(t, i)
        self.byte_id = {i: self.tokens.index("<0x%02X>" % i) for i in range(256)}
        self._cache = {}
        # Texts that encode_special() turns into their token, longest first (as the C++ tokenizer
        # does with parse_special).
        self.special = sorted(((t, i) for i, t in enumerate(self.tokens) if types[i] in (TYPE_CONTROL, TYPE_USER_DEFINED)),
                              key=lambda ti: -len(ti[0]))

    def add_special(self, specials=CHAT_SPECIALS):
        """Append tokens (text, type) that are not in the vocabulary yet; returns how many."""
        n = 0
        for t, ty in specials:
            if t not in self.tokens:
                self.tokens.append(t)
                self.scores.append(0.0)
                self.types.append(ty)
                n += 1
        self.__init__(self.tokens, self.scores, self.types)
        return n

    def token_id(self, text):
        return self.tokens.index(text)

    def encode_special(self, text, first_prefix=True):
        """Encode with special-token texts parsed, as llama.cpp (and kvscope) do with parse_special:
        text fragments are encoded separately and each one after a special token (or the first, when
        first_prefix) gets the space prefix."""
        ids, after_special, pos, frag = [], first_prefix, 0, ""
        while pos < len(text):
            hit = next(((t, i) for t, i in self.special if text.startswith(t, pos)), None)
            if hit is None:
                frag += text[pos]
                pos += 1
                continue
            if frag:
                ids.extend(self.encode(frag, add_prefix=after_special))
                frag = ""
            ids.append(hit[1])
            after_special = True
            pos += len(hit[0])
        if frag:
            ids.extend(self.encode(frag, add_prefix=after_special))
        return ids

    @classmethod
    def load(cls, path):
        with open(path) as f:
            d = json.load(f)
        return cls(d["tokens"], d["scores"], d["types"])

    def save(self, path):
        with open(path, "w") as f:
            json.dump({"tokens": self.tokens, "scores": self.scores, "types": self.types}, f)

    def __len__(self):
        return len(self.tokens)

    def _spm_chunk(self, s):
        hit = self._cache.get(s)
        if hit is not None:
            return hit
        syms = list(s)
        while len(syms) > 1:
            best, best_i = None, -1
            for i in range(len(syms) - 1):
                t = self.id_of.get(syms[i] + syms[i + 1])
                if t is not None:
                    sc = self.scores[t]
                    if best is None or sc > best:
                        best, best_i = sc, i
            if best_i < 0:
                break
            syms[best_i:best_i + 2] = [syms[best_i] + syms[best_i + 1]]
        ids = []
        for sym in syms:
            t = self.id_of.get(sym)
            if t is not None:
                ids.append(t)
            else:
                ids.extend(self.byte_id[b] for b in sym.encode("utf-8"))
        self._cache[s] = ids
        return ids

    def encode(self, text, add_prefix=True, bos=False):
        ids = [BOS] if bos else []
        if not text:  # llama.cpp: empty text gives no tokens (no space prefix either)
            return ids
        for c in chunks(escape(text, add_prefix)):
            ids.extend(self._spm_chunk(c))
        return ids

    def decode(self, ids):
        out = bytearray()
        for i in ids:
            t = self.types[i]
            if t == TYPE_BYTE:
                out.append(int(self.tokens[i][3:5], 16))
            elif t in (TYPE_NORMAL, TYPE_USER_DEFINED):
                out.extend(self.tokens[i].replace(SPACE, " ").encode("utf-8"))
        return out.decode("utf-8", errors="replace")
