"""The support desk around the bot: a player's plain request for a person, staff hours."""
