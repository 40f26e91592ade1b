"""The staff side of the Discord app: the staff cog (commands, handoff) and the incident cards."""
