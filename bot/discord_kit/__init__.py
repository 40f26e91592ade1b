"""What both rooms on the one Discord client share below them: who a member is to the staff check
(`members`) and telling a player's conversation something (`posting`)."""
