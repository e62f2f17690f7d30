"""Extractive synthesis: the sentences of the selected evidence that best answer the question, each cited,
or a refusal when no evidence supports the question.
"""

from __future__ import annotations

from collections.abc import Sequence

from investigation.citations import cite
from investigation.router import compared_entities
from investigation.state import Answer, Evidence, Grade, Route, RouteDecision
from investigation.sufficiency import covers, has_support
from investigation.text import content_stems, fold, split_sentences

REFUSAL = ("The answer is not in the knowledge base: no indexed document supports an answer to this "
           "question, so I will not guess.")
DIRECT_REPLY = ("Hello! I'm Sleuth. Ask me a question about your knowledge base and I will investigate it "
                "and answer with citations.")
_THANKS_REPLY = "You're welcome! Ask me anything about your knowledge base."


def direct_answer(question: str) -> Answer:
    """A friendly reply to a greeting or chit-chat, without retrieval or citations."""
    lowered = fold(question)
    text = _THANKS_REPLY if ("thank" in lowered or "thx" in lowered or "cheers" in lowered) else DIRECT_REPLY
    return Answer(text=text)


def refusal(reason: str = "") -> Answer:
    """The refusal answer ("not in the knowledge base"), with the reason as caveat."""
    return Answer(text=REFUSAL, refused=True, caveat=reason or "no supporting evidence")


def _sentence_scores(question: str, evidence: Sequence[Evidence]) -> list[tuple[float, int, str]]:
    """(score, evidence index, sentence) for every sentence, best first."""
    question_stems = content_stems(question)
    out: list[tuple[float, int, str]] = []
    for index, e in enumerate(evidence):
        grade_weight = {Grade.CORRECT: 1.0, Grade.AMBIGUOUS: 0.6, Grade.INCORRECT: 0.2}[e.grade]
        focus = question_stems | content_stems(e.query)
        for position, sentence in enumerate(split_sentences(e.text)):
            stems = content_stems(sentence)
            if not stems:
                continue
            agreement = len(stems & focus) / max(1, len(question_stems))
            novelty = len(stems - question_stems) / len(stems)  # an answer says something new
            score = grade_weight * (agreement + 0.2 * novelty + 0.1 * e.score) - 0.02 * position - 0.01 * index
            out.append((score, index, sentence))
    return sorted(out, key=lambda item: (-item[0], item[1], item[2]))


def synthesize_answer(question: str, route: RouteDecision, evidence: Sequence[Evidence],
                      max_sentences: int = 3) -> Answer:
    """An extractive, cited answer from `evidence` (already selected and compressed), or a refusal."""
    if route.route is Route.DIRECT:
        return direct_answer(question)
    if route.route is Route.OUT_OF_CORPUS or not has_support(question, evidence):
        return refusal("no evidence in the knowledge base agrees with the question")
    ranked = _sentence_scores(question, evidence)
    picked: list[tuple[int, str]] = []
    if route.route is Route.MULTI_PART:
        for name in compared_entities(question):
            for _score, index, sentence in ranked:
                if covers(name, evidence[index]) and (index, sentence) not in picked:
                    picked.append((index, sentence))
                    break
    for _score, index, sentence in ranked:
        if len(picked) >= max_sentences:
            break
        if all(index != i for i, _ in picked):
            picked.append((index, sentence))
    used = list(dict.fromkeys(index for index, _ in picked))
    citations = cite([evidence[i] for i in used])
    marker_of = {i: c.marker for i, c in zip(used, citations, strict=True)}
    lines = [f"{sentence.rstrip()} [{marker_of[index]}]" for index, sentence in picked]
    weak = not any(evidence[i].grade is Grade.CORRECT for i in used)
    return Answer(
        text="From the knowledge base:\n" + "\n".join(f"- {line}" for line in lines),
        citations=citations,
        caveat="the supporting evidence is weak; verify before relying on it" if weak else None,
    )
