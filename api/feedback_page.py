"""The rating page a link opens: the chosen rating, an optional comment and correct answer, one button.
No script; every value escaped; the answer itself only for a visitor signed in to the investigation's
tenant (a link alone reads nothing)."""

from __future__ import annotations

from api.pages import e, layout

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
        flash = (f'<p class="notice" role="status">Thank you: recorded as <strong>{e(LABELS.get(recorded, recorded))}'
                 "</strong>. Pressing again replaces your rating.</p>")
    if error:
        flash += f'<p class="error" role="alert">{e(error)}</p>'
    body = (
        "<h1>Rate Sleuth's answer</h1>"
        f'<p class="muted">Investigation <code>{e(investigation_id[:12])}</code>. Your rating is recorded only '
        "when you press the button.</p>"
        f"{flash}{shown}"
        f'<form method="post" action="{e(action)}" class="card">'
        f'<fieldset><legend>Was the answer right?</legend>{_choices(chosen)}</fieldset>'
        '<label for="comment">Comment (optional)</label>'
        '<textarea id="comment" name="comment" maxlength="2000" rows="3"></textarea>'
        '<label for="correct">The correct answer, if you know it (optional)</label>'
        '<textarea id="correct" name="correct_answer" maxlength="2000" rows="4"></textarea>'
        f'<input type="hidden" name="csrf" value="{e(csrf)}">'
        '<input type="submit" value="Record my rating"></form>'
    )
    return layout("Rate the answer", body, signed_in=False)


def refused_page(why: str) -> str:
    return layout("Link not valid", f"<h1>This rating link cannot be used</h1><p>{e(why)}</p>", signed_in=False)
