"""The staff console in the browser under `/staff` (issue 16): sign-in links, sessions, pages."""

from bot.channels.web.staff.routes import install, staff_router

__all__ = ["install", "staff_router"]
