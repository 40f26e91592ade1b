"""policies/coupon_rules.yaml: the documented defaults, and a bad file refused with file, key and reason."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tools.coupon_rules import DEFAULT_RULES_PATH, CouponRules, CouponRulesError, load_coupon_rules


def test_the_shipped_file_holds_the_documented_numbers() -> None:
    raw = yaml.safe_load(DEFAULT_RULES_PATH.read_text(encoding="utf-8"))
    assert raw == {
        "eligible_statuses": ["delayed"],
        "min_amount": 1000,
        "max_amount": 20000,
        "amount_step": 1000,
        "one_active_per_order": True,
        "daily_max_count": 3,
        "daily_max_amount": 50000,
        "staff_max_amount": 100000,
        "valid_days": 30,
        "approval_threshold": None,
        "currency": "KRW",
    }
    assert load_coupon_rules() == CouponRules()


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "coupon_rules.yaml"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("text", "key", "reason"),
    [
        ("min_amount: 5000\nmax_amount: 1000\n", "max_amount", "must be ≥ min_amount"),
        ("max_amount: 200000\n", "staff_max_amount", "must be ≥ max_amount"),
        ("max_amount: lots\n", "max_amount", "valid integer"),
        ("min_amount: 0\n", "min_amount", "greater than 0"),
        ("eligible_statuses: [delayed, lost]\n", "eligible_statuses", "unknown order status 'lost'"),
        ("one_active_per_order: false\n", "one_active_per_order", "must be true"),
        ("approval_threshold: 500\n", "approval_threshold", "between min_amount and max_amount"),
        ("max_amout: 20000\n", "max_amout", "unknown key"),
        ("currency: USD\n", "currency", "only KRW"),
    ],
)
def test_invalid_file_is_refused_with_file_key_and_reason(
    tmp_path: Path, text: str, key: str, reason: str
) -> None:
    path = write(tmp_path, text)
    with pytest.raises(CouponRulesError) as info:
        load_coupon_rules(path)
    message = str(info.value)
    assert message.startswith(f"{path}: {key}: "), message
    assert reason in message


def test_max_below_min_reads_like_the_design_example(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "policies").mkdir()
    write(tmp_path / "policies", "min_amount: 5000\nmax_amount: 1000\n")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(
        CouponRulesError, match=r"^policies/coupon_rules\.yaml: max_amount: must be ≥ min_amount$"
    ):
        load_coupon_rules("policies/coupon_rules.yaml")


def test_unreadable_or_malformed_files_name_the_file(tmp_path: Path) -> None:
    with pytest.raises(CouponRulesError, match=r"missing\.yaml: cannot read"):
        load_coupon_rules(tmp_path / "missing.yaml")
    with pytest.raises(CouponRulesError, match=r"coupon_rules\.yaml: not valid YAML at line \d+"):
        load_coupon_rules(write(tmp_path, "min_amount: 1\nmax_amount: [\n"))
    with pytest.raises(CouponRulesError, match="must be a mapping"):
        load_coupon_rules(write(tmp_path, "- 1\n- 2\n"))


def test_partial_file_keeps_the_other_defaults(tmp_path: Path) -> None:
    rules = load_coupon_rules(write(tmp_path, "approval_threshold: 10000\n"))
    assert rules.approval_threshold == 10000 and rules.max_amount == 20000


def test_services_without_injected_rules_share_one_load_of_the_rules_file() -> None:
    from tools.base import ToolServices

    first, second = ToolServices(), ToolServices()
    assert first.coupon_rules == load_coupon_rules(DEFAULT_RULES_PATH)
    assert first.coupon_rules is second.coupon_rules  # read once per process, not once per call
