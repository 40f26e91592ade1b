"""Examples that stand beside the bot: what a studio writes on its side of the contracts."""
