"""How the store reaches each database: the loop-thread SQLite connection, plain asyncpg connections,
and the SQLAlchemy engine. Only `bot.store` imports from here (an import-linter contract)."""
