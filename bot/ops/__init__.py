"""Staff ops drafting (`/ops draft`): planner · worker · reflection over a typed state, with a hard
reflection cap (seed 002 §6) and a fresh model per step (seed 000)."""
