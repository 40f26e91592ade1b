"""Where players talk to the bot on Discord: the answer surface, tickets, notices, link notices, the
staff-reply outbox and the players' buttons; the one client that hosts them is `bot.serving.discord_client`."""
