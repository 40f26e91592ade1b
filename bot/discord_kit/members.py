"""Who a Discord member is to the staff check, for every surface of the one client: the member's role
names, the actor they resolve to, and the refusal of a staff-only button to anyone else."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import discord

    from tools.base import Actor


def role_names(user: discord.abc.User) -> set[str]:
    """Names of the member's guild roles (none for a plain user, e.g. in a DM)."""
    roles = getattr(user, "roles", None) or []
    return {r.name for r in roles if not r.is_default()}


async def actor_of(interaction: discord.Interaction) -> Actor:
    """The actor who pressed a button or sent a modal (staff when they hold the staff role)."""
    conv = interaction.client.conversations  # type: ignore[attr-defined]
    user = interaction.user
    return await conv.resolve_actor(str(user.id), role_names(user), user.display_name)


async def refuse_staff_only(interaction: discord.Interaction, actor: Actor, name: str, channel: str) -> None:
    """Tell a non-staff presser the button is staff-only (ephemeral) and audit it like a refused
    staff command `/name` (`staff.denied`)."""
    conv = interaction.client.conversations  # type: ignore[attr-defined]
    await interaction.response.send_message(
        f"⛔ 이 버튼은 운영진({conv.staff_role}) 전용입니다. / This button is for staff ({conv.staff_role}) only.",
        ephemeral=True,
    )
    await conv.store.audit(
        actor=actor.label, action="staff.denied", thread_id=channel, target=f"/{name}", code="DENIED"
    )
