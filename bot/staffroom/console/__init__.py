"""The staff console in the browser under `/staff`: sign-in links, sessions, pages."""

from bot.staffroom.console.routes import install, staff_router

__all__ = ["install", "staff_router"]
