"""The assembly above both rooms: one process (`process`) that starts the one web server (`web`: the
players' widget and the staff console on one app) and the one Discord client (`discord_client`: the
players' channels, the staff commands and both rooms' buttons)."""
