"""The reference game backend keeps the contract a studio implements from (DESIGN.md §11, the OpenAPI
document beside it): the same paths, methods and fields; grants applied once per key; its faults."""

from __future__ import annotations

from pathlib import Path

import httpx
import yaml

from examples.game_backend.app import Grant, Order, create_app
from tests.support.game_backend import TOKEN, GameBackend

OPENAPI = Path(__file__).resolve().parents[2] / "examples" / "game_backend" / "openapi.yaml"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
ORDER = {
    "id": "ORD001",
    "player_id": "P100",
    "status": "delayed",
    "item": "한정판 굿즈",
    "amount": 39000,
    "currency": "KRW",
    "ordered_at": "2026-03-01T10:00:00+09:00",
    "updated_at": "2026-03-02T09:00:00+09:00",
}
GRANT = {
    "grant_id": "g-1",
    "player_id": "P100",
    "order_id": "ORD001",
    "code": "ARCA-TEST-0001",
    "amount": 20000,
    "currency": "KRW",
    "reason": "배송 지연 보상",
    "expires_at": "2026-04-01T00:00:00+09:00",
}


def _document() -> dict:
    return yaml.safe_load(OPENAPI.read_text(encoding="utf-8"))


def test_the_openapi_document_names_exactly_the_reference_backends_routes() -> None:
    app_paths = create_app(token="t").openapi()["paths"]
    documented = {(path, method) for path, ops in _document()["paths"].items() for method in ops}
    served = {(path, method) for path, ops in app_paths.items() for method in ops}
    assert documented == served


def test_the_openapi_documents_fields_are_the_reference_backends_fields() -> None:
    schemas = _document()["components"]["schemas"]
    assert set(schemas["Order"]["required"]) == set(Order.model_fields) == set(ORDER)
    assert set(schemas["Grant"]["properties"]) == set(Grant.model_fields) == set(GRANT)
    assert schemas["Status"]["enum"] == [
        "paid",
        "preparing",
        "shipping",
        "delayed",
        "delivered",
        "cancelled",
        "refunded",
    ]


def test_orders_are_read_with_the_bearer_token_only(game_backend: GameBackend) -> None:
    game_backend.load(players=[{"id": "P100", "name": "루나"}], orders=[ORDER])
    with httpx.Client(base_url=game_backend.url) as client:
        assert client.get("/orders/ORD001").status_code == 401
        assert client.get("/orders/ORD001", headers={"Authorization": "Bearer wrong"}).status_code == 401
        assert client.get("/orders/ORD001", headers=AUTH).json() == ORDER
        assert client.get("/orders/ORD999", headers=AUTH).status_code == 404
        assert client.get("/players/P100/orders", headers=AUTH).json() == {"orders": [ORDER]}
        page = client.get("/orders", params={"status": "delayed", "limit": 1}, headers=AUTH).json()
        assert page == {"orders": [ORDER], "next_cursor": None}


def test_a_grant_is_applied_once_however_often_it_is_posted(game_backend: GameBackend) -> None:
    with httpx.Client(base_url=game_backend.url, headers=AUTH) as client:
        first = client.post("/grants", json=GRANT, headers={"Idempotency-Key": "g-1"})
        again = client.post("/grants", json=GRANT, headers={"Idempotency-Key": "g-1"})
        mismatched = client.post("/grants", json=GRANT, headers={"Idempotency-Key": "g-2"})
        revoked = client.post("/grants/g-1/revoke")
        unknown = client.post("/grants/nope/revoke")
    assert (first.status_code, again.status_code) == (201, 200)
    assert again.json() == {"grant_id": "g-1", "status": "granted"}
    assert mismatched.status_code == 422
    assert revoked.json() == {"grant_id": "g-1", "status": "revoked"}
    assert unknown.status_code == 404
    seen = game_backend.grants()
    assert [g["status"] for g in seen["grants"]] == ["revoked"]
    assert seen["repeats"] == 1


def test_faults_strike_the_requests_they_name_then_wear_off(game_backend: GameBackend) -> None:
    game_backend.load(orders=[ORDER])
    game_backend.faults(fail_next=1, rate_limit_next=1, retry_after_s=7, malformed_next=1, only="orders")
    with httpx.Client(base_url=game_backend.url, headers=AUTH) as client:
        limited = client.get("/orders/ORD001")
        failed = client.get("/orders/ORD001")
        malformed = client.get("/orders/ORD001")
        fine = client.get("/orders/ORD001")
        grant = client.post("/grants", json=GRANT, headers={"Idempotency-Key": "g-1"})
    assert (limited.status_code, limited.headers["Retry-After"]) == (429, "7")
    assert failed.status_code == 503
    assert malformed.status_code == 200 and malformed.text == "{not json"
    assert fine.json() == ORDER
    assert grant.status_code == 201  # `only: orders` spares the grants


def test_a_grant_dropped_after_commit_was_applied_and_its_retry_is_a_repeat(
    game_backend: GameBackend,
) -> None:
    game_backend.faults(drop_after_commit_next=1, hang_s=2)
    with httpx.Client(base_url=game_backend.url, headers=AUTH) as client:
        try:
            client.post("/grants", json=GRANT, headers={"Idempotency-Key": "g-1"}, timeout=0.3)
            raise AssertionError("the dropped answer arrived")
        except httpx.TimeoutException:
            pass
        retry = client.post("/grants", json=GRANT, headers={"Idempotency-Key": "g-1"})
    assert retry.status_code == 200
    assert len(game_backend.grants()["grants"]) == 1
