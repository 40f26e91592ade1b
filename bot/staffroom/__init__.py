"""Staff surfaces: where staff work (the Discord staff cog and incident cards, the staff web console)."""
