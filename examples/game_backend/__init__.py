"""A reference game backend: the studio's side of DESIGN.md §11 (orders, grants, signed events), small
enough to read in one sitting, with switchable faults for the bot's integration tests and benches."""
