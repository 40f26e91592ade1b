"""The second dense model embeds a chunk's text once: a rebuild embeds only what changed (issue 24)."""

from __future__ import annotations

import numpy as np

from bot.knowledge.second_dense import SecondDense


class Snapshot:
    def __init__(self, rows: dict[str, str]) -> None:
        self.ids = list(rows)
        self._rows = [({"title": "보상 정책", "section": cid}, text) for cid, text in rows.items()]

    def rows(self) -> list[tuple[dict[str, str], str]]:
        return self._rows

    def __len__(self) -> int:
        return len(self.ids)


class Recording:
    name = "recording-test-embedder"
    dim = 4

    def __init__(self) -> None:
        self.passages: list[str] = []

    def embed_passages(self, texts: list[str]) -> np.ndarray:
        self.passages.extend(texts)
        return np.asarray([[len(t), 1.0, 0.0, 0.0] for t in texts], dtype=np.float32)

    def embed_query(self, text: str) -> np.ndarray:
        return np.asarray([1.0, 0.0, 0.0, 0.0], dtype=np.float32)


def test_a_rebuild_embeds_only_new_or_changed_chunks_and_scores_stay_by_id() -> None:
    model = Recording()
    second = SecondDense(model)
    second.refresh(1, Snapshot({"a#1.0": "쿠폰은 하루 3장", "a#2.0": "유효 기간은 7일"}))
    assert len(model.passages) == 2
    second.refresh(2, Snapshot({"a#1.0": "쿠폰은 하루 3장", "a#2.0": "유효 기간은 14일", "a#3.0": "새 조항"}))
    assert [p.split("\n")[1] for p in model.passages[2:]] == ["유효 기간은 14일", "새 조항"]
    scores = second.scores("쿠폰")
    assert list(scores) == ["a#1.0", "a#2.0", "a#3.0"]
    assert scores["a#2.0"] == len("보상 정책 § a#2.0\n유효 기간은 14일")
    second.refresh(3, Snapshot({}))
    assert second.scores("쿠폰") == {}


class QueryRecording(Recording):
    def __init__(self) -> None:
        super().__init__()
        self.query_batches: list[list[str]] = []

    def embed_queries(self, texts: list[str]) -> np.ndarray:
        self.query_batches.append(list(texts))
        return np.asarray([[1.0, 0.0, 0.0, 0.0]] * len(texts), dtype=np.float32)


def test_a_batch_of_searches_embeds_its_new_queries_with_the_second_model_in_one_call() -> None:
    model = QueryRecording()
    second = SecondDense(model)
    second.warm_up_many(["쿠폰 한도", "daily limit", "쿠폰 한도"])
    assert model.query_batches == [["쿠폰 한도", "daily limit"]]
    second.warm_up_many(["daily limit", "이름 변경"])
    assert model.query_batches[1:] == [["이름 변경"]]  # the cached one is not embedded again
    second.warm_up("쿠폰 한도")
    second.query_vector("이름 변경")
    assert len(model.query_batches) == 2
