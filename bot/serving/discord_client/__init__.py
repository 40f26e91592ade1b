"""The one Discord client: players' messages and tickets, the staff cog and staff-channel posts, and the
persistent buttons of both rooms, started by `bot.serving.process`."""
