"""`Prepared` binds a JSON column's value as the column type's own processor does: None as that
processor makes it (`null`, or SQL NULL for a `none_as_null` column), every other value serialized."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import JSON, Column, Integer, MetaData, Table
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Dialect

from bot.store.units import Prepared, insert_statement

TABLE = Table(
    "binds",
    MetaData(),
    Column("id", Integer, primary_key=True),
    Column("doc", JSON),
    Column("nullable_doc", JSON(none_as_null=True)),
)
DIALECTS = [sqlite.dialect(), postgresql.asyncpg.dialect()]


def _own(dialect: Dialect, column: str, value: Any) -> Any:
    process = TABLE.c[column].type.dialect_impl(dialect).bind_processor(dialect)
    return value if process is None else process(value)


@pytest.mark.parametrize("dialect", DIALECTS, ids=lambda d: d.name)
@pytest.mark.parametrize("value", [None, {"a": [1, "쿠폰"]}, [], "text", 0, JSON.NULL])
def test_a_json_value_is_bound_as_the_column_type_binds_it(dialect: Dialect, value: Any) -> None:
    prepared = Prepared(insert_statement(TABLE, ("doc", "nullable_doc")), dialect)
    for _ in range(2):  # the same value bound again (the first row's and every later one's)
        bound = prepared.args({"doc": value, "nullable_doc": value})
        assert list(bound) == [_own(dialect, "doc", value), _own(dialect, "nullable_doc", value)]
    if value is None:
        assert bound == ("null", None)  # none_as_null: SQL NULL, not the text `null`
