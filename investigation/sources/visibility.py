"""Who may see a helpdesk article, from the helpdesk's own access rules (docs/sources.md, "Visibility").

Zendesk Guide: an article without a user segment is for everyone (public); a segment of `staff`, or of
`signed_in_users` (Sleuth cannot tell which signed-in user asks), is internal. Freshdesk Solutions: a
folder visible to all users is public; logged-in users, agents, selected companies or segments → internal.
Tickets are always internal.
"""

from __future__ import annotations

from investigation.state import Visibility

# Freshdesk folder `visibility`: 1 all users, 2 logged-in users, 3 agents, 4 selected companies,
# 5 bots, 6 contact segments, 7 company segments.
FRESHDESK_PUBLIC_FOLDER = 1
# Freshdesk article `status`: 1 draft, 2 published.
FRESHDESK_PUBLISHED = 2


def zendesk_article(user_segment_id: object, segment_user_types: dict[int, str]) -> Visibility:
    """An article's visibility from its `user_segment_id` and the account's segments' `user_type`s; a segment
    that is not listed (deleted, or unreadable by the token) counts as restricted."""
    if user_segment_id is None:
        return Visibility.PUBLIC
    if isinstance(user_segment_id, int) and segment_user_types.get(user_segment_id) == "everyone":
        return Visibility.PUBLIC
    return Visibility.INTERNAL


def freshdesk_folder(visibility: object) -> Visibility:
    """A Freshdesk folder's `visibility` code → public only for "all users"."""
    return Visibility.PUBLIC if visibility == FRESHDESK_PUBLIC_FOLDER else Visibility.INTERNAL
