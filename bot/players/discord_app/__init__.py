"""The Discord app players talk to: one client, which also mounts the staff side (`bot.staffroom.discord_staff`)."""
