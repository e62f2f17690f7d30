"""The rating page a link opens: the chosen rating, an optional comment and correct answer, one button.
No script; every value escaped; the answer itself only for a visitor signed in to the investigation's
tenant (a link alone reads nothing)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from api.pages import e, layout
from storage.feedback_models import Feedback, Outcome

LABELS = {"helpful": "Helpful", "partly": "Partly right", "wrong": "Wrong"}


def _choices(chosen: str | None) -> str:
    return "".join(
        f'<label class="choice"><input type="radio" name="rating" value="{value}" required'
        f'{" checked" if value == chosen else ""}> {label}</label>' for value, label in LABELS.items())


def rating_page(*, action: str, csrf: str, chosen: str | None, investigation_id: str,
                answer: str | None = None, question: str | None = None, recorded: str | None = None,
                error: str | None = None) -> str:
    """The form (posting to `action`), or after a press the same form saying what was recorded."""
    shown = ""
    if question is not None:
        shown = (f'<section class="card"><h2>Question</h2><p>{e(question)}</p>'
                 f'<h2>Answer</h2><p>{e(answer or "(no answer)")}</p></section>')
    flash = ""
    if recorded:
        flash = (
            '<p class="notice" role="status">Thank you: recorded as '
            f'<strong>{e(LABELS.get(recorded, recorded))}'
            "</strong>. Pressing again replaces your rating.</p>"
        )
    if error:
        flash += f'<p class="error" role="alert">{e(error)}</p>'
    body = (
        "<h1>Rate Sleuth's answer</h1>"
        f'<p class="muted">Investigation <code>{e(investigation_id[:12])}</code>. Your rating is recorded '
        'only '
        "when you press the button.</p>"
        f"{flash}{shown}"
        f'<form method="post" action="{e(action)}" class="card">'
        f"<fieldset><legend>Was the answer right?</legend>{_choices(chosen)}</fieldset>"
        '<label for="comment">Comment (optional)</label>'
        '<textarea id="comment" name="comment" maxlength="2000" rows="3"></textarea>'
        '<label for="correct">The correct answer, if you know it (optional)</label>'
        '<textarea id="correct" name="correct_answer" maxlength="2000" rows="4"></textarea>'
        f'<input type="hidden" name="csrf" value="{e(csrf)}">'
        '<input type="submit" value="Record my rating"></form>'
    )
    return layout("Rate the answer", body, signed_in=False)


def refused_page(why: str) -> str:
    return layout(
        "Link not valid", f"<h1>This rating link cannot be used</h1><p>{e(why)}</p>", signed_in=False
    )


def ratings_section(
    ratings: Sequence[Feedback], links: Mapping[str, str] | None, outcome: Outcome | None
) -> str:
    """The trace page's "Ratings" card: the current rating of each rater (older ones struck through), the
    comment and correction escaped, what the agent did with the draft, and the three rating links."""
    items = []
    for row in reversed(ratings):
        cls = "" if row.current else ' class="muted"'
        said = "".join(f"<br><small>{label}: {e(text)}</small>" for label, text in
                       (("Comment", row.comment), ("Correct answer", row.correct_answer)) if text)
        text = f"<strong>{e(LABELS.get(row.rating, row.rating))}</strong>"
        if not row.current:
            text = f"<s>{text}</s>"
        items.append(f"<li{cls}>{text} by {e(row.rater)} via {e(row.source)}, "
                     f"{e(row.created_at.isoformat(sep=' ', timespec='minutes'))} UTC{said}</li>")
    listed = f"<ul>{''.join(items)}</ul>" if items else '<p class="muted">Not rated yet.</p>'
    used = ""
    if outcome is not None:
        ratio = f" ({outcome.edit_ratio:.0%} changed)" if outcome.edit_ratio is not None else ""
        reopened = "; the ticket reopened" if outcome.reopened else ""
        used = (f"<p>Draft on {e(outcome.helpdesk)} ticket {e(outcome.ticket_id)}: "
                f"<strong>{e(outcome.draft or 'no reply yet')}</strong>{e(ratio)}{e(reopened)}.</p>")
    rate = ""
    if links:
        rate = (
            "<p>Rate it: "
            + " · ".join(f'<a href="{e(links[k])}">{label}</a>' for k, label in LABELS.items())
            + "</p>"
        )
    return (f'<section class="card" id="ratings" aria-labelledby="ratings-h"><h2 id="ratings-h">Ratings</h2>'
            f"{listed}{used}{rate}</section>")
